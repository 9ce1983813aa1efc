#include "envs/vector_env.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include "common/errors.h"

namespace ringrl::envs {

namespace {
constexpr std::uint64_t kEpisodeSeedMix = 0x9E3779B97F4A7C15ULL;  // golden-ratio increment
}  // namespace

std::uint64_t episode_seed(std::uint64_t base, std::uint64_t k) noexcept {
  std::uint64_t z = base + k * kEpisodeSeedMix;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Refuses a second caller while one is inside (the envs are not thread-safe).
class VectorEnv::Busy {
 public:
  explicit Busy(VectorEnv* e) : e_(e) {
    if (e_->busy_.exchange(true, std::memory_order_acq_rel))
      throw std::runtime_error("the vector env is already stepping in another thread");
  }
  ~Busy() { e_->busy_.store(false, std::memory_order_release); }
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;

 private:
  VectorEnv* e_;
};

VectorEnv::VectorEnv(const Factory& make, int num_envs, int threads) {
  if (num_envs < 1 || num_envs > kMaxEnvs)
    throw UsageError(fmt::format("num_envs {}: expected 1 to {}", num_envs, kMaxEnvs));
  if (threads < 0 || threads > kMaxThreads)
    throw UsageError(fmt::format("threads {}: expected 0 (one per core, at most num_envs) to {}", threads, kMaxThreads));
  n_ = static_cast<std::size_t>(num_envs);
  slots_.resize(n_);
  for (Slot& s : slots_) s.env = make();
  const EnvSpec& spec = slots_[0].env->spec();
  obs_dim_ = static_cast<std::size_t>(spec.obs_dim);
  act_dim_ = static_cast<std::size_t>(spec.action_dim);
  ctx_dim_ = static_cast<std::size_t>(spec.task.context_dim());
  obs_.assign(n_ * obs_dim_, 0.0f);
  reward_.assign(n_, 0.0);
  terminated_ = std::make_unique<bool[]>(n_);
  truncated_ = std::make_unique<bool[]>(n_);
  success_ = std::make_unique<bool[]>(n_);
  t_.assign(n_, 0);
  distance_.assign(n_, 0.0f);
  target_.assign(n_ * ctx_dim_, 0.0f);
  if (threads == 0) threads = std::min<int>(num_envs, tbb::this_task_arena::max_concurrency());
  threads_ = std::min(threads, num_envs);
  if (threads_ > 1) arena_ = std::make_unique<tbb::task_arena>(threads_);
}

VectorEnv::~VectorEnv() = default;

void VectorEnv::check_open(const char* what) const {
  if (slots_.empty()) throw std::runtime_error(std::string(what) + ": the env is closed");
}

void VectorEnv::reset(const std::vector<std::optional<std::uint64_t>>& seeds) {
  check_open("reset");
  if (seeds.size() != n_) throw UsageError(fmt::format("reset: {} seeds for {} envs", seeds.size(), n_));
  for (std::size_t i = 0; i < n_; ++i)
    if (!seeds[i] && !slots_[i].seeds.seeded())
      throw UsageError(fmt::format("reset: env {} has never been seeded: the first reset needs a seed", i));
  Busy busy(this);
  run_all([&](std::size_t i) { reset_slot(i, seeds[i]); });
}

void VectorEnv::step(const float* actions) {
  check_open("step");
  for (std::size_t i = 0; i < n_; ++i)
    if (!slots_[i].seeds.seeded()) throw UsageError("step: reset() the envs before the first step");
  Busy busy(this);
  run_all([&](std::size_t i) {
    Slot& s = slots_[i];
    if (s.needs_reset) {
      reset_slot(i, std::nullopt);
      return;
    }
    const StepResult r =
        s.env->step(Span<const float>(actions + i * act_dim_, act_dim_), Span<float>(obs_.data() + i * obs_dim_, obs_dim_));
    reward_[i] = static_cast<double>(r.reward);
    terminated_[i] = r.terminated;
    truncated_[i] = r.truncated;
    t_[i] = r.info.t;
    distance_[i] = r.info.distance;
    success_[i] = r.info.success;
    copy_target(i);
    s.needs_reset = r.done();
  });
}

void VectorEnv::set_target(std::size_t i, Span<const float> target) {
  check_open("set_target");
  if (i >= n_) throw UsageError(fmt::format("set_target: env {} of {}", i, n_));
  if (target.size() != ctx_dim_)
    throw UsageError(fmt::format("target of {} values: expected {}", target.size(), ctx_dim_));
  Busy busy(this);
  slots_[i].env->set_context(target);
  copy_target(i);
}

void VectorEnv::close() {
  Busy busy(this);
  slots_.clear();
  arena_.reset();
}

void VectorEnv::reset_slot(std::size_t i, std::optional<std::uint64_t> seed) {
  Slot& s = slots_[i];
  const Span<float> obs(obs_.data() + i * obs_dim_, obs_dim_);
  s.env->reset(s.seeds.next(seed), obs);
  s.needs_reset = false;
  reward_[i] = 0.0;
  terminated_[i] = false;
  truncated_[i] = false;
  t_[i] = 0;
  const Env& e = *s.env;
  distance_[i] = e.spec().task.distance(Span<const float>(obs.data(), obs.size()), e.context());
  success_[i] = distance_[i] < e.spec().task.success_threshold;
  copy_target(i);
}

void VectorEnv::copy_target(std::size_t i) {
  const auto c = slots_[i].env->context();
  std::memcpy(target_.data() + i * ctx_dim_, c.data(), ctx_dim_ * sizeof(float));
}

// Runs f(i) for every env: inline on one thread, else on the arena (one env per task).
template <class F>
void VectorEnv::run_all(const F& f) {
  if (!arena_) {
    for (std::size_t i = 0; i < n_; ++i) f(i);
    return;
  }
  arena_->execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n_), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t i = r.begin(); i != r.end(); ++i) f(i);
    });
  });
}

}  // namespace ringrl::envs
