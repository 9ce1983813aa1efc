// The parts of the extension module ringrl._ringrl, one bind_* per source file
// (envs_py.cc, bf_py.cc, checkpoint_py.cc); module.cc calls them and maps ringrl's C++
// errors to Python exceptions with the same one-line message that `ringrl` prints:
//   UsageError (bad input or configuration)   -> ValueError
//   CorruptData (a damaged checkpoint or file) -> ringrl.CorruptDataError (a RuntimeError)
//   std::system_error (an OS failure)          -> OSError with errno
//   any other std::runtime_error               -> RuntimeError
#pragma once

#include <nanobind/nanobind.h>

namespace ringrl::python {

void bind_envs(nanobind::module_& m);
void bind_bf(nanobind::module_& m);
void bind_checkpoint(nanobind::module_& m);

}  // namespace ringrl::python
