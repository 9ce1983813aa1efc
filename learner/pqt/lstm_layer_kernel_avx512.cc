// The avx512 build of the LSTM layer kernels (see learner/pqt/lstm_layer_kernel_impl.h).
#define Eigen ringrl_eigen_learner_avx512
#define RINGRL_LSTM_LAYER_KERNELS kLstmLayerKernelsAvx512
#define RINGRL_LSTM_LAYER_ISA "avx512"
#include "learner/pqt/lstm_layer_kernel_impl.h"
