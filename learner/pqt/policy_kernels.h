// The CPU kernels of the policy's training pass (spec brain_coder §5.1, §5.3):
// * an LSTM layer (TF1 BasicLSTMCell): the forward over all T steps, keeping what
//   backpropagation through time needs, and that backward. learner/pqt/policy.cc wraps them in
//   one autograd node per layer; learner/pqt/policy_pass.h calls them directly;
// * the head: log-softmax, the drawn token's log-probability and the entropy per position, and
//   the gradient of a loss that is linear in those two.
//
// Contract (LSTM layer):
// * Plain float32 arrays, row-major, time-major: step t of a [T, N, X] array starts at
//   t * N * X. Gates are in TF order (i, j, f, o) in blocks of h columns.
// * forward: acts_t = act(pre_t + bias + h_{t-1} kh) (bias [4h] may be null) with sigmoid on i, f (+ forget_bias), o and tanh
//   on j; c_t = c_{t-1} f + i j; tc_t = tanh(c_t); h_t = o tc_t; h_{-1} = c_{-1} = 0. Writes
//   acts [T, N, 4h], cs, tcs and hs [T, N, h]. `scratch` holds lstm_forward_scratch(h) floats.
// * backward: from forward's arrays and dh_out = dL/dh_t [T, N, h], writes dg = dL/dpre
//   [T, N, 4h] (which is also dL/d(h_{t-1} kh)); the caller forms dL/dkh = sum_t h_{t-1}^T dg_t
//   as one GEMM. Adds the sum of dg over the rows and steps to dbias [4h] unless it is null.
//   `scratch` holds lstm_backward_scratch(row_end - row_begin, h) floats.
// * Both work on the rows [row_begin, row_end) of every step and touch no other row, so
//   disjoint row ranges may run on different threads at once (the recurrence never mixes
//   rows); each call needs its own scratch.
// * No allocation and no threads inside. Each instruction set has its own translation unit
//   (its own renamed Eigen); policy_kernels() picks the best one this CPU runs. Torch-free.
//
// Contract (head), over P positions and V tokens, arrays [V, P] (a token's row is contiguous):
// * head_forward: with eos_masked, row 0 of z is first set to masked_logit (the EOS logit of
//   §5.1). Then lp = (z - max) - log(sum exp(z - max)) per position, alp[p] = lp[a_p, p] and
//   ent[p] = -sum_v exp(lc) lc with lc = max(lp, entropy_floor) (the floor keeps p log p at 0
//   beside the masked logit; it only touches values whose p is exactly 0 in float32).
// * head_backward: for a loss L with dL/dalp = ca and dL/dent = ce, writes
//   dz = ca (onehot(a) - softmax) - ce softmax (lc + ent), with row 0 zero when eos_masked (that
//   logit is a constant).
#pragma once

#include <vector>

namespace ringrl::learner {

struct LstmLayerDims {
  int steps = 0;   // T
  int batch = 0;   // N
  int hidden = 0;  // h
};

/// x rounded up to whole 16-float vectors (the width of the kernels' padded weight copies).
inline int padded16(int x) { return (x + 15) / 16 * 16; }
/// Scratch floats one forward call needs.
inline int lstm_forward_scratch(int hidden) { return hidden * padded16(4 * hidden) + 4 * hidden; }
/// Scratch floats one backward call over `rows` rows needs.
inline int lstm_backward_scratch(int rows, int hidden) { return 2 * rows * hidden + 4 * hidden * padded16(hidden); }

struct PolicyKernels {
  void (*forward)(const LstmLayerDims& d, int row_begin, int row_end, const float* pre, const float* kh,
                  const float* bias, float forget_bias, float* acts, float* cs, float* tcs, float* hs, float* scratch);
  void (*backward)(const LstmLayerDims& d, int row_begin, int row_end, const float* kh, const float* acts,
                   const float* cs, const float* tcs, const float* dh_out, float* dg, float* dbias, float* scratch);
  void (*head_forward)(int positions, int vocab, bool eos_masked, float masked_logit, float entropy_floor, float* z,
                       const int* actions, float* lp, float* alp, float* ent);
  void (*head_backward)(int positions, int vocab, bool eos_masked, float entropy_floor, const float* lp,
                        const int* actions, const float* ca, const float* ce, const float* ent, float* dz);
  const char* isa;
};

/// The best kernels for this CPU (AVX-512, AVX2+FMA or baseline x86-64), chosen once.
const PolicyKernels& policy_kernels();
/// Every build of the kernels this CPU runs, baseline first (for tests and benchmarks).
std::vector<const PolicyKernels*> available_policy_kernels();

namespace detail {
extern const PolicyKernels kPolicyKernelsGeneric;
extern const PolicyKernels kPolicyKernelsAvx2;
extern const PolicyKernels kPolicyKernelsAvx512;
}  // namespace detail

}  // namespace ringrl::learner
