// The generic build of the sampling kernel (see actors/pqt/lstm_kernel_impl.h). Eigen is renamed so
// its instantiations here stay private to this translation unit's instruction set.
#define Eigen ringrl_eigen_generic
#define RINGRL_KERNEL_FACTORY make_kernel_generic
#include "actors/pqt/lstm_kernel_impl.h"
