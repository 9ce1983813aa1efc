// The CPU kernels of one LSTM layer's training pass (spec brain_coder §5.1, TF1 BasicLSTMCell):
// the forward over all T steps, keeping what backpropagation through time needs, and that
// backward. learner/pqt/policy.cc wraps them in one autograd node per layer.
//
// Contract:
// * Plain float32 arrays, row-major, time-major: step t of a [T, N, X] array starts at
//   t * N * X. Gates are in TF order (i, j, f, o) in blocks of h columns.
// * forward: acts_t = act(pre_t + h_{t-1} kh) with sigmoid on i, f (+ forget_bias), o and tanh
//   on j; c_t = c_{t-1} f + i j; tc_t = tanh(c_t); h_t = o tc_t; h_{-1} = c_{-1} = 0. Writes
//   acts [T, N, 4h], cs, tcs and hs [T, N, h]. `scratch` holds 4 h^2 floats.
// * backward: from forward's arrays and dh_out = dL/dh_t [T, N, h], writes dg = dL/dpre
//   [T, N, 4h] (which is also dL/d(h_{t-1} kh)); the caller forms dL/dkh = sum_t h_{t-1}^T dg_t
//   as one GEMM. `scratch` holds 2 N h floats.
// * No allocation and no threads inside. Each instruction set has its own translation unit
//   (its own renamed Eigen); lstm_layer_kernels() picks the best one this CPU runs. Torch-free.
#pragma once

namespace ringrl::learner {

struct LstmLayerDims {
  int steps = 0;   // T
  int batch = 0;   // N
  int hidden = 0;  // h
};

struct LstmLayerKernels {
  void (*forward)(const LstmLayerDims& d, const float* pre, const float* kh, float forget_bias, float* acts,
                  float* cs, float* tcs, float* hs, float* scratch);
  void (*backward)(const LstmLayerDims& d, const float* kh, const float* acts, const float* cs, const float* tcs,
                   const float* dh_out, float* dg, float* scratch);
  const char* isa;
};

/// The best kernels for this CPU (AVX-512, AVX2+FMA or baseline x86-64), chosen once.
const LstmLayerKernels& lstm_layer_kernels();

namespace detail {
extern const LstmLayerKernels kLstmLayerKernelsGeneric;
extern const LstmLayerKernels kLstmLayerKernelsAvx2;
extern const LstmLayerKernels kLstmLayerKernelsAvx512;
}  // namespace detail

}  // namespace ringrl::learner
