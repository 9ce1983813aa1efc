// MuJoCo 2.2.2 plumbing for the maze envs: RAII owners for mjModel / mjData, MJCF compilation
// from text through an in-memory VFS, a per-kind cache of shared immutable models, and the
// process-wide warning/error reporting.
//
// Thread rules: a compiled mjModel is immutable and shared read-only (const mjModel*) by all
// envs of its kind on any thread; each env owns one mjData and only its thread writes it.
// shared_model() and the diagnostics counters are thread-safe. MuJoCo's error and warning
// callbacks are process globals: install_mujoco_handlers() sets them once (any thread may
// call it; the first call wins). A MuJoCo error is logged (spdlog) and becomes a MujocoError
// exception; raised inside an env step (noexcept), it therefore ends the process after the
// message is logged. A warning is logged and counted (MuJoCo reports the first occurrence of
// each kind per mjData); all occurrences are in the per-mjData counters, see data_warnings().
// Lifetime: a shared model lives while any env (or cache user) holds it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

// Forward declarations matching <mujoco/mjmodel.h> / <mujoco/mjdata.h>, so that users of the
// maze envs do not need MuJoCo's include path.
struct mjModel_;
typedef struct mjModel_ mjModel;  // NOLINT(modernize-use-using): must match MuJoCo's typedef
struct mjData_;
typedef struct mjData_ mjData;  // NOLINT(modernize-use-using)

namespace ringrl::envs::maze {

/// A MuJoCo error: a model that does not compile, or an error raised inside the engine.
class MujocoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ModelDeleter {
  void operator()(mjModel* m) const noexcept;
};
struct DataDeleter {
  void operator()(mjData* d) const noexcept;
};
using ModelPtr = std::unique_ptr<mjModel, ModelDeleter>;
using DataPtr = std::unique_ptr<mjData, DataDeleter>;
using SharedModel = std::shared_ptr<const mjModel>;

/// Compiles MJCF text. `file_name` names the in-memory file (shown in messages).
/// Throws MujocoError with the compiler's message; counts compiler warnings.
ModelPtr compile_mjcf(const std::string& xml, const std::string& file_name);

/// One compiled model per `key` for the whole process: compiled on first use from
/// `make_xml()`, then shared. Recompiled only after every holder has let go.
SharedModel shared_model(const std::string& key, const std::function<std::string()>& make_xml);

/// New mjData for `m` (mj_makeData). Throws MujocoError when MuJoCo cannot allocate it.
DataPtr make_data(const mjModel& m);

/// Installs the process-wide MuJoCo error and warning callbacks (idempotent).
void install_mujoco_handlers();

/// Number of MuJoCo warnings reported through the callback since the process started.
std::int64_t mujoco_warning_count() noexcept;
/// The last MuJoCo warning or error message ("" if none).
std::string last_mujoco_message();

/// Total of the per-mjData warning counters (mjData::warning[*].number): how many times the
/// engine hit a warning condition (bad qpos/qvel/qacc, full contact or constraint lists,
/// singular inertia) since the last reset of this mjData.
int data_warnings(const mjData& d) noexcept;

}  // namespace ringrl::envs::maze
