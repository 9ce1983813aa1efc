#include "bench/hiro/hiro_bench.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <torch/torch.h>

#include "bench/forked_rates.h"
#include "common/hiro/transition_record.h"
#include "learner/cuda_support.h"
#include "learner/hiro/hiro_ops.h"
#include "learner/profile.h"
#include "learner/td3/fifo_replay.h"
#include "learner/td3/td3.h"

namespace ringrl::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kTrainPassFactor = 3;  // forward + input gradient + weight gradient

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Frames of the largest record the collector writes.
std::uint32_t max_record_bytes(const hiro::HiroOptions& o) {
  return std::max(hiro::transition_bytes(o.transition_dims()), hiro::meta_transition_bytes(o.meta_transition_dims()));
}

// Stores every record in the learner's replays.
class ReplaySink final : public actors::RecordSink {
 public:
  explicit ReplaySink(hiro::HiroLearner& learner) : learner_(learner), frame_(max_record_bytes(learner.options())) {}
  std::byte* reserve(std::uint32_t bytes) override {
    bytes_ = bytes;
    return frame_.data();
  }
  void commit(RecordType type) override {
    std::string error;
    const bool ok = type == kRecordTransition ? learner_.add_transition(frame_.data(), bytes_, &error)
                                              : learner_.add_meta_transition(frame_.data(), bytes_, &error);
    if (!ok) throw std::runtime_error("bench hiro: the collector made a record the learner refused: " + error);
    if (type == kRecordTransition) ++taken_;
  }
  std::uint64_t taken() const noexcept { return taken_; }

 private:
  hiro::HiroLearner& learner_;
  std::vector<std::byte> frame_;
  std::uint32_t bytes_ = 0;
  std::uint64_t taken_ = 0;  // Transition records stored
};

// Encodes every record into one scratch frame and drops it; stops at the deadline.
class DiscardSink final : public actors::RecordSink {
 public:
  DiscardSink(Clock::time_point deadline, std::uint32_t frame_bytes) : deadline_(deadline), frame_(frame_bytes) {}
  bool before_step() override {
    if (Clock::now() >= deadline_) return false;
    ++steps_;
    return true;
  }
  std::byte* reserve(std::uint32_t /*bytes*/) override { return frame_.data(); }
  void commit(RecordType /*type*/) override {}
  std::uint64_t steps() const noexcept { return steps_; }

 private:
  Clock::time_point deadline_;
  std::vector<std::byte> frame_;
  std::uint64_t steps_ = 0;
};

// ----------------------------------------------------------------- the plain LibTorch TD3

// The §4 networks written the ordinary way: torch::nn::Linear with its default init.
struct PlainActorImpl : torch::nn::Module {
  explicit PlainActorImpl(const td3::Td3Shape& s)
      : l1(register_module("l1", torch::nn::Linear(s.input_dim, s.hidden1))),
        l2(register_module("l2", torch::nn::Linear(s.hidden1, s.hidden2))),
        l3(register_module("l3", torch::nn::Linear(s.hidden2, s.action_dim))) {
    auto m = torch::ones({s.input_dim});
    if (s.masked_inputs > 0) m.narrow(0, 0, s.masked_inputs).zero_();
    mask = register_buffer("mask", m);
    const auto low = torch::tensor(s.action_low), high = torch::tensor(s.action_high);
    mid = register_buffer("mid", (high + low) / 2);
    half = register_buffer("half", (high - low) / 2);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::relu(l1(x * mask));
    h = torch::relu(l2(h));
    return mid + half * torch::tanh(l3(h));
  }
  torch::nn::Linear l1, l2, l3;
  torch::Tensor mask, mid, half;
};
TORCH_MODULE(PlainActor);

struct PlainCriticImpl : torch::nn::Module {
  explicit PlainCriticImpl(const td3::Td3Shape& s)
      : l1(register_module("l1", torch::nn::Linear(s.input_dim + s.action_dim, s.hidden1))),
        l2(register_module("l2", torch::nn::Linear(s.hidden1 + s.action_dim, s.hidden2))),
        l3(register_module("l3", torch::nn::Linear(s.hidden2, 1))) {
    auto m = torch::ones({s.input_dim});
    if (s.masked_inputs > 0) m.narrow(0, 0, s.masked_inputs).zero_();
    mask = register_buffer("mask", m);
  }
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& a) {
    auto h = torch::relu(l1(torch::cat({x * mask, a}, 1)));
    h = torch::relu(l2(torch::cat({h, a}, 1)));
    return l3(h).squeeze(1);
  }
  torch::nn::Linear l1, l2, l3;
  torch::Tensor mask;
};
TORCH_MODULE(PlainCritic);

void copy_params(torch::nn::Module& dst, torch::nn::Module& src, double tau) {
  torch::NoGradGuard no_grad;
  auto d = dst.parameters();
  auto s = src.parameters();
  for (std::size_t i = 0; i < d.size(); ++i) d[i].mul_(1 - tau).add_(s[i], tau);
}

// TD3 (§5) as one would write it from the paper: eager modules, torch RNG, Adam.
class PlainTd3 {
 public:
  PlainTd3(const td3::Td3Options& o, torch::Device device)
      : o_(o), actor(o.shape), actor_t(o.shape), q1(o.shape), q2(o.shape), q1_t(o.shape), q2_t(o.shape) {
    for (torch::nn::Module* m : std::initializer_list<torch::nn::Module*>{actor.get(), actor_t.get(), q1.get(),
                                                                          q2.get(), q1_t.get(), q2_t.get()})
      m->to(device);
    copy_params(*actor_t, *actor, 1.0);
    copy_params(*q1_t, *q1, 1.0);
    copy_params(*q2_t, *q2, 1.0);
    auto critic_params = q1->parameters();
    for (auto& p : q2->parameters()) critic_params.push_back(p);
    const auto adam = [](double lr) {
      return torch::optim::AdamOptions(lr).betas({td3::kAdamBeta1, td3::kAdamBeta2}).eps(td3::kAdamEpsilon);
    };
    actor_opt_ = std::make_unique<torch::optim::Adam>(actor->parameters(), adam(o.actor_lr));
    critic_opt_ = std::make_unique<torch::optim::Adam>(critic_params, adam(o.critic_lr));
  }

  /// One update; returns the critic loss (read back, as a training loop that logs it would).
  float update(const torch::Tensor& x, const torch::Tensor& a, const torch::Tensor& r, const torch::Tensor& x2) {
    torch::Tensor y;
    {
      torch::NoGradGuard no_grad;
      const auto noise = (torch::randn_like(a) * o_.target_noise).clamp(-o_.target_noise_clip, o_.target_noise_clip);
      const auto a2 = actor_t(x2) + noise;
      y = r + o_.gamma * torch::min(q1_t(x2, a2), q2_t(x2, a2));
    }
    namespace F = torch::nn::functional;
    const auto loss = (F::huber_loss(q1(x, a), y) + F::huber_loss(q2(x, a), y)) / 2;
    critic_opt_->zero_grad();
    loss.backward();
    critic_opt_->step();
    if (counter_++ % o_.update_period == 0) {
      const auto actor_loss = -q1(x, actor(x)).mean();
      actor_opt_->zero_grad();
      actor_loss.backward();
      actor_opt_->step();
      copy_params(*actor_t, *actor, o_.tau);
      copy_params(*q1_t, *q1, o_.tau);
      copy_params(*q2_t, *q2, o_.tau);
    }
    return loss.item<float>();
  }

  td3::Td3Options o_;
  PlainActor actor, actor_t;
  PlainCritic q1, q2, q1_t, q2_t;
  std::unique_ptr<torch::optim::Adam> actor_opt_, critic_opt_;
  long counter_ = 0;
};

// A replay's rows as one host tensor [size, width].
torch::Tensor replay_rows(const td3::FifoReplay& replay) {
  auto t = torch::empty({static_cast<std::int64_t>(replay.size()), replay.row_floats()});
  for (std::size_t i = 0; i < replay.size(); ++i)
    std::copy_n(replay.row(i), replay.row_floats(),
                t.data_ptr<float>() + i * static_cast<std::size_t>(replay.row_floats()));
  return t;
}

// HIRO's two levels on PlainTd3, sampling from the same rows as HiroLearner.
class PlainHiro {
 public:
  PlainHiro(hiro::HiroLearner& ours, torch::Device device, std::function<void()> sync)
      : o_(ours.options()),
        device_(device),
        sync_(std::move(sync)),
        low_(ours.low_agent().options(), device),
        high_(ours.high_agent().options(), device),
        low_rows_(replay_rows(ours.low_replay())),
        high_rows_(replay_rows(ours.high_replay())) {
    const auto& g = o_.goal_space;
    goal_low_ = torch::tensor(g.low).to(device);
    goal_high_ = torch::tensor(g.high).to(device);
    const auto alow = torch::tensor(o_.action_low), ahigh = torch::tensor(o_.action_high);
    action_half_ = ((ahigh - alow) / 2).to(device);
  }

  void update_low() {
    const hiro::TransitionLayout L(o_.transition_dims());
    const auto rows = sample(low_rows_);
    const auto s = rows.narrow(1, L.s(), L.obs), a = rows.narrow(1, L.a(), L.act);
    const auto s2 = rows.narrow(1, L.s_next(), L.obs), g = rows.narrow(1, L.g(), L.goal);
    const auto g2 = rows.narrow(1, L.g_next(), L.goal);
    const auto r = -torch::sqrt((s2.narrow(1, 0, L.goal) - s.narrow(1, 0, L.goal) - g).pow(2).sum(1) + 1e-10);
    low_.update(torch::cat({s, g}, 1), a, r, torch::cat({s2, g2}, 1));
  }

  /// One high-level update; adds the relabel pass's seconds to *relabel_s.
  void update_high(double* relabel_s) {
    const hiro::MetaTransitionLayout L(o_.meta_transition_dims());
    const std::int64_t B = o_.batch_size;
    const auto rows = sample(high_rows_);
    const auto s = rows.narrow(1, L.s(), L.obs), s2 = rows.narrow(1, L.s_next(), L.obs);
    const auto g = rows.narrow(1, L.g(), L.goal);
    const auto states = rows.narrow(1, L.low_states(), L.steps * L.obs).reshape({B, L.steps, L.obs});
    const auto actions = rows.narrow(1, L.low_actions(), L.steps * L.act).reshape({B, L.steps, L.act});
    const auto t0 = Clock::now();
    const auto goals = o_.relabel == "sample" ? relabel(s, s2, g, states, actions) : g;
    sync_();
    *relabel_s += seconds_since(t0);
    high_.update(torch::cat({s, rows.narrow(1, L.context(), L.ctx)}, 1), goals, rows.select(1, L.reward()),
                 torch::cat({s2, rows.narrow(1, L.context_next(), L.ctx)}, 1));
  }

 private:
  torch::Tensor sample(const torch::Tensor& pool) {
    const auto idx = torch::randint(pool.size(0), {o_.batch_size}, torch::kLong);
    return pool.index_select(0, idx).to(device_);
  }

  // §9.1 written directly: 10 candidates, carried along the stored states, scored by the low actor.
  torch::Tensor relabel(const torch::Tensor& s, const torch::Tensor& s2, const torch::Tensor& g,
                        const torch::Tensor& states, const torch::Tensor& actions) {
    torch::NoGradGuard no_grad;
    const std::int64_t B = s.size(0), k = g.size(1), c = states.size(1), obs = states.size(2);
    const std::int64_t K = hiro::kRelabelCandidates;
    const auto delta = s2.narrow(1, 0, k) - s.narrow(1, 0, k);
    const auto sigma = hiro::kSampleSigmaFraction * (goal_high_ - goal_low_) / 2;
    const auto draws = delta.unsqueeze(1) + sigma * torch::randn({B, hiro::kRelabelGaussianCandidates, k}, s.options());
    const auto cands =
        torch::max(torch::min(torch::cat({draws, delta.unsqueeze(1), g.unsqueeze(1)}, 1), goal_high_), goal_low_);
    const auto seq = cands.unsqueeze(2) + (s.narrow(1, 0, k).unsqueeze(1) - states.narrow(2, 0, k)).unsqueeze(1);
    const auto input = torch::cat({states.unsqueeze(1).expand({B, K, c, obs}), seq}, 3).reshape({B * K * c, obs + k});
    const auto pred = low_.actor(input).reshape({B, K, c, -1});
    const auto score = -((actions.unsqueeze(1) - pred) / action_half_).pow(2).sum({2, 3});
    const auto best = score.argmax(1);
    return cands.gather(1, best.view({B, 1, 1}).expand({B, 1, k})).squeeze(1);
  }

  hiro::HiroOptions o_;
  torch::Device device_;
  std::function<void()> sync_;
  PlainTd3 low_, high_;
  torch::Tensor low_rows_, high_rows_;
  torch::Tensor goal_low_, goal_high_, action_half_;
};

// Runs fn until `slice` seconds passed; adds the calls and the seconds.
template <class Fn>
void run_for(double slice, Fn&& fn, long* calls, double* seconds) {
  const auto t0 = Clock::now();
  double elapsed = 0;
  do {
    fn();
    ++*calls;
    elapsed = seconds_since(t0);
  } while (elapsed < slice);
  *seconds += elapsed;
}

// 2 x rows x sum(in x out) of a three-layer MLP.
double mlp_flops(double rows, double in, double h1, double h2, double out) {
  return 2 * rows * (in * h1 + h1 * h2 + h2 * out);
}
// The §4 critic: the action enters at the input and again after the first layer.
double critic_flops(double rows, double in, double act, double h1, double h2) {
  return 2 * rows * ((in + act) * h1 + (h1 + act) * h2 + h2);
}
// One TD3 update (§5): targets forward, both critics trained, the actor trained every period.
double td3_update_flops(double batch, const td3::Td3Shape& s, int period) {
  const double actor = mlp_flops(batch, s.input_dim, s.hidden1, s.hidden2, s.action_dim);
  const double critic = critic_flops(batch, s.input_dim, s.action_dim, s.hidden1, s.hidden2);
  const double targets = actor + 2 * critic;
  const double critics = kTrainPassFactor * 2 * critic;
  const double actor_step = kTrainPassFactor * (actor + critic) / period;
  return targets + critics + actor_step;
}

td3::Td3Shape level_shape(const hiro::HiroOptions& o, bool low) {
  td3::Td3Shape s;
  s.input_dim = o.obs_dim + (low ? o.goal_space.dim : o.context_dim);
  s.action_dim = low ? o.action_dim() : o.goal_space.dim;
  s.hidden1 = s.hidden2 = o.hidden;
  return s;
}

}  // namespace

std::string hiro_learner_device(hiro::HiroLearner& learner) { return learner.low_agent().device().str(); }

std::function<void()> hiro_device_sync(hiro::HiroLearner& learner) {
  const torch::Device device = learner.low_agent().device();
  if (!device.is_cuda()) return [] {};
  const int index = device.has_index() ? device.index() : 0;
  return [index] { learner::cuda_stream_synchronize(index); };
}

void fill_replays(hiro::HiroLearner& learner, const actors::HiroActorOptions& ao, std::uint64_t env_steps) {
  actors::HiroCollector collector(ao);
  std::vector<std::byte> blob(learner.blob_bytes());
  learner.write_blob(blob.data());
  std::string error;
  if (!collector.nets().load(blob, &error)) throw std::runtime_error("bench hiro: " + error);
  ReplaySink sink(learner);
  for (std::uint64_t episode = 0; sink.taken() < env_steps; ++episode) collector.run_episode(episode, sink);
}

double hiro_actor_only_steps_per_s(const actors::HiroActorOptions& ao, const std::vector<std::byte>& blob,
                                   std::uint32_t n, double seconds) {
  return sum_of_forked_rates(
      n,
      [&](std::uint32_t i) {
        actors::HiroActorOptions mine = ao;
        mine.seed = ao.seed + i;
        actors::HiroCollector collector(mine);
        std::string error;
        if (collector.nets().load(blob, &error)) {
          const std::uint32_t frame =
              std::max(hiro::transition_bytes(
                           {collector.spec().obs_dim, collector.spec().action_dim, collector.goal_space().dim}),
                       hiro::meta_transition_bytes({collector.spec().obs_dim, collector.spec().action_dim,
                                                    collector.goal_space().dim, collector.spec().task.context_dim(),
                                                    mine.meta_period}));
          const auto t0 = Clock::now();
          DiscardSink sink(t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)),
                           frame);
          for (std::uint64_t episode = 0;; ++episode)
            if (!collector.run_episode(episode, sink)) break;
          return static_cast<double>(sink.steps()) / seconds_since(t0);
        }
        return 0.0;
      },
      "bench hiro");
}

HiroLearnerBenchResult bench_hiro_learner(const HiroLearnerBenchOptions& options) {
  const int saved_threads = torch::get_num_threads();
  // Each side on options.learner.threads threads: ours on its arena (torch as the wing sets
  // it), the plain one on torch's intra-op threads.
  const int ours_torch = hiro::hiro_torch_threads(options.learner);
  const int plain_torch = options.learner.threads;
  HiroLearnerBenchResult r;
  {
    torch::set_num_threads(ours_torch);
    hiro::HiroLearner ours(options.learner);
    const torch::Device device = ours.low_agent().device();
    r.device = device.str();
    r.threads = ours.arena().threads();
    const std::function<void()> sync = hiro_device_sync(ours);
    fill_replays(ours, options.actor, options.data_steps);
    torch::manual_seed(options.learner.seed);
    std::optional<PlainHiro> plain;
    if (options.plain) plain.emplace(ours, device, sync);

    learner::PhaseProfiler profiler;
    profiler.set_device_sync(sync);
    double plain_relabel_s = 0;
    for (int i = 0; i < options.warmup_updates; ++i) {
      torch::set_num_threads(ours_torch);
      ours.update_low();
      ours.update_high(/*read_losses=*/true, &profiler);
      if (!plain) continue;
      torch::set_num_threads(plain_torch);
      plain->update_low();
      plain->update_high(&plain_relabel_s);
    }
    profiler.reset();
    plain_relabel_s = 0;

    const int rounds = std::max(options.rounds, 1);
    const double slice = options.seconds / rounds / 2;  // low and high halves per round
    double ours_low_s = 0, ours_high_s = 0, plain_low_s = 0, plain_high_s = 0;
    for (int round = 0; round < rounds; ++round) {
      // Ours as the wing runs it (losses read back after every update), then the plain one.
      torch::set_num_threads(ours_torch);
      run_for(
          slice, [&] { ours.update_low(); }, &r.ours.low_updates, &ours_low_s);
      run_for(
          slice, [&] { ours.update_high(/*read_losses=*/true, &profiler); }, &r.ours.high_updates, &ours_high_s);
      if (!plain) continue;
      torch::set_num_threads(plain_torch);
      run_for(
          slice, [&] { plain->update_low(); }, &r.plain.low_updates, &plain_low_s);
      run_for(
          slice, [&] { plain->update_high(&plain_relabel_s); }, &r.plain.high_updates, &plain_high_s);
    }
    double ours_relabel_s = 0;
    for (const learner::PhaseSummary& p : profiler.summary())
      if (p.phase == learner::Phase::kRelabel) ours_relabel_s = p.total_s;
    const auto fill = [](Td3Timing& t, double low_s, double high_s, double relabel_s) {
      if (t.low_updates == 0 || t.high_updates == 0) return;
      t.low_ms = 1e3 * low_s / static_cast<double>(t.low_updates);
      t.relabel_ms = 1e3 * relabel_s / static_cast<double>(t.high_updates);
      t.high_ms = 1e3 * high_s / static_cast<double>(t.high_updates) - t.relabel_ms;
    };
    fill(r.ours, ours_low_s, ours_high_s, ours_relabel_s);
    r.ours_env_steps_per_s = 1e3 / r.ours.ms_per_env_step(options.high_every);
    if (plain) {
      fill(r.plain, plain_low_s, plain_high_s, plain_relabel_s);
      r.plain_env_steps_per_s = 1e3 / r.plain.ms_per_env_step(options.high_every);
      r.ratio = r.ours_env_steps_per_s / r.plain_env_steps_per_s;
    }
  }
  torch::set_num_threads(saved_threads);
  return r;
}

HiroFlops hiro_flops(const hiro::HiroOptions& o, std::uint32_t high_every) {
  HiroFlops f;
  const double B = o.batch_size;
  f.low_update = td3_update_flops(B, level_shape(o, true), o.update_period);
  f.high_update = td3_update_flops(B, level_shape(o, false), o.update_period);
  const td3::Td3Shape low = level_shape(o, true);
  f.relabel =
      mlp_flops(B * hiro::kRelabelCandidates * o.meta_period, low.input_dim, low.hidden1, low.hidden2, low.action_dim);
  f.low_per_env_step = f.low_update;
  f.high_per_env_step = f.high_update / high_every;
  f.relabel_per_env_step = o.relabel == "sample" ? f.relabel / high_every : 0.0;
  f.per_env_step = f.low_per_env_step + f.high_per_env_step + f.relabel_per_env_step;
  return f;
}

PostInitialRate post_initial_rate(const std::string& metrics_csv, std::uint64_t initial_steps) {
  std::ifstream in(metrics_csv);
  if (!in) throw std::system_error(errno, std::generic_category(), "bench hiro: open " + metrics_csv);
  const auto split = [](const std::string& line) {
    std::vector<std::string> out;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) out.push_back(cell);
    return out;
  };
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split(line);
  const auto column = [&](const char* name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw std::runtime_error(std::string("bench hiro: metrics.csv has no column ") + name);
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t wall = column("wall_s"), steps = column("env_steps");
  bool have_first = false;
  double t_first = 0, t_last = 0;
  std::uint64_t s_first = 0, s_last = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = split(line);
    if (cells.size() <= std::max(wall, steps) || cells[steps].empty()) continue;
    const auto s = static_cast<std::uint64_t>(std::stod(cells[steps]));
    const double t = std::stod(cells[wall]);
    if (s <= initial_steps) continue;
    if (!have_first) {
      have_first = true;
      t_first = t;
      s_first = s;
    }
    t_last = t;
    s_last = s;
  }
  PostInitialRate r;
  if (have_first && t_last > t_first) {
    r.env_steps = s_last - s_first;
    r.seconds = t_last - t_first;
    r.env_steps_per_s = static_cast<double>(r.env_steps) / r.seconds;
  }
  return r;
}

double gemm_peak_flops(int n, int reps, bool bf16) {
  const int saved_threads = torch::get_num_threads();
  torch::set_num_threads(1);
  torch::NoGradGuard no_grad;
  const auto type = bf16 ? torch::kBFloat16 : torch::kFloat;
  const auto a = torch::randn({n, n}).to(type);
  const auto b = torch::randn({n, n}).to(type);
  auto c = torch::mm(a, b);  // warm-up
  double best = 0;
  for (int i = 0; i < std::max(reps, 1); ++i) {
    const auto t0 = Clock::now();
    c = torch::mm(a, b);
    const double s = seconds_since(t0);
    best = std::max(best, 2.0 * n * static_cast<double>(n) * n / s);
  }
  torch::set_num_threads(saved_threads);
  return best;
}

}  // namespace ringrl::bench
