// ringrl._ringrl: the extension module (see module.h for the error mapping).
#include <cerrno>
#include <system_error>

#include <Python.h>
#include <nanobind/nanobind.h>

#include "common/byte_codec.h"
#include "common/errors.h"
#include "common/runfiles/run_files.h"
#include "python/src/module.h"

namespace nb = nanobind;

NB_MODULE(_ringrl, m) {
  m.doc() = "ringrl's torch-free C++ (maze envs, BF machine, goal spaces, checkpoint reader); use the ringrl package";
  // One reference kept for the life of the process (the translator may run at any time).
  static PyObject* corrupt = PyErr_NewException("ringrl.CorruptDataError", PyExc_RuntimeError, nullptr);
  m.attr("CorruptDataError") = nb::borrow(corrupt);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ringrl::UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ringrl::CorruptData& e) {
      PyErr_SetString(corrupt, e.what());
    } catch (const std::system_error& e) {
      const int code = e.code().category() == std::generic_category() || e.code().category() == std::system_category()
                           ? e.code().value()
                           : EIO;
      nb::object err = nb::borrow(PyExc_OSError)(code, e.what());
      PyErr_SetObject(PyExc_OSError, err.ptr());
    }
  });
  // The names of a run directory's files, from the one header that spells them.
  namespace rf = ringrl::runfiles;
  nb::dict files;
  files["checkpoint"] = rf::kCheckpointFileName;
  files["config"] = rf::kResolvedConfigName;
  files["results"] = rf::kResultsFileName;
  files["solutions"] = rf::kSolutionsFileName;
  files["metrics"] = rf::kMetricsFileName;
  files["evals"] = rf::kEvalsFileName;
  files["eval_trajectory"] = rf::kEvalTrajectoryFileName;
  files["log"] = rf::kLogFileName;
  files["final_model_prefix"] = rf::kFinalModelPrefix;
  files["final_model_suffix"] = rf::kFinalModelSuffix;
  m.attr("run_files") = files;
  ringrl::python::bind_envs(m);
  ringrl::python::bind_bf(m);
  ringrl::python::bind_checkpoint(m);
}
