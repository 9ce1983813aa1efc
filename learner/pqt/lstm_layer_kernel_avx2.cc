// The avx2 build of the LSTM layer kernels (see learner/pqt/lstm_layer_kernel_impl.h).
#define Eigen ringrl_eigen_learner_avx2
#define RINGRL_LSTM_LAYER_KERNELS kLstmLayerKernelsAvx2
#define RINGRL_LSTM_LAYER_ISA "avx2"
#include "learner/pqt/lstm_layer_kernel_impl.h"
