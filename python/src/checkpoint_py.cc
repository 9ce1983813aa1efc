// Checkpoint files for Python (ringrl._ringrl; wrapped by python/ringrl/checkpoint.py).
//
// checkpoint_info() is what `ringrl checkpoint show` verifies and lists: CheckpointReader
// checks magic, version, end record, checksum and section table before anything is decoded,
// then the algorithm, the format version, every section's payload bytes and the driver's "run"
// metadata. checkpoint_weights() decodes the networks of a "pqt" or "hiro" file with the
// names of their blob layouts (common/pqt/policy_layout.h, common/hiro/actor_blob.h), reading
// the learner state in the order that the torch-side writers put it:
//   pqt:  section "pqt": state version u32, npe, batches, dropped (u64), best reward (f64),
//         best code (string), solved (u8), solution (string), then PqtLearner::save(): tag
//         "RRLPQTS3", layout fingerprint u64, T i32, version u64, u64 count, per tensor u64
//         floats + float32 data in blob order.
//   hiro: section "hiro": state version u32 (1 or 2), steps, low, high, evals (u64), the last
//         HiroEvalRecord, best success and intrinsic (f64), per-actor u64 vector, (v2) stream
//         positions u64 vector, queued steps (u64 count, then u32 actor + byte vector each),
//         then HiroLearner::save(): magic "HIRO", version 1, rng u64, the low then the high
//         Td3Agent: magic "1TD3", version 1, i32 input, action, hidden1, hidden2, masked,
//         i64 counter, u64 rng, then per network (actor, critic1, critic2 and their targets)
//         fc1.weight, fc1.bias, fc2.weight, fc2.bias, out.weight, out.bias as u64 floats +
//         float32 data, then the Adam moments (u8 flag, i64 step, two tensors per parameter of
//         the actor, then of both critics); then the low and the high FIFO replay (read past,
//         their row counts returned), and nothing after them.
// A writer that changes these layouts must change this reader: python/tests/test_checkpoint.py
// trains tiny runs of both and loads them. Every decoding error is CorruptData naming the file
// and section, as the C++ readers word it.
#include <algorithm>
#include <cmath>
#include <array>
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
#include "common/hiro/eval_record.h"
#include "common/hiro/policy_file.h"
#include "common/hiro/state_format.h"
#include "common/pqt/state_format.h"
#include "common/pqt/policy_layout.h"
#include "envs/maze/factory.h"
#include "envs/maze/tasks.h"
#include "python/src/module.h"

namespace ringrl::python {
namespace {

namespace nb = nanobind;
namespace fs = std::filesystem;
using namespace nb::literals;

constexpr std::uint64_t kMaxRunMetaBytes = std::uint64_t{1} << 20;  // as `checkpoint show`
constexpr std::uint64_t kMaxCodeBytes = std::uint64_t{1} << 20;     // as the PQT wing
constexpr std::uint64_t kMaxActors = 256;                           // common/run_segment.h
constexpr std::uint64_t kMaxQueuedSteps = std::uint64_t{1} << 16;   // as the HIRO wing
constexpr std::uint64_t kMaxQueuedRecordBytes = std::uint64_t{1} << 20;
constexpr std::uint64_t kSkipChunkBytes = std::uint64_t{1} << 20;  // replay rows read per chunk
constexpr int kTd3ActorParams = 6;    // fc1, fc2, out: weight and bias
constexpr int kTd3CriticParams = 12;  // both critics

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

// One float32 tensor read as u64 count + data, checked against rows x cols.
nb::object read_tensor(ByteReader& r, const std::string& name, std::vector<std::size_t> shape) {
  std::size_t n = 1;
  for (std::size_t s : shape) n *= s;
  const auto count = r.get<std::uint64_t>();
  if (count != n) r.fail(fmt::format("tensor {} of {} values, expected {}", name, count, n));
  float* p = new float[n == 0 ? 1 : n];
  nb::capsule owner(p, [](void* q) noexcept { delete[] static_cast<float*>(q); });
  r.get_bytes(p, n * sizeof(float));
  return nb::cast(nb::ndarray<nb::numpy, float>(p, shape.size(), shape.data(), owner));
}

void read_pqt(CheckpointReader& in, const std::vector<int>& lstm_sizes, int embedding, nb::dict& out) {
  PolicyShape shape;
  shape.lstm_sizes = lstm_sizes;
  shape.embedding = embedding;
  const PolicyLayout layout(shape);
  ByteReader& r = in.section("pqt");
  r.expect(pqt_format::kStateVersion, "pqt state version");
  for (int k = 0; k < 3; ++k) r.get<std::uint64_t>();  // npe, batches, dropped
  r.get<double>();                                      // best reward
  r.get_string(kMaxCodeBytes);                          // best code
  r.get<std::uint8_t>();                                // solved
  r.get_string(kMaxCodeBytes);                          // solution
  char tag[sizeof pqt_format::kLearnerTag];
  r.get_bytes(tag, sizeof tag);
  if (std::memcmp(tag, pqt_format::kLearnerTag, sizeof tag) != 0) r.fail("not a PQT learner state (bad tag)");
  const auto fingerprint = r.get<std::uint64_t>();
  if (fingerprint != layout.fingerprint())
    r.fail(fmt::format("learner state has policy layout fingerprint {}, the shape from the run's config {} "
                       "(a different policy shape)",
                       fingerprint, layout.fingerprint()));
  r.get<std::int32_t>();  // T
  out["version"] = r.get<std::uint64_t>();
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

// One TD3 agent: its shape, then every network under `prefix` (actor under the blob layout's
// "<level>." names, the others as "<level>.<network>.").
void read_td3(ByteReader& r, const std::string& level, nb::dict& weights, nb::dict& shapes) {
  r.expect(hiro_format::kTd3Magic, "td3 agent magic");
  r.expect(hiro_format::kTd3Version, "td3 agent version");
  std::array<std::int32_t, 5> s{};
  for (auto& v : s) v = r.get<std::int32_t>();
  const auto [in, act, h1, h2, masked] = s;
  if (in < 1 || act < 1 || h1 < 1 || h2 < 1 || masked < 0 || masked > in)
    r.fail(fmt::format("td3 agent of shape (in {}, act {}, hidden {}-{}, masked {})", in, act, h1, h2, masked));
  r.get<std::int64_t>();   // update counter
  r.get<std::uint64_t>();  // rng
  nb::dict shape;
  shape["input_dim"] = in;
  shape["action_dim"] = act;
  shape["hidden1"] = h1;
  shape["hidden2"] = h2;
  shape["masked_inputs"] = masked;
  shapes[level.c_str()] = shape;
  const auto z = [](std::int32_t v) { return static_cast<std::size_t>(v); };
  for (const char* net : {"actor", "critic1", "critic2", "actor_target", "critic1_target", "critic2_target"}) {
    const bool actor = std::strncmp(net, "actor", 5) == 0;
    const std::string prefix = level + "." + (std::string(net) == "actor" ? "" : std::string(net) + ".");
    const std::size_t in1 = actor ? z(in) : z(in) + z(act);
    const std::size_t in2 = actor ? z(h1) : z(h1) + z(act);
    const std::size_t out = actor ? z(act) : 1;
    const std::pair<const char*, std::vector<std::size_t>> tensors[] = {
        {"fc1.weight", {z(h1), in1}}, {"fc1.bias", {z(h1)}}, {"fc2.weight", {z(h2), in2}},
        {"fc2.bias", {z(h2)}},        {"out.weight", {out, z(h2)}}, {"out.bias", {out}}};
    for (const auto& [name, dims] : tensors) weights[(prefix + name).c_str()] = read_tensor(r, prefix + name, dims);
  }
  // The actor's and the critics' Adam moments (not returned): per parameter a u8 flag, then
  // (flag 1) the i64 step and the two moments as u64 floats + data.
  std::vector<float> scratch;
  for (int k = 0; k < kTd3ActorParams + kTd3CriticParams; ++k) {
    const auto present = r.get<std::uint8_t>();
    if (present > 1) r.fail(fmt::format("Adam state flag {}", present));
    if (present == 0) continue;
    r.get<std::int64_t>();
    for (int moment = 0; moment < 2; ++moment) {
      const auto count = r.get<std::uint64_t>();
      if (count > r.remaining() / sizeof(float)) r.fail(fmt::format("Adam moment of {} values", count));
      scratch.resize(static_cast<std::size_t>(count));
      r.get_bytes(scratch.data(), scratch.size() * sizeof(float));
    }
  }
  // ZERO_OBS: the actor's input mask (the blob layout's input_mask), leading `masked` zeros.
  float* mask = new float[z(in)];
  for (std::int32_t k = 0; k < in; ++k) mask[k] = k < masked ? 0.0f : 1.0f;
  nb::capsule owner(mask, [](void* q) noexcept { delete[] static_cast<float*>(q); });
  const std::size_t dims[1] = {z(in)};
  weights[(level + ".input_mask").c_str()] = nb::cast(nb::ndarray<nb::numpy, float>(mask, 1, dims, owner));
}

// One FIFO replay (learner/td3/fifo_replay.cc): magic "FIFO", version 1, u64 capacity, i32
// row floats, u64 size, u64 added, then size rows of float32, read in bounded chunks and
// dropped. Returns the rows it held.
std::uint64_t skip_replay(ByteReader& r) {
  r.expect(hiro_format::kReplayMagic, "replay magic");
  r.expect(hiro_format::kReplayVersion, "replay version");
  const auto capacity = r.get<std::uint64_t>();
  const auto width = r.get<std::int32_t>();
  const auto size = r.get<std::uint64_t>();
  const auto added = r.get<std::uint64_t>();
  if (width < 1 || size > capacity || size != std::min(added, capacity))
    r.fail(fmt::format("replay holds {} rows of {} floats after {} adds, capacity {}", size, width, added, capacity));
  std::uint64_t left = size * static_cast<std::uint64_t>(width) * sizeof(float);
  if (left > r.remaining()) r.fail(fmt::format("replay rows need {} bytes, {} left", left, r.remaining()));
  std::vector<char> chunk(static_cast<std::size_t>(std::min<std::uint64_t>(left, kSkipChunkBytes)));
  while (left > 0) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
    r.get_bytes(chunk.data(), n);
    left -= n;
  }
  return size;
}

void read_hiro(CheckpointReader& in, nb::dict& out) {
  ByteReader& r = in.section("hiro");
  const auto version = r.get<std::uint32_t>();
  if (version != hiro_format::kStateVersion && version != hiro_format::kStateVersionNoStreams)
    r.fail(fmt::format("hiro state version {}, this build reads {} and {}", version, hiro_format::kStateVersionNoStreams,
                       hiro_format::kStateVersion));
  out["env_steps"] = r.get<std::uint64_t>();
  r.get<std::uint64_t>();  // low updates
  r.get<std::uint64_t>();  // high updates
  r.get<std::uint64_t>();  // evaluations
  r.get<hiro::HiroEvalRecord>();
  out["best_success"] = r.get<double>();
  r.get<double>();  // intrinsic reward
  r.get_vector<std::uint64_t>(kMaxActors);
  if (version == hiro_format::kStateVersion) r.get_vector<std::uint64_t>(kMaxActors);
  const auto queued = r.get<std::uint64_t>();
  if (queued > kMaxQueuedSteps) r.fail(fmt::format("{} queued steps, at most {}", queued, kMaxQueuedSteps));
  for (std::uint64_t k = 0; k < queued; ++k) {
    r.get<std::uint32_t>();
    r.get_vector<std::byte>(kMaxQueuedRecordBytes);
  }
  r.expect(hiro_format::kLearnerMagic, "hiro learner magic");
  r.expect(hiro_format::kLearnerVersion, "hiro learner version");
  r.get<std::uint64_t>();  // rng
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
