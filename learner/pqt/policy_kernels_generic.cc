// The generic build of the LSTM layer kernels (see learner/pqt/policy_kernels_impl.h).
#define Eigen ringrl_eigen_learner_generic
#define RINGRL_POLICY_KERNELS_TABLE kPolicyKernelsGeneric
#define RINGRL_POLICY_KERNELS_ISA "generic"
#include "learner/pqt/policy_kernels_impl.h"
