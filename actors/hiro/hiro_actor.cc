#include "actors/hiro/hiro_actor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actors/hiro/hiro_policy.h"
#include "common/actor_runtime.h"
#include "common/backoff.h"
#include "common/errors.h"
#include "common/exit_status.h"
#include "common/hiro/eval_record.h"
#include "common/hiro/transition_record.h"
#include "common/runfiles/atomic_file.h"
#include "common/runfiles/run_files.h"
#include "common/seeds.h"
#include "common/signals.h"
#include "envs/maze/trajectory.h"

namespace ringrl::actors {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr auto kFirstWeightsTimeout = std::chrono::seconds(60);
constexpr auto kWaitSlice = std::chrono::milliseconds(100);  // per wait; heartbeat between slices
constexpr std::uint64_t kNoiseStream = 0x6e6f697365ULL;      // "noise": the exploration stream
constexpr std::uint64_t kEvalStream = 0x6576616cULL;         // "eval": evaluation episode seeds
constexpr int kTimingWarmupSteps = 50;                       // untimed steps before measuring

float clip(float v, float lo, float hi) noexcept { return std::min(std::max(v, lo), hi); }

// The collector's ring: weight refresh, the fair-share throttle, heartbeats, back-pressure.
class RingSink final : public RecordSink {
 public:
  RingSink(ActorRuntime& rt, HiroCollector& collector, std::vector<std::byte>& blob, const HiroActorOptions& o)
      : rt_(rt), collector_(collector), blob_(blob), o_(o) {
    base_steps_ = control().env_steps.load(std::memory_order_relaxed);  // a pacing hint, guards nothing
  }

  bool bad_blob() const noexcept { return bad_blob_; }

  bool before_step() override {
    if (rt_.should_stop()) return false;
    if (rt_.refresh_weights(blob_)) {
      std::string error;
      if (!collector_.nets().load(blob_, &error)) {
        spdlog::error("hiro actor {}: {}", o_.slot, error);
        bad_blob_ = true;
        return false;
      }
    }
    // Fair share: at most throttle_slack steps ahead of taken / train_actors.
    auto allowed = [&] {
      const std::uint64_t taken = control().env_steps.load(std::memory_order_relaxed);  // a pacing hint
      const std::uint64_t share = (taken > base_steps_ ? taken - base_steps_ : 0) / o_.train_actors;
      return pushed_ < share + o_.throttle_slack;
    };
    while (!allowed()) {
      rt_.ring().flush();
      if (wait_until(allowed, rt_.stop_flag(), kWaitSlice) == WaitResult::kStopped) return false;
      rt_.heartbeat();
      if (rt_.should_stop()) return false;
    }
    rt_.heartbeat();
    version_ = rt_.weights_version();
    ++pushed_;
    return true;
  }

  std::byte* reserve(std::uint32_t bytes) override {
    std::byte* dst = rt_.ring().try_reserve(bytes);
    while (dst == nullptr) {
      // Full ring: the learner is behind. Wait (back-pressure), keep the heartbeat going.
      rt_.slot().ring_stalls.fetch_add(1, std::memory_order_relaxed);  // a counter for display
      wait_until([&] { return (dst = rt_.ring().try_reserve(bytes)) != nullptr; }, rt_.stop_flag(), kWaitSlice);
      rt_.heartbeat();
      if (dst == nullptr && rt_.should_stop()) return nullptr;
    }
    return dst;
  }

  void commit(RecordType type) override {
    // Counted before it is published: a successor keys its episodes by `items`, which must
    // never be below the steps that reached the ring (the file comment of hiro_actor.h).
    rt_.count(1, type == kRecordTransition ? 1 : 0);
    rt_.ring().commit(type, version_);
    rt_.ring().flush();
  }

 private:
  ControlBlock& control() noexcept { return rt_.segment().control(); }

  ActorRuntime& rt_;
  HiroCollector& collector_;
  std::vector<std::byte>& blob_;
  const HiroActorOptions& o_;
  std::uint64_t base_steps_ = 0;  // learner's env steps when this process started
  std::uint64_t pushed_ = 0;      // env steps pushed by this process
  std::uint64_t version_ = 0;
  bool bad_blob_ = false;
};

// Loads the first blob; logs one line and returns false when it is refused.
bool load_first(ActorRuntime& rt, HiroCollector& c, std::vector<std::byte>& blob, std::uint32_t slot, int* status) {
  if (!rt.wait_for_weights(blob, kFirstWeightsTimeout)) {
    *status = rt.should_stop() ? 0 : 3;
    return false;
  }
  std::string error;
  if (!c.nets().load(blob, &error)) {
    spdlog::error("hiro actor {}: {}", slot, error);
    *status = kExitActorRefused;
    return false;
  }
  return true;
}

}  // namespace

NextGoal parse_next_goal(const std::string& name) {
  if (name == "emitted") return NextGoal::kEmitted;
  if (name == "h") return NextGoal::kTransition;
  throw UsageError(fmt::format("next_goal '{}': expected emitted (the reference) or h (the paper)", name));
}

void HiroActorOptions::validate() const {
  if (meta_period < 1) throw UsageError(fmt::format("meta_period {}: expected >= 1", meta_period));
  if (hidden < 1) throw UsageError(fmt::format("hidden {}: expected >= 1", hidden));
  if (!(low_noise >= 0)) throw UsageError(fmt::format("low_noise {}: expected >= 0", low_noise));
  if (!(high_noise >= 0)) throw UsageError(fmt::format("high_noise {}: expected >= 0", high_noise));
  if (train_actors < 1) throw UsageError(fmt::format("train_actors {}: expected >= 1", train_actors));
  if (eval_episodes < 1) throw UsageError(fmt::format("eval_episodes {}: expected >= 1", eval_episodes));
}

hiro::ActorBlobShape HiroCollector::blob_shape(const HiroActorOptions& o) {
  const envs::EnvSpec spec = envs::maze::maze_env_spec(o.env, o.env_options);
  const envs::Box full = envs::maze::maze_subgoal_box(o.env, o.env_options);
  const hiro::GoalSpace gs = hiro::make_goal_space(o.goal_space, spec.obs_dim, full.low, full.high, o.env);
  return {spec.obs_dim + spec.task.context_dim(), gs.dim, spec.obs_dim + gs.dim, spec.action_dim, o.hidden, o.hidden};
}

HiroCollector::HiroCollector(const HiroActorOptions& o)
    : o_((o.validate(), o)),
      env_(envs::maze::make_maze_env(o.env, o.env_options)),
      nets_(blob_shape(o)),
      noise_(mix_seed(o.seed, kNoiseStream)) {
  const envs::EnvSpec& s = env_->spec();
  const envs::Box full = envs::maze::maze_subgoal_box(o.env, o.env_options);
  goal_space_ = hiro::make_goal_space(o.goal_space, s.obs_dim, full.low, full.high, o.env);
  obs_ = s.obs_dim;
  act_ = s.action_dim;
  k_ = goal_space_.dim;
  ctx_ = s.task.context_dim();
  c_ = o.meta_period;
  if (s.episode_length % c_ != 0)
    throw UsageError(fmt::format("meta_period {}: expected a divisor of the episode length {}", c_, s.episode_length));
  meta_in_.assign(static_cast<std::size_t>(obs_ + ctx_), 0.f);
  low_in_.assign(static_cast<std::size_t>(obs_ + k_), 0.f);
}

HiroCollector::~HiroCollector() = default;

const envs::EnvSpec& HiroCollector::spec() const noexcept { return env_->spec(); }

void HiroCollector::emit_goal(const float* s, const float* context, bool explore, float* g) {
  std::copy(s, s + obs_, meta_in_.begin());
  std::copy(context, context + ctx_, meta_in_.begin() + obs_);
  nets_.meta().forward(meta_in_.data(), g);
  if (explore)
    for (int j = 0; j < k_; ++j) g[j] += static_cast<float>(o_.high_noise * noise_.normal());
  goal_space_.clip(g);
}

void HiroCollector::act(const float* s, const float* g, bool explore, float* a) {
  std::copy(s, s + obs_, low_in_.begin());
  std::copy(g, g + k_, low_in_.begin() + obs_);
  nets_.low().forward(low_in_.data(), a);
  const envs::Box& box = env_->spec().action;
  for (int j = 0; j < act_; ++j) {
    const float noisy = explore ? a[j] + static_cast<float>(o_.low_noise * noise_.normal()) : a[j];
    a[j] = clip(noisy, box.low[static_cast<std::size_t>(j)], box.high[static_cast<std::size_t>(j)]);
  }
}

bool HiroCollector::run_episode(std::uint64_t key, RecordSink& sink) {
  const envs::EnvSpec& spec = env_->spec();
  const auto O = static_cast<std::size_t>(obs_), A = static_cast<std::size_t>(act_), K = static_cast<std::size_t>(k_);
  std::vector<float> s(O), s1(O), g(K), g_next(K), g_h(K), a(A), G(static_cast<std::size_t>(ctx_));
  std::vector<float> s_start(O), g_start(K), states(static_cast<std::size_t>(c_) * O),
      actions(static_cast<std::size_t>(c_) * A), rewards(static_cast<std::size_t>(c_));
  env_->reset(mix_seed(o_.seed, key), envs::Span<float>(s));
  noise_ = Rng(mix_seed(mix_seed(o_.seed, kNoiseStream), key));
  if (o_.fixed_target) env_->set_context(envs::Span<const float>(spec.task.primary_target()));
  const envs::Span<const float> ctx = env_->context();
  std::copy(ctx.begin(), ctx.end(), G.begin());
  const hiro::TransitionDims td{obs_, act_, k_};
  const hiro::MetaTransitionDims md{obs_, act_, k_, ctx_, c_};

  // The first decision, then N steps (§7.1).
  emit_goal(s.data(), G.data(), /*explore=*/true, g.data());
  s_start = s;
  g_start = g;
  int i = 0;  // step within the segment
  for (int t = 0; t < spec.episode_length; ++t) {
    if (!sink.before_step()) return false;
    act(s.data(), g.data(), /*explore=*/true, a.data());
    const envs::StepResult r = env_->step(envs::Span<const float>(a), envs::Span<float>(s1));
    rewards[static_cast<std::size_t>(i)] = r.reward;
    std::copy(s.begin(), s.end(), states.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(i) * O));
    std::copy(a.begin(), a.end(), actions.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(i) * A));

    // Next goal: h between decisions; at a boundary the freshly emitted goal (or h, paper).
    const bool boundary = (t + 1) % c_ == 0;
    const bool last = t + 1 == spec.episode_length;
    hiro::goal_transition(s.data(), g.data(), s1.data(), k_, g_h.data());
    if (boundary) {
      emit_goal(s1.data(), G.data(), /*explore=*/true, g_next.data());
    } else {
      g_next = g_h;
    }
    const float* stored_next = boundary && o_.next_goal == NextGoal::kEmitted ? g_next.data() : g_h.data();
    const std::uint8_t flags = last ? hiro::kTransitionEpisodeEnd : 0;

    hiro::TransitionHeader th{};
    th.obs_dim = static_cast<std::uint16_t>(obs_);
    th.action_dim = static_cast<std::uint16_t>(act_);
    th.goal_dim = static_cast<std::uint16_t>(k_);
    th.flags = flags;
    th.t = static_cast<std::uint32_t>(t);
    th.episode = key;
    std::byte* dst = sink.reserve(hiro::transition_bytes(td));
    if (dst == nullptr) return false;
    hiro::encode_transition(dst, th, {s.data(), a.data(), s1.data(), g.data(), stored_next, r.reward, 1.0f});
    sink.commit(kRecordTransition);

    if (boundary) {
      hiro::MetaTransitionHeader mh{};
      mh.obs_dim = static_cast<std::uint16_t>(obs_);
      mh.action_dim = static_cast<std::uint16_t>(act_);
      mh.goal_dim = static_cast<std::uint16_t>(k_);
      mh.context_dim = static_cast<std::uint16_t>(ctx_);
      mh.steps = static_cast<std::uint16_t>(c_);
      mh.flags = flags;
      mh.t = static_cast<std::uint32_t>(t + 1 - c_);
      mh.episode = key;
      dst = sink.reserve(hiro::meta_transition_bytes(md));
      if (dst == nullptr) return false;
      hiro::encode_meta_transition(dst, mh,
                                   {s_start.data(), g_start.data(), s1.data(), G.data(), G.data(),
                                    hiro::meta_reward(rewards.data(), c_), 1.0f, states.data(), actions.data()});
      sink.commit(kRecordMetaTransition);
      s_start = s1;
      g_start = g_next;
      i = 0;
    } else {
      ++i;
    }
    s.swap(s1);
    g.swap(g_next);
  }
  return true;
}

EvalEpisode HiroCollector::eval_episode(std::uint64_t episode_seed, const float* target,
                                        const std::function<void(const EvalPoint&)>& trace) {
  const envs::EnvSpec& spec = env_->spec();
  const auto O = static_cast<std::size_t>(obs_);
  std::vector<float> s(O), s1(O), a(static_cast<std::size_t>(act_));
  const std::vector<float> G(target, target + ctx_);
  env_->reset(episode_seed, envs::Span<float>(s));
  env_->set_context(envs::Span<const float>(G));
  float distance = spec.task.distance(envs::Span<const float>(s), envs::Span<const float>(G));
  if (trace) trace({0, s[0], s[1], 0.f, distance});
  HiroPolicy policy(nets_, goal_space_, spec.action, obs_, ctx_, c_);
  for (int t = 0; t < spec.episode_length; ++t) {
    policy.act(s.data(), G.data(), a.data());
    const envs::StepResult r = env_->step(envs::Span<const float>(a), envs::Span<float>(s1));
    distance = r.info.distance;
    if (trace) trace({t + 1, s1[0], s1[1], r.reward, distance});
    s.swap(s1);
  }
  EvalEpisode e;
  e.final_distance = distance;
  e.success = distance < spec.task.success_threshold;  // the final step only (§10.6)
  return e;
}

std::pair<double, double> HiroCollector::time_step_and_inference(int steps) {
  const auto O = static_cast<std::size_t>(obs_);
  std::vector<float> s(O), g(static_cast<std::size_t>(k_)), a(static_cast<std::size_t>(act_));
  const std::vector<float>& G = env_->spec().task.primary_target();
  env_->reset(1, envs::Span<float>(s));
  const auto env_steps = [&](int n) {
    for (int t = 0; t < n; ++t) {
      for (int j = 0; j < act_; ++j) a[static_cast<std::size_t>(j)] = static_cast<float>(noise_.uniform(-1, 1));
      if (env_->step(envs::Span<const float>(a), envs::Span<float>(s)).truncated) env_->reset(2, envs::Span<float>(s));
    }
  };
  const auto inferences = [&](int n) {
    for (int t = 0; t < n; ++t) {
      if (t % c_ == 0) emit_goal(s.data(), G.data(), /*explore=*/false, g.data());
      act(s.data(), g.data(), /*explore=*/false, a.data());
    }
  };
  env_steps(kTimingWarmupSteps);
  auto t0 = Clock::now();
  env_steps(steps);
  const double env_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / steps;
  inferences(kTimingWarmupSteps);
  t0 = Clock::now();
  inferences(steps);
  const double inf_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / steps;
  return {env_us, inf_us};
}

int run_hiro_actor(const HiroActorOptions& o) {
  install_shutdown_handlers();
  ActorRuntime rt(o.segment, o.slot, o.require_parent_creator);
  HiroCollector collector(o);
  std::vector<std::byte> blob;
  int status = 0;
  if (!load_first(rt, collector, blob, o.slot, &status)) return status;
  RingSink sink(rt, collector, blob, o);
  // Each episode's key: the env steps this slot pushed before it over the whole run (the
  // file comment of hiro_actor.h). `items` is this slot's own counter, written only by it and
  // by its dead predecessors.
  while (!rt.should_stop()) {
    const std::uint64_t key = o.step_base + rt.slot().items.load(std::memory_order_relaxed);
    if (!collector.run_episode(key, sink)) break;
  }
  rt.ring().flush();
  return sink.bad_blob() ? kExitActorRefused : 0;
}

int run_hiro_evaluator(const HiroActorOptions& o) {
  install_shutdown_handlers();
  ActorRuntime rt(o.segment, o.slot, o.require_parent_creator);
  HiroCollector collector(o);
  std::vector<std::byte> blob;
  int status = 0;
  if (!load_first(rt, collector, blob, o.slot, &status)) return status;
  const std::vector<float>& target = collector.spec().task.primary_target();
  const auto& steps = rt.segment().control().env_steps;
  std::uint64_t next = o.eval_every;
  while (!rt.should_stop()) {
    // Wait for the next multiple of eval_every training env steps.
    const auto due = [&] { return steps.load(std::memory_order_relaxed) >= next; };  // a pacing hint
    while (!due()) {
      if (wait_until(due, rt.stop_flag(), kWaitSlice) == WaitResult::kStopped) return 0;
      rt.heartbeat();
    }
    const std::uint64_t at = steps.load(std::memory_order_relaxed);
    // Episode seeds by the evaluation's place in the run, so a restarted evaluator draws new ones.
    const std::uint64_t round = at / o.eval_every;
    next = (round + 1) * o.eval_every;
    if (rt.refresh_weights(blob)) {
      std::string error;
      if (!collector.nets().load(blob, &error)) {
        spdlog::error("hiro evaluator {}: {}", o.slot, error);
        return kExitActorRefused;
      }
    }
    const std::uint64_t version = rt.weights_version();

    // The episodes (noise off), their trajectories, then one eval record.
    std::ostringstream csv;
    envs::maze::write_trajectory_header(csv);
    hiro::HiroEvalRecord rec{};
    rec.env_steps = at;
    rec.weights_version = version;
    double distance_sum = 0;
    for (std::uint32_t e = 0; e < o.eval_episodes; ++e) {
      if (rt.should_stop()) return 0;
      const auto episode = static_cast<int>(e);
      const EvalEpisode r = collector.eval_episode(
          mix_seed(o.seed ^ kEvalStream, round * o.eval_episodes + e), target.data(), [&](const EvalPoint& p) {
            envs::maze::write_trajectory_row(csv, {episode, p.t, p.x, p.y, p.reward, p.distance});
          });
      rec.episodes += 1;
      rec.successes += r.success ? 1 : 0;
      distance_sum += r.final_distance;
      rt.heartbeat();
    }
    rec.mean_final_distance = distance_sum / rec.episodes;
    if (!o.run_dir.empty()) runfiles::write_file_atomic(fs::path(o.run_dir) / runfiles::kEvalTrajectoryFileName, csv.str());
    std::byte* dst = rt.ring().try_reserve(sizeof rec);
    while (dst == nullptr) {
      if (wait_until([&] { return (dst = rt.ring().try_reserve(sizeof rec)) != nullptr; }, rt.stop_flag(),
                     kWaitSlice) == WaitResult::kStopped)
        return 0;
      rt.heartbeat();
    }
    std::memcpy(dst, &rec, sizeof rec);
    rt.ring().commit(kRecordHiroEval, version);
    rt.ring().flush();
    rt.count(1, 0);
    spdlog::info("hiro evaluator: at {} env steps, success {}/{}, mean final distance {:.2f}", at, rec.successes,
                 rec.episodes, rec.mean_final_distance);
  }
  return 0;
}

}  // namespace ringrl::actors
