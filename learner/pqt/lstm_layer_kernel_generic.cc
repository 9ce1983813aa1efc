// The generic build of the LSTM layer kernels (see learner/pqt/lstm_layer_kernel_impl.h).
#define Eigen ringrl_eigen_learner_generic
#define RINGRL_LSTM_LAYER_KERNELS kLstmLayerKernelsGeneric
#define RINGRL_LSTM_LAYER_ISA "generic"
#include "learner/pqt/lstm_layer_kernel_impl.h"
