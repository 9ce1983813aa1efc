// Checkpoint files for Python (ringrl._ringrl; wrapped by python/ringrl/checkpoint.py).
//
// checkpoint_info() is what `ringrl checkpoint show` verifies and lists: CheckpointReader
// checks magic, version, end record, checksum and section table before anything is decoded,
// then the algorithm, the format version, every section's payload bytes and the driver's "run"
// metadata. checkpoint_weights() decodes the networks of a "pqt" or "hiro" file with the
// names of their blob layouts (common/pqt/policy_layout.h, common/hiro/actor_blob.h), through
// the readers the learners load with (common/pqt/state_format.h, common/hiro/state_format.h,
// common/td3_state_format.h, common/float_block.h): the layouts have one definition, shared
// with the torch-side writers. Every decoding error is CorruptData naming the file and section, as the C++ readers word it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nlohmann/json.hpp>

#include "actors/hiro/hiro_policy.h"
#include "common/checkpoint.h"
#include "common/errors.h"
#include "common/float_block.h"
#include "common/hiro/eval_record.h"
#include "common/hiro/policy_file.h"
#include "common/hiro/state_format.h"
#include "common/pqt/state_format.h"
#include "common/pqt/policy_layout.h"
#include "common/td3_state_format.h"
#include "envs/maze/factory.h"
#include "envs/maze/tasks.h"
#include "python/src/module.h"

namespace ringrl::python {
namespace {

namespace nb = nanobind;
namespace fs = std::filesystem;
using namespace nb::literals;

constexpr std::uint64_t kMaxRunMetaBytes = std::uint64_t{1} << 20;  // as `checkpoint show`

// Opens and verifies `path` as `ringrl checkpoint show` does.
CheckpointReader open_checked(const std::string& path) {
  if (!fs::exists(path))
    throw std::system_error(ENOENT, std::generic_category(), fmt::format("checkpoint '{}'", path));
  if (!fs::is_regular_file(path))
    throw UsageError(fmt::format("checkpoint '{}' is not a file: expected a checkpoint.bin or model-rep<R>.ckpt", path));
  return CheckpointReader(path, "");
}

nb::dict info(const std::string& path) {
  CheckpointReader in = open_checked(path);
  nb::dict d;
  d["algorithm"] = in.algorithm();
  d["format_version"] = in.format_version();
  nb::list sections;
  for (const std::string& name : in.section_names()) sections.append(nb::make_tuple(name, in.section_bytes(name)));
  d["sections"] = sections;
  if (in.has_section("run")) d["run"] = in.section("run").get_string(kMaxRunMetaBytes);
  return d;
}

// One float block (common/float_block.h) of exactly the values `shape` holds, as a NumPy array.
nb::object read_tensor(ByteReader& r, const std::string& name, std::vector<std::size_t> shape) {
  std::size_t n = 1;
  for (std::size_t s : shape) n *= s;
  float* p = new float[n == 0 ? 1 : n];
  nb::capsule owner(p, [](void* q) noexcept { delete[] static_cast<float*>(q); });
  get_floats(r, p, n, "tensor " + name);
  return nb::cast(nb::ndarray<nb::numpy, float>(p, shape.size(), shape.data(), owner));
}

void read_pqt(CheckpointReader& in, const std::vector<int>& lstm_sizes, int embedding, nb::dict& out) {
  PolicyShape shape;
  shape.lstm_sizes = lstm_sizes;
  shape.embedding = embedding;
  const PolicyLayout layout(shape);
  ByteReader& r = in.section("pqt");
  pqt_format::read_section_head(r);
  const pqt_format::LearnerHead head = pqt_format::read_learner_head(r);
  if (head.fingerprint != layout.fingerprint())
    r.fail(fmt::format("learner state has policy layout fingerprint {}, the shape from the run's config {} "
                       "(a different policy shape)",
                       head.fingerprint, layout.fingerprint()));
  out["version"] = head.version;
  const auto count = r.get<std::uint64_t>();
  if (count != layout.tensors().size())
    r.fail(fmt::format("{} parameter tensors, the layout has {}", count, layout.tensors().size()));
  nb::dict weights;
  for (const PolicyTensorSpec& t : layout.tensors()) {
    std::vector<std::size_t> dims = t.rows == 1 && t.kind == PolicyTensorKind::kLstmBias
                                        ? std::vector<std::size_t>{static_cast<std::size_t>(t.cols)}
                                        : std::vector<std::size_t>{static_cast<std::size_t>(t.rows),
                                                                   static_cast<std::size_t>(t.cols)};
    weights[t.name.c_str()] = read_tensor(r, t.name, dims);
  }
  out["weights"] = weights;
}

// One TD3 agent: its shape, then every network (the actor under the blob layout's "<level>."
// names, the others as "<level>.<network>."); its Adam moments are read past.
void read_td3(ByteReader& r, const std::string& level, nb::dict& weights, nb::dict& shapes) {
  const td3_format::Td3Head h = td3_format::read_td3_head(r);
  nb::dict shape;
  shape["input_dim"] = h.input_dim;
  shape["action_dim"] = h.action_dim;
  shape["hidden1"] = h.hidden1;
  shape["hidden2"] = h.hidden2;
  shape["masked_inputs"] = h.masked_inputs;
  shapes[level.c_str()] = shape;
  for (const td3_format::TensorSpec& t : td3_format::td3_tensors(h)) {
    const std::string name = level + "." + (t.network == "actor" ? "" : t.network + ".") + t.name;
    weights[name.c_str()] = read_tensor(r, name, t.dims);
  }
  for (int k = 0; k < td3_format::kAdamEntries; ++k)
    if (td3_format::read_adam_step(r) > 0)
      for (const char* moment : {"Adam first moment", "Adam second moment"}) skip_floats(r, moment);
  // ZERO_OBS: the actor's input mask (the blob layout's input_mask), leading `masked` zeros.
  const auto in_dim = static_cast<std::size_t>(h.input_dim);
  float* mask = new float[in_dim];
  for (std::size_t k = 0; k < in_dim; ++k) mask[k] = static_cast<std::int32_t>(k) < h.masked_inputs ? 0.0f : 1.0f;
  nb::capsule owner(mask, [](void* q) noexcept { delete[] static_cast<float*>(q); });
  const std::size_t dims[1] = {in_dim};
  weights[(level + ".input_mask").c_str()] = nb::cast(nb::ndarray<nb::numpy, float>(mask, 1, dims, owner));
}

// One FIFO replay, read past; returns the rows it held.
std::uint64_t skip_replay(ByteReader& r) {
  const td3_format::ReplayHead h = td3_format::read_replay_head(r);
  r.skip(h.row_bytes());
  return h.size;
}

void read_hiro(CheckpointReader& in, nb::dict& out) {
  ByteReader& r = in.section("hiro");
  const hiro_format::SectionHead head = hiro_format::read_section_head(r);
  out["env_steps"] = head.env_steps;
  out["best_success"] = head.best_success;
  hiro_format::read_learner_head(r);
  nb::dict weights, shapes;
  read_td3(r, "low", weights, shapes);
  read_td3(r, "meta", weights, shapes);
  for (const char* level : {"low", "meta"}) {
    out[(std::string(level) + "_replay_rows").c_str()] = skip_replay(r);
  }
  r.expect_end();  // every byte accounted for: the offsets above are the writer's
  out["weights"] = weights;
  out["shapes"] = shapes;
}

// A float32 NumPy vector holding `v`.
nb::object float_array(const std::vector<float>& v) {
  float* p = new float[v.empty() ? 1 : v.size()];
  std::copy(v.begin(), v.end(), p);
  nb::capsule owner(p, [](void* q) noexcept { delete[] static_cast<float*>(q); });
  const std::size_t dims[1] = {v.size()};
  return nb::cast(nb::ndarray<nb::numpy, float>(p, 1, dims, owner));
}

// <level>.mid and <level>.half_range: each level's output box, the env's action box (low) and
// the goal box (meta), made from the run's env, training targets and goal space (its "run"
// metadata) with the env and goal-space code the learner's options come from. Left out when
// the run does not name them or the networks are not that env's.
void add_hiro_ranges(const nlohmann::json& run, nb::dict& weights) {
  if (!run.contains("env") || !run.contains("goal_space")) return;
  const std::string env = run["env"].get<std::string>();
  envs::maze::MazeEnvOptions options;
  const std::string targets = run.value("targets", std::string("single"));
  options.task_mode = targets == "multi" ? envs::maze::TaskMode::kMulti : envs::maze::TaskMode::kSingle;
  const envs::EnvSpec spec = envs::maze::maze_env_spec(env, options);
  const envs::Box full = envs::maze::maze_subgoal_box(env, options);
  const hiro::GoalSpace goals = hiro::make_goal_space(hiro::parse_goal_space(run["goal_space"].get<std::string>()),
                                                      spec.obs_dim, full.low, full.high, env);
  const std::pair<const char*, std::pair<const std::vector<float>*, const std::vector<float>*>> levels[] = {
      {"low", {&spec.action.low, &spec.action.high}}, {"meta", {&goals.low, &goals.high}}};
  for (const auto& [level, box] : levels) {
    const std::vector<float>& lo = *box.first;
    const std::vector<float>& hi = *box.second;
    const std::string out = std::string(level) + ".out.bias";
    if (!weights.contains(out.c_str())) return;
    const auto bias = nb::cast<nb::ndarray<const float, nb::numpy>>(weights[out.c_str()]);
    if (bias.ndim() != 1 || bias.shape(0) != lo.size()) return;  // not this env's networks: left out, not guessed
    std::vector<float> mid(lo.size()), half(lo.size());
    for (std::size_t j = 0; j < lo.size(); ++j) {
      mid[j] = (hi[j] + lo[j]) / 2.0f;
      half[j] = (hi[j] - lo[j]) / 2.0f;
    }
    weights[(std::string(level) + ".mid").c_str()] = float_array(mid);
    weights[(std::string(level) + ".half_range").c_str()] = float_array(half);
  }
}

// {"weights": {name: array}, ...} of a pqt or hiro checkpoint (verified first).
// lstm_sizes and embedding: the run's policy_lstm_sizes and obs_embedding_size; absent, the
// policy's own defaults (PolicyShape, the values of configs/pqt.json).
nb::dict weights(const std::string& path, std::optional<std::vector<int>> lstm_sizes, std::optional<int> embedding) {
  const PolicyShape defaults;
  if (!lstm_sizes) lstm_sizes = defaults.lstm_sizes;
  if (!embedding) embedding = defaults.embedding;
  CheckpointReader in = open_checked(path);
  nb::dict out;
  if (in.algorithm() == "pqt")
    read_pqt(in, *lstm_sizes, *embedding, out);
  else if (in.algorithm() == "hiro") {
    const nlohmann::json run =
        in.has_section("run") ? nlohmann::json::parse(in.section("run").get_string(kMaxRunMetaBytes), nullptr, false)
                              : nlohmann::json();
    read_hiro(in, out);
    if (run.is_object()) {
      nb::dict w = nb::cast<nb::dict>(out["weights"]);
      add_hiro_ranges(run, w);
    }
  } else
    throw UsageError(fmt::format("checkpoint {}: weights of algorithm '{}' are not decoded (pqt and hiro are)", path,
                                 in.algorithm()));
  return out;
}

// A policy file (common/hiro/policy_file.h): what it was exported with, and both networks'
// tensors under their actor-blob names ("meta.fc1.weight", ..., "low.half_range").
nb::dict policy_file(const std::string& path) {
  if (!std::filesystem::exists(path))
    throw std::system_error(ENOENT, std::generic_category(), fmt::format("policy file '{}'", path));
  const hiro::PolicyFile f = hiro::read_policy_file(path);
  const hiro::PolicyInfo& i = f.info;
  nb::dict out;
  out["env"] = i.env;
  out["task"] = envs::maze::task_mode_name(i.multi_target ? envs::maze::TaskMode::kMulti : envs::maze::TaskMode::kSingle);
  out["compact"] = i.compact;
  out["observe_block"] = i.observe_block;
  out["max_step"] = i.kinematic_max_step;
  out["goal_space"] = hiro::goal_space_name(i.goal_space);
  out["meta_period"] = i.meta_period;
  out["source"] = i.source;
  out["env_steps"] = i.env_steps;
  const hiro::ActorBlobLayout layout(i.shape);
  const auto* payload = reinterpret_cast<const float*>(f.blob.data() + sizeof(BlobHeader));
  nb::dict weights;
  for (const BlobTensor& t : layout.blob().tensors()) {
    const std::size_t n = t.numel();
    float* p = new float[n == 0 ? 1 : n];
    nb::capsule owner(p, [](void* q) noexcept { delete[] static_cast<float*>(q); });
    std::memcpy(p, payload + t.offset, n * sizeof(float));
    // 1-D tensors (rows == 1: biases, mask, mid, half_range) come back 1-D.
    std::vector<std::size_t> shape = t.rows == 1 ? std::vector<std::size_t>{static_cast<std::size_t>(t.cols)}
                                                 : std::vector<std::size_t>{static_cast<std::size_t>(t.rows),
                                                                            static_cast<std::size_t>(t.cols)};
    weights[t.name.c_str()] = nb::cast(nb::ndarray<nb::numpy, float>(p, shape.size(), shape.data(), owner));
  }
  out["weights"] = weights;
  return out;
}

// A policy file acting: actors/hiro/hiro_policy.h's HiroPolicy on the file's networks (the
// evaluator's step), so Python runs the same code as the evaluator and `env render --policy`.
class PyHiroPolicy {
 public:
  explicit PyHiroPolicy(const std::string& path)
      : file_(read(path)),
        options_(actors::policy_actor_options(file_.info)),
        spec_(envs::maze::maze_env_spec(options_.env, options_.env_options)),
        nets_(file_.info.shape),
        goals_(make_goals()),
        policy_(nets_, goals_, spec_.action, spec_.obs_dim, spec_.task.context_dim(), options_.meta_period) {
    std::string error;
    if (!nets_.load(file_.blob, &error)) throw CorruptData(fmt::format("policy file {}: {}", path, error));
  }

  nb::object act(const nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>& obs,
                 const nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>& target) {
    const auto need = [](const char* what, std::size_t got, int want) {
      if (got != static_cast<std::size_t>(want))
        throw UsageError(fmt::format("{} of {} floats, expected {}", what, got, want));
    };
    need("observation", obs.shape(0), spec_.obs_dim);
    need("target", target.shape(0), spec_.task.context_dim());
    for (std::size_t i = 0; i < obs.shape(0); ++i)
      if (!std::isfinite(obs.data()[i])) throw UsageError(fmt::format("observation[{}] is not finite", i));
    auto* a = new float[static_cast<std::size_t>(spec_.action_dim)];
    nb::capsule owner(a, [](void* q) noexcept { delete[] static_cast<float*>(q); });
    policy_.act(obs.data(), target.data(), a);
    const std::size_t shape[1] = {static_cast<std::size_t>(spec_.action_dim)};
    return nb::cast(nb::ndarray<nb::numpy, float>(a, 1, shape, owner));
  }
  void reset() { policy_.reset(); }
  std::vector<float> goal() const { return policy_.goal(); }
  int steps() const { return policy_.steps(); }

 private:
  static hiro::PolicyFile read(const std::string& path) {
    if (!std::filesystem::exists(path))
      throw std::system_error(ENOENT, std::generic_category(), fmt::format("policy file '{}'", path));
    return hiro::read_policy_file(path);
  }
  hiro::GoalSpace make_goals() const {
    const envs::Box full = envs::maze::maze_subgoal_box(options_.env, options_.env_options);
    return hiro::make_goal_space(options_.goal_space, spec_.obs_dim, full.low, full.high, options_.env);
  }

  hiro::PolicyFile file_;
  actors::HiroActorOptions options_;
  envs::EnvSpec spec_;
  actors::ActorNets nets_;
  hiro::GoalSpace goals_;
  actors::HiroPolicy policy_;  // borrows nets_
};

}  // namespace

void bind_checkpoint(nb::module_& m) {
  nb::class_<PyHiroPolicy>(m, "HiroPolicy")
      .def(nb::init<const std::string&>(), "path"_a)
      .def("act", &PyHiroPolicy::act, "observation"_a, "target"_a)
      .def("reset", &PyHiroPolicy::reset)
      .def_prop_ro("goal", &PyHiroPolicy::goal)
      .def_prop_ro("steps", &PyHiroPolicy::steps);
  m.def("policy_file", &policy_file, "path"_a, "Verifies a HIRO policy file; its settings and both networks.");
  m.def("checkpoint_info", &info, "path"_a, "Verifies the file; algorithm, format_version, sections, run.");
  m.def("checkpoint_weights", &weights, "path"_a, "lstm_sizes"_a = nb::none(), "embedding"_a = nb::none(),
        "Verifies the file and decodes its networks under their layout names.");
}

}  // namespace ringrl::python
