// The avx512 build of the LSTM layer kernels (see learner/pqt/policy_kernels_impl.h).
#define Eigen ringrl_eigen_learner_avx512
#define RINGRL_POLICY_KERNELS_TABLE kPolicyKernelsAvx512
#define RINGRL_POLICY_KERNELS_ISA "avx512"
#include "learner/pqt/policy_kernels_impl.h"
