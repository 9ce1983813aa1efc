// The avx2 build of the LSTM layer kernels (see learner/pqt/policy_kernels_impl.h).
#define Eigen ringrl_eigen_learner_avx2
#define RINGRL_POLICY_KERNELS_TABLE kPolicyKernelsAvx2
#define RINGRL_POLICY_KERNELS_ISA "avx2"
#include "learner/pqt/policy_kernels_impl.h"
