#include "learner/threads.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

namespace ringrl::learner {

void set_torch_threads(int n) {
  at::set_num_threads(n);
  // The inter-op pool can be sized only once per process, before it is used.
  static const bool interop_set = [n] {
    try {
      at::set_num_interop_threads(n);
    } catch (...) {
      // Already started by someone else: keep its size.
    }
    return true;
  }();
  (void)interop_set;
}

void flush_subnormals() { at::globalContext().setFlushDenormal(true); }

}  // namespace ringrl::learner
