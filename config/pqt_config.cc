#include "config/pqt_config.h"

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "common/errors.h"
#include "common/run_segment.h"
#include "common/runfiles/config.h"

namespace ringrl::config {
namespace {

using runfiles::get;

constexpr std::uint64_t kIntMax = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
constexpr std::uint64_t kU32Max = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kMaxLearnerThreads = 256;

// Every unsigned integer setting of configs/pqt.json and the whole numbers it accepts. The
// --set overrides, the resolved file and every getter below go through this one table, so a
// negative value, a fraction or an overflow is refused before anything starts.
const runfiles::UnsignedKeys& unsigned_keys() {
  static const runfiles::UnsignedKeys keys = {
      {"batch_size", 1, kIntMax},      {"timestep_limit", 1, kIntMax},     {"topk", 0, kIntMax},
      {"topk_batch_size", 0, kIntMax}, {"obs_embedding_size", 1, kIntMax}, {"replay_capacity", 0, kU64Max},
      {"max_npe", 0, kU64Max},  // 0 = unlimited
      {"actors", 1, kMaxActors},       {"max_lag", 0, kU32Max},     {"seed", 0, kU64Max},
      {"repetitions", 1, kU32Max},     {"learner_threads", 0, kMaxLearnerThreads},
      {"batches_per_update", 1, kIntMax},
      {"max_policy_lag", 0, kU32Max},  // run directories from before max_lag
  };
  return keys;
}

// The unsigned setting `key` (one of unsigned_keys()) as T.
template <class T>
T get_count(const nlohmann::json& cfg, std::string_view key) {
  return runfiles::get_listed_unsigned<T>(cfg, unsigned_keys(), key, "pqt config");
}

PolicyShape shape_from(const nlohmann::json& cfg) {
  PolicyShape s;
  s.embedding = get_count<int>(cfg, "obs_embedding_size");
  s.lstm_sizes = get<std::vector<int>>(cfg, "policy_lstm_sizes");
  s.validate();
  return s;
}

bf::ScoreOptions score_from(const nlohmann::json& cfg) {
  bf::ScoreOptions so = bf::ScoreOptions::for_variant(bf::parse_variant(get<std::string>(cfg, "variant")));
  so.max_code_length = get_count<int>(cfg, "timestep_limit");
  so.correct_bonus = get<double>(cfg, "correct_bonus");
  so.code_length_bonus = get<double>(cfg, "code_length_bonus");
  return so;
}

std::string require_task(const nlohmann::json& cfg) {
  const std::string task = get<std::string>(cfg, "task");
  if (task.empty()) throw UsageError("no task given: expected --task NAME (see `ringrl bf tasks`)");
  return task;
}

}  // namespace

std::uint32_t learner_threads_from(const nlohmann::json& cfg) {
  // Absent in run directories from before the key: auto.
  return runfiles::has(cfg, "learner_threads") ? get_count<std::uint32_t>(cfg, "learner_threads") : 0;
}

std::string config_dir() {
  if (const char* d = std::getenv("RINGRL_CONFIG_DIR"); d != nullptr && *d != '\0') return d;
  return RINGRL_DEFAULT_CONFIG_DIR;
}

nlohmann::json resolve_pqt_config(const std::string& file, const std::string& mode,
                                  const std::vector<std::string>& overrides) {
  nlohmann::json cfg = runfiles::load_config(file.empty() ? config_dir() + "/pqt.json" : file);
  runfiles::check_unsigned(cfg, unsigned_keys());  // the file as written, before a preset hides a value
  if (!mode.empty()) runfiles::apply_preset(cfg, mode);
  runfiles::apply_overrides(cfg, overrides, unsigned_keys());
  runfiles::check_unsigned(cfg, unsigned_keys());
  return cfg;
}

learner::LearnerOptions learner_options_from(const nlohmann::json& cfg) {
  learner::LearnerOptions l;
  l.shape = shape_from(cfg);
  l.batch_size = get_count<int>(cfg, "batch_size");
  l.max_len = get_count<int>(cfg, "timestep_limit");
  l.eos_token = get<bool>(cfg, "eos_token");
  l.mode = learner::parse_train_mode(get<std::string>(cfg, "mode"));
  l.lr = get<double>(cfg, "lr");
  l.entropy_beta = get<double>(cfg, "entropy_beta");
  l.pi_loss_hparam = get<double>(cfg, "pi_loss_hparam");
  l.topk_loss_hparam = get<double>(cfg, "topk_loss_hparam");
  l.topk = get_count<int>(cfg, "topk");
  l.topk_batch_size = get_count<int>(cfg, "topk_batch_size");
  l.grad_clip = get<double>(cfg, "grad_clip_threshold");
  l.param_init_factor = get<double>(cfg, "param_init_factor");
  l.ema_baseline_decay = get<double>(cfg, "ema_baseline_decay");
  l.device = get<std::string>(cfg, "device");
  // Absent in run directories from before the key: 1.
  if (runfiles::has(cfg, "batches_per_update")) l.batches_per_update = get_count<int>(cfg, "batches_per_update");
  // Absent in run directories from before the key: auto.
  if (runfiles::has(cfg, "policy_kernel")) l.policy_kernel = learner::parse_policy_kernel(get<std::string>(cfg, "policy_kernel"));
  l.seed = get_count<std::uint64_t>(cfg, "seed");
  l.alpha = get<double>(cfg, "alpha");
  l.replay_temperature = get<double>(cfg, "replay_temperature");
  l.iw_normalize = get<bool>(cfg, "iw_normalize");
  l.replay_capacity = get_count<std::uint64_t>(cfg, "replay_capacity");
  if (l.ema_baseline_decay == 0.0)
    throw UsageError(
        "ema_baseline_decay=0 selects the A2C value network, which this trainer does not provide: expected (0, 1)");
  l.validate();
  return l;
}

learner::PqtTrainOptions train_options_from(const nlohmann::json& cfg) {
  learner::PqtTrainOptions t;
  t.learner = learner_options_from(cfg);
  t.task = require_task(cfg);
  t.variant = get<std::string>(cfg, "variant");
  t.actors = get_count<std::uint32_t>(cfg, "actors");
  t.max_npe = get_count<std::uint64_t>(cfg, "max_npe");
  t.repetitions = get_count<std::uint32_t>(cfg, "repetitions");
  t.stop_on_success = get<bool>(cfg, "stop_on_success");
  // A run directory from before max_lag had no work gate and kept episodes past
  // max_policy_lag out of PG steps; its --resume gates at that lag, wider than its rings.
  t.max_lag = runfiles::has(cfg, "max_lag") ? get_count<std::uint32_t>(cfg, "max_lag")
                                            : get_count<std::uint32_t>(cfg, "max_policy_lag");
  t.pace = learner::parse_pace(get<std::string>(cfg, "pace"));
  // A run directory from before the key existed offered every program on arrival; its
  // --resume goes on that way.
  t.queue_offer = runfiles::has(cfg, "queue_offer") ? learner::parse_queue_offer(get<std::string>(cfg, "queue_offer"))
                                                    : learner::QueueOffer::kArrival;
  t.learner_threads = learner_threads_from(cfg);
  t.checkpoint_every_s = get<double>(cfg, "checkpoint_every_s");
  t.max_seconds = get<double>(cfg, "max_seconds");
  t.metrics_every_s = get<double>(cfg, "metrics_every_s");
  // A run directory from before the key existed resumes with the default.
  if (runfiles::has(cfg, "unit_timeout_s")) t.unit_timeout_s = get<double>(cfg, "unit_timeout_s");
  return t;
}

actors::PqtActorOptions actor_options_from(const nlohmann::json& cfg) {
  actors::PqtActorOptions a;
  a.task = require_task(cfg);
  a.score = score_from(cfg);
  a.shape = shape_from(cfg);
  a.batch_size = learner_options_from(cfg).fresh_rows();  // B, or B less the replayed rows
  a.eos_token = get<bool>(cfg, "eos_token");
  a.softmax_tr = get<float>(cfg, "softmax_tr");
  return a;
}

}  // namespace ringrl::config
