#include "learner/hiro/hiro_algorithm.h"

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "common/errors.h"
#include "common/hiro/eval_record.h"
#include "common/hiro/state_format.h"
#include "common/records.h"
#include "common/run_segment.h"
#include "common/runfiles/run_files.h"
#include "common/seeds.h"
#include "learner/td3/fifo_replay.h"
#include "learner/threads.h"

namespace ringrl::hiro {
namespace {

using learner::Algorithm;
using learner::DriverTick;

constexpr const char* kHiroSection = "hiro";                   // this wing's checkpoint section
constexpr std::uint64_t kRingMetaRecords = 4;                  // meta records a ring holds beyond the steps
constexpr std::size_t kMaxQueuedSteps = hiro_format::kMaxQueuedSteps;  // hard cap of the arrival queue
constexpr double kIntrinsicEma = 0.01;                         // weight of a new step in the reward's running mean

// One env step that arrived ahead of the rate limiter: its actor and Transition record.
using QueuedStep = hiro_format::SectionHead::Queued;

class HiroAlgorithm final : public Algorithm {
 public:
  explicit HiroAlgorithm(const HiroTrainOptions& o)
      : o_(o),
        threads_(static_cast<int>(learner::resolve_learner_threads(o.learner_threads, o.actors))),
        stream_base_(o.actors, 0),
        received_(o.actors, 0) {}

  // --- identity and sizing
  std::string name() const override { return "hiro"; }
  std::uint64_t record_mask() const override {
    return record_type_bit(kRecordTransition) | record_type_bit(kRecordMetaTransition) |
           record_type_bit(kRecordHiroEval);
  }
  std::uint64_t ring_bytes() const override {
    const std::uint64_t steps =
        2 * std::uint64_t{o_.throttle_slack} + static_cast<std::uint64_t>(o_.learner.meta_period);
    return steps * frame_bytes(hiro::transition_bytes(o_.learner.transition_dims())) +
           kRingMetaRecords * frame_bytes(hiro::meta_transition_bytes(o_.learner.meta_transition_dims())) +
           frame_bytes(sizeof(hiro::HiroEvalRecord));
  }
  std::size_t blob_bytes() const override {
    return hiro::ActorBlobLayout(o_.learner.actor_blob_shape()).channel_bytes();
  }
  const char* budget_key() const override { return "env_steps"; }
  void fill_launch(ActorLaunch& launch) const override {
    launch.params["train_actors"] = std::to_string(collectors());
    launch.params["run_dir"] = o_.run_dir;
    // Where the collector's episode streams continue (actors/hiro/hiro_actor.h): the steps its
    // slot pushed before this process; the actor adds what it and its predecessors push here.
    if (const auto c = collector(launch.slot)) launch.params["step_base"] = std::to_string(stream_base_[*c]);
    if (o_.eval && launch.slot == o_.actors) {
      launch.kind = "hiro-eval";
      launch.nice = 0;  // the evaluator keeps the learner's priority: each evaluation must end within eval_every
    }
  }
  // Other nodes run collectors only: the evaluator stays on the learner node.
  std::uint32_t actors_per_node(std::uint32_t /*local_slots*/) const override { return o_.actors; }
  void add_remote_slots(std::uint32_t first, std::uint32_t count) override {
    remote_first_ = first;
    remote_count_ = count;
    stream_base_.assign(collectors(), 0);
    received_.assign(collectors(), 0);
    per_actor_.assign(collectors(), 0);
  }

  // --- one repetition
  void begin_repetition(std::uint32_t rep) override {
    rep_ = rep;
    HiroOptions lo = o_.learner;
    lo.seed = repetition_seed(o_.learner.seed, rep);  // each repetition: a fresh model
    lo.threads = threads_;
    learner_.reset();
    learner_ = std::make_unique<HiroLearner>(lo);
    steps_ = low_ = high_ = 0;
    queue_.clear();
    per_actor_.assign(collectors(), 0);
    evals_ = 0;
    last_eval_ = hiro::HiroEvalRecord{};
    best_success_ = -1;
    intrinsic_ = 0;
    low_stats_ = high_stats_ = HiroUpdateStats{};
    unpublished_change_ = false;
    low_actor_loss_ = high_actor_loss_ = 0;
  }
  std::uint64_t version() const override { return low_; }

  void on_record(std::uint32_t actor, const RecordView& rec, std::uint64_t /*version*/) override {
    std::string error;
    switch (rec.type) {
      case kRecordTransition: {
        if (!hiro::decode_transition(rec.data, rec.length, o_.learner.transition_dims(), &view_, &error))
          throw std::runtime_error(fmt::format("actor {} sent a bad transition record: {}", actor, error));
        const auto c = collector(actor);
        if (!c) throw std::runtime_error(fmt::format("actor {} is not a collector but sent a transition", actor));
        ++received_[*c];
        const bool within_budget = o_.max_env_steps == 0 || steps_ < o_.max_env_steps;
        if (queue_.empty() && steps_ < o_.initial_steps && within_budget) {
          admit(actor, rec.data, rec.length);  // initial collection: no update to wait for
        } else {
          queue_.push_back({actor, std::vector<std::byte>(rec.data, rec.data + rec.length)});
        }
        break;
      }
      case kRecordMetaTransition:
        if (!learner_->add_meta_transition(rec.data, rec.length, &error))
          throw std::runtime_error(fmt::format("actor {} sent a bad meta transition record: {}", actor, error));
        break;
      case kRecordHiroEval: {
        hiro::HiroEvalRecord e;
        if (!hiro::decode_hiro_eval(rec.data, rec.length, &e, &error))
          throw std::runtime_error(fmt::format("actor {} sent a bad eval record: {}", actor, error));
        last_eval_ = e;
        ++evals_;
        best_success_ = std::max(best_success_, success_rate(e));
        append_eval_row(e);
        break;
      }
      default:
        throw std::runtime_error(fmt::format("actor {} sent a record of type {}", actor, rec.type));
    }
  }
  bool wants_records() const override { return queue_.size() < kMaxQueuedSteps; }
  bool ready() const override { return !queue_.empty(); }
  bool step() override {
    // Initial collection: admit without updating.
    if (steps_ < o_.initial_steps) {
      while (!queue_.empty() && steps_ < o_.initial_steps) admit_front();
      return false;
    }
    // One env step, one low-level update, a high-level update every high_every.
    admit_front();
    low_stats_ = learner_->update_low();
    if (low_stats_.actor_step) low_actor_loss_ = low_stats_.actor_loss;
    unpublished_change_ = unpublished_change_ || low_stats_.actor_changed;
    ++low_;
    if (low_ % o_.high_every == 0 && !learner_->high_replay().empty()) {
      high_stats_ = learner_->update_high();
      if (high_stats_.actor_step) high_actor_loss_ = high_stats_.actor_loss;
      unpublished_change_ = unpublished_change_ || high_stats_.actor_changed;
      ++high_;
    }
    if (low_ % o_.publish_every != 0 || !unpublished_change_) return false;
    unpublished_change_ = false;
    return true;
  }
  void write_blob(std::byte* dst) const override { learner_->write_blob(dst); }
  std::uint64_t budget_used() const override { return steps_; }
  bool solved() const override { return evals_ > 0 && best_success_ >= o_.success_threshold; }

  // One line per evaluation in RUN_DIR/evals.csv (the learning curve; metrics.csv only holds
  // the latest). A resumed run may repeat the evaluation of the steps redone after its last
  // checkpoint: readers keep the last row of each (repetition, env_steps).
  void append_eval_row(const hiro::HiroEvalRecord& e) const {
    const std::filesystem::path path = std::filesystem::path(o_.run_dir) / runfiles::kEvalsFileName;
    const bool fresh = !std::filesystem::exists(path);
    std::ofstream out(path, std::ios::app);
    if (fresh) out << "repetition,env_steps,success,successes,episodes,mean_final_distance\n";
    out << fmt::format("{},{},{:.4f},{},{},{:.4f}\n", rep_, e.env_steps, success_rate(e), e.successes, e.episodes,
                       e.mean_final_distance);
    if (!out) throw std::runtime_error(fmt::format("cannot append to {}", path.string()));
  }

  // --- state
  void save(CheckpointWriter& out) const override {
    ByteWriter& w = out.section(kHiroSection);
    hiro_format::SectionHead h;
    h.env_steps = steps_;
    h.low_updates = low_;
    h.high_updates = high_;
    h.evaluations = evals_;
    h.last_eval = last_eval_;
    h.best_success = best_success_;
    h.intrinsic_reward = intrinsic_;
    h.per_collector = per_actor_;
    h.positions.resize(collectors());
    for (std::uint32_t i = 0; i < collectors(); ++i) h.positions[i] = stream_base_[i] + received_[i];
    h.queue.assign(queue_.begin(), queue_.end());
    hiro_format::write_section_head(w, h);
    learner_->save(w);
  }
  void load(CheckpointReader& in) override {
    ByteReader& b = in.section(kHiroSection);
    hiro_format::SectionHead h = hiro_format::read_section_head(b);
    const std::uint32_t version = h.version;
    steps_ = h.env_steps;
    low_ = h.low_updates;
    high_ = h.high_updates;
    evals_ = h.evaluations;
    last_eval_ = h.last_eval;
    best_success_ = h.best_success;
    intrinsic_ = h.intrinsic_reward;
    std::copy_n(h.per_collector.begin(), std::min(h.per_collector.size(), per_actor_.size()), per_actor_.begin());
    std::fill(stream_base_.begin(), stream_base_.end(), 0);
    std::fill(received_.begin(), received_.end(), 0);
    std::copy_n(h.positions.begin(), std::min(h.positions.size(), stream_base_.size()), stream_base_.begin());
    queue_.clear();
    for (QueuedStep& q : h.queue) {
      std::string error;
      if (!hiro::decode_transition(q.bytes.data(), static_cast<std::uint32_t>(q.bytes.size()),
                                   o_.learner.transition_dims(), &view_, &error))
        b.fail("queued step: " + error);
      if (!collector(q.actor)) q.actor = 0;  // resumed with fewer actors: count it somewhere
      queue_.push_back(std::move(q));
    }
    if (version == hiro_format::kStateVersionNoStreams) {
      // Collectors before layout 2 counted episodes from 0 in each process; the steps each
      // one sent lie above every such count, so they serve as its base.
      for (std::uint32_t i = 0; i < collectors(); ++i) stream_base_[i] = per_actor_[i];
      for (const QueuedStep& q : queue_) ++stream_base_[*collector(q.actor)];
    }
    learner_->load(b);
    b.expect_end();
  }

  // --- reporting
  std::vector<std::string> metric_columns() const override {
    return {
        "rep",           "env_steps",        "env_steps_per_s", "low_updates",   "high_updates",      "low_per_step",
        "high_per_step", "low_critic_loss",  "low_actor_loss",  "low_mean_q",    "high_critic_loss",  "high_actor_loss",
        "high_mean_q",   "intrinsic_reward", "eval_success",    "eval_distance", "best_eval_success", "updates_per_s",
        "lag_p50",       "lag_max",          "queued_steps"};
  }
  std::vector<double> metric_row(const DriverTick& t) const override {
    return {static_cast<double>(t.rep),
            static_cast<double>(steps_),
            t.budget_per_s,
            static_cast<double>(low_),
            static_cast<double>(high_),
            low_per_step(),
            high_per_step(),
            low_stats_.critic_loss,
            low_actor_loss_,
            -low_actor_loss_,
            high_stats_.critic_loss,
            high_actor_loss_,
            -high_actor_loss_,
            intrinsic_,
            evals_ > 0 ? success_rate(last_eval_) : 0.0,
            evals_ > 0 ? last_eval_.mean_final_distance : 0.0,
            std::max(best_success_, 0.0),
            t.updates_per_s,
            static_cast<double>(t.lag_p50),
            static_cast<double>(t.lag_max),
            static_cast<double>(queue_.size())};
  }
  std::vector<std::pair<std::string, std::string>> progress_fields(const DriverTick& t) const override {
    return {{"rep", fmt::format("{}/{}", t.rep + 1, t.repetitions)},
            {"steps", fmt::format("{}", steps_)},
            {"steps/s", fmt::format("{:.0f}", t.budget_per_s)},
            {"upd", fmt::format("{}/{}", low_, high_)},
            {"Qlo", fmt::format("{:.3f}", -low_actor_loss_)},
            {"r_in", fmt::format("{:.3f}", intrinsic_)},
            {"eval", evals_ > 0 ? fmt::format("{:.2f}", success_rate(last_eval_)) : std::string("-")},
            {"lag", fmt::format("{}/{}", t.lag_p50, t.lag_max)}};
  }
  nlohmann::json result() const override {
    return {{"env", o_.env},
            {"goal_space", hiro::goal_space_name(o_.learner.goal_space.kind)},
            {"relabel", o_.learner.relabel},
            {"evals", evals_},
            {"best_eval_success", evals_ > 0 ? best_success_ : 0.0},
            {"final_eval_success", evals_ > 0 ? success_rate(last_eval_) : 0.0},
            {"final_eval_distance", evals_ > 0 ? last_eval_.mean_final_distance : 0.0},
            {"final_eval_env_steps", last_eval_.env_steps},
            {"initial_steps", o_.initial_steps},
            {"low_updates", low_},
            {"high_updates", high_},
            {"low_updates_per_env_step", low_per_step()},
            {"high_updates_per_env_step", high_per_step()},
            {"env_steps_per_actor", per_actor_}};
  }
  std::string describe_result() const override {
    return fmt::format("{} env steps, {} low / {} high updates; eval success best {:.2f}, final {:.2f} ({} evals)",
                       steps_, low_, high_, evals_ > 0 ? best_success_ : 0.0,
                       evals_ > 0 ? success_rate(last_eval_) : 0.0, evals_);
  }

 private:
  static double success_rate(const hiro::HiroEvalRecord& e) {
    return e.episodes > 0 ? static_cast<double>(e.successes) / e.episodes : 0.0;
  }
  double low_per_step() const {
    return steps_ > o_.initial_steps ? static_cast<double>(low_) / static_cast<double>(steps_ - o_.initial_steps) : 0.0;
  }
  double high_per_step() const {
    return steps_ > o_.initial_steps ? static_cast<double>(high_) / static_cast<double>(steps_ - o_.initial_steps)
                                     : 0.0;
  }
  // Puts one env step into the low-level replay and counts it.
  void admit(std::uint32_t actor, const std::byte* data, std::uint32_t bytes) {
    std::string error;
    if (!hiro::decode_transition(data, bytes, o_.learner.transition_dims(), &view_, &error) ||
        !learner_->add_transition(data, bytes, &error))
      throw std::runtime_error(fmt::format("actor {} sent a bad transition record: {}", actor, error));
    row_.resize(static_cast<std::size_t>(view_.count));
    view_.copy_floats(row_.data());
    const hiro::TransitionLayout L(o_.learner.transition_dims());
    const float r = hiro::intrinsic_reward(row_.data() + L.s(), row_.data() + L.g(), row_.data() + L.s_next(), L.goal);
    intrinsic_ = steps_ == 0 ? r : (1 - kIntrinsicEma) * intrinsic_ + kIntrinsicEma * r;
    ++steps_;
    if (const auto c = collector(actor)) ++per_actor_[*c];
  }
  // Collectors: the local ones (slots [0, actors)), then the remote ones, numbered on.
  std::uint32_t collectors() const { return o_.actors + remote_count_; }
  std::optional<std::uint32_t> collector(std::uint32_t slot) const {
    if (slot < o_.actors) return slot;
    if (slot >= remote_first_ && slot - remote_first_ < remote_count_) return o_.actors + (slot - remote_first_);
    return std::nullopt;
  }
  void admit_front() {
    QueuedStep& q = queue_.front();
    admit(q.actor, q.bytes.data(), static_cast<std::uint32_t>(q.bytes.size()));
    queue_.pop_front();
  }

  const HiroTrainOptions& o_;
  int threads_;  // the learner's threads, learner_threads resolved
  std::unique_ptr<HiroLearner> learner_;
  std::deque<QueuedStep> queue_;          // env steps waiting for the rate limiter (FIFO)
  std::uint32_t remote_first_ = 0, remote_count_ = 0;  // collector slots on other nodes
  std::vector<std::uint64_t> per_actor_;  // env steps taken per collector
  // Per collector slot: env steps it pushed before this process (from the checkpoint; what
  // its launches carry as step_base) and the transitions received from it since. Their sum is
  // where its episode streams continue after a resume; neither restarts with a repetition,
  // because the actors do not.
  std::vector<std::uint64_t> stream_base_, received_;
  std::uint64_t steps_ = 0;           // env steps in the replay (the budget)
  std::uint64_t low_ = 0, high_ = 0;  // updates this repetition
  std::uint64_t evals_ = 0;
  hiro::HiroEvalRecord last_eval_{};
  std::uint32_t rep_ = 0;
  double best_success_ = -1;
  double intrinsic_ = 0;  // running mean of the admitted steps' r_lo
  HiroUpdateStats low_stats_, high_stats_;
  bool unpublished_change_ = false;  // an acting network changed after the last publication
  // Actor loss -mean Q1(x, mu(x)) at each level's last actor step (mean Q is its negative).
  double low_actor_loss_ = 0, high_actor_loss_ = 0;
  hiro::TransitionView view_;
  std::vector<float> row_;
};

}  // namespace

void HiroTrainOptions::validate() const {
  RunSettings::validate();
  learner.validate();
  if (actors < 1 || actors + (eval ? 1u : 0u) > kMaxActors)
    throw UsageError(fmt::format("actors {}: expected 1 to {}", actors, kMaxActors - 1));
  if (high_every < 1) throw UsageError(fmt::format("high_every {}: expected >= 1", high_every));
  if (publish_every < 1) throw UsageError(fmt::format("publish_every {}: expected >= 1", publish_every));
  if (learner_threads > static_cast<std::uint32_t>(learner::kMaxTaskThreads))
    throw UsageError(fmt::format("learner_threads {}: expected 0 (auto) to {}", learner_threads, learner::kMaxTaskThreads));
  if (throttle_slack < 1) throw UsageError(fmt::format("throttle_slack {}: expected >= 1", throttle_slack));
  if (eval && eval_every < 1) throw UsageError("eval_every 0: expected >= 1 (or eval=false)");
  if (eval && eval_episodes < 1) throw UsageError("eval_episodes 0: expected >= 1");
  if (!(success_threshold >= 0 && success_threshold <= 1))
    throw UsageError(fmt::format("success_threshold {}: expected in [0, 1]", success_threshold));
}

std::unique_ptr<learner::Algorithm> make_hiro_algorithm(const HiroTrainOptions& options) {
  return std::make_unique<HiroAlgorithm>(options);
}

learner::DriverSummary run_hiro_training(const HiroTrainOptions& o) {
  o.validate();
  learner::DriverOptions d(o);
  d.actors = o.actors + (o.eval ? 1 : 0);
  d.max_budget = o.max_env_steps;
  d.seed = o.learner.seed;
  HiroOptions lo = o.learner;
  lo.threads = static_cast<int>(learner::resolve_learner_threads(o.learner_threads, o.actors));
  learner::set_torch_threads(hiro_torch_threads(lo));
  d.identity = {{"env", o.env},
                {"goal_space", hiro::goal_space_name(o.learner.goal_space.kind)},
                {"targets", o.targets},
                {"relabel", o.learner.relabel},
                {"max_env_steps", o.max_env_steps}};
  HiroAlgorithm algo(o);
  return learner::run_training(algo, d);
}

}  // namespace ringrl::hiro
