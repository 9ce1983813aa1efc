#include "bench/pqt/learner_bench.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "learner/pqt/losses.h"
#include "learner/pqt/policy.h"
#include "common/process_modes.h"
#include "learner/threads.h"

namespace ringrl::learner {

namespace {

using Clock = std::chrono::steady_clock;

/// Fills a synthetic batch: uniform live tokens, full length, rewards in [0, 1).
void fill_batch(const LearnerOptions& o, std::mt19937_64* rng, EpisodeBatch* batch) {
  batch->resize(o.batch_size, o.max_len);
  const int first = o.eos_token ? 0 : 1;
  std::uniform_int_distribution<int> tok(first, o.shape.vocab - 1);
  std::uniform_real_distribution<float> rew(0.0f, 1.0f);
  for (auto& t : batch->tokens) t = tok(*rng);
  for (auto& l : batch->lengths) l = o.max_len;
  for (auto& r : batch->rewards) r = rew(*rng);
  for (auto& lp : batch->behaviour_log_probs) lp = -2.0f;
}

/// The bare LibTorch step: same model and loss formula, autograd, torch RMSprop.
class BareStep {
 public:
  BareStep(const LearnerOptions& o, const EpisodeBatch& batch, bool fused)
      : o_(o),
        device_(o.device == "auto"
                    ? (torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU))
                    : torch::Device(o.device)),
        policy_(PolicyOptions{o.shape, o.param_init_factor, o.eos_token, o.seed, fused}) {
    policy_->to(device_);
    optimizer_ = std::make_unique<torch::optim::RMSprop>(
        policy_->parameters(), torch::optim::RMSpropOptions(o.lr).alpha(o.rms_decay).eps(o.rms_epsilon));
    const int b = batch.batch_size;
    const int k = o.topk_enabled() ? o.topk_batch_size : 0;
    auto tokens = torch::empty({b + k, o.max_len}, torch::kInt64);
    for (int i = 0; i < b + k; ++i) {
      const int src = i < b ? i : i - b;  // queue rows: copies of the first episodes
      for (int t = 0; t < o.max_len; ++t) {
        tokens[i][t] = batch.tokens[static_cast<std::size_t>(src) * o.max_len + t];
      }
    }
    tokens_ = tokens.to(device_);
    mask_ = torch::ones({b + k, o.max_len}, torch::TensorOptions().device(device_));
    rewards_ = torch::from_blob(const_cast<float*>(batch.rewards.data()), {b}, torch::kFloat32).clone().to(device_);
    baselines_ = torch::zeros({o.max_len}, torch::TensorOptions().device(device_));
    b_ = b;
    k_ = k;
  }

  void step() {
    optimizer_->zero_grad();
    const torch::Tensor logits = policy_->forward(tokens_).logits;
    const torch::Tensor lp = torch::log_softmax(logits, 2);
    const torch::Tensor alp = action_log_probs(lp, tokens_);
    const torch::Tensor mask_b = mask_.narrow(0, 0, b_);
    torch::Tensor loss = -o_.entropy_beta * entropy(lp.narrow(0, 0, b_), mask_b, kMagicLossMultiplier);
    if (o_.pg_enabled()) {
      loss = loss + o_.pi_loss_hparam * pg_loss(alp.narrow(0, 0, b_), advantages(rewards_, baselines_, mask_b), mask_b,
                                                kMagicLossMultiplier);
    }
    if (k_ > 0) {
      loss = loss + o_.topk_loss_hparam * topk_loss(alp.narrow(0, b_, k_), mask_.narrow(0, b_, k_));
    }
    loss.backward();
    optimizer_->step();
    (void)loss.item<float>();  // wait for the device like PqtLearner::step does
  }

 private:
  LearnerOptions o_;
  torch::Device device_;
  Policy policy_;
  std::unique_ptr<torch::optim::RMSprop> optimizer_;
  torch::Tensor tokens_, mask_, rewards_, baselines_;
  int b_ = 0, k_ = 0;
};

}  // namespace

LearnerBenchResult bench_learner_step(const LearnerBenchOptions& options) {
  const int saved_threads = torch::get_num_threads();
  torch::set_num_threads(std::max(1, options.threads));
  keep_freed_memory();
  LearnerBenchResult r;
  {
    PqtLearner ours(options.learner);
    LearnerOptions eager_options = options.learner;
    eager_options.policy_kernel = PolicyKernel::kEager;
    PqtLearner eager(eager_options);
    r.device = ours.device();
    LearnerOptions bare_options = options.learner;
    bare_options.device = r.device;
    std::mt19937_64 rng(options.learner.seed);
    EpisodeBatch batch;
    fill_batch(options.learner, &rng, &batch);
    BareStep bare(bare_options, batch, /*fused=*/false);
    BareStep bare_fused(bare_options, batch, /*fused=*/true);

    // One call of ours or eager is k updates (k = batches_per_update, one pass over k batches);
    // a bare call is one.
    const int k = options.learner.batches_per_update;
    std::vector<EpisodeBatch> batches(static_cast<std::size_t>(k), batch);
    auto learner_step = [&](PqtLearner& l, PhaseProfiler* profiler) -> long {
      if (k == 1) {
        for (auto& v : batch.policy_versions) v = l.version();
        l.step(batch, profiler);
      } else {
        for (std::size_t j = 0; j < batches.size(); ++j) {
          for (auto& v : batches[j].policy_versions) v = l.version() + j;
        }
        l.step(batches, profiler);
      }
      return k;
    };
    auto ours_step = [&] { return learner_step(ours, options.profiler); };
    auto eager_step = [&] { return learner_step(eager, nullptr); };
    for (int i = 0; i < options.warmup_steps; ++i) {
      ours_step();
      eager_step();
      bare.step();
      bare_fused.step();
    }
    const int rounds = std::max(options.rounds, 1);
    const double slice = options.seconds / rounds;
    double ours_s = 0.0, bare_s = 0.0, fused_s = 0.0, eager_s = 0.0;
    for (int round = 0; round < rounds; ++round) {
      auto run = [slice](auto&& fn, long* steps, double* seconds) {
        const auto start = Clock::now();
        double elapsed = 0.0;
        do {
          *steps += fn();  // updates done by the call
          elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        } while (elapsed < slice);
        *seconds += elapsed;
      };
      run(ours_step, &r.ours_steps, &ours_s);
      run(eager_step, &r.eager_steps, &eager_s);
      run(
          [&] {
            bare.step();
            return 1L;
          },
          &r.bare_steps, &bare_s);
      run(
          [&] {
            bare_fused.step();
            return 1L;
          },
          &r.bare_fused_steps, &fused_s);
    }
    r.ours_updates_per_s = static_cast<double>(r.ours_steps) / ours_s;
    r.bare_updates_per_s = static_cast<double>(r.bare_steps) / bare_s;
    r.ours_ms_per_update = 1e3 / r.ours_updates_per_s;
    r.bare_ms_per_update = 1e3 / r.bare_updates_per_s;
    r.bare_fused_updates_per_s = static_cast<double>(r.bare_fused_steps) / fused_s;
    r.ratio = r.ours_updates_per_s / r.bare_updates_per_s;
    r.overhead_ratio = r.ours_updates_per_s / r.bare_fused_updates_per_s;
    r.eager_updates_per_s = static_cast<double>(r.eager_steps) / eager_s;
    const LearnerOptions& lo = options.learner;
    r.flops_per_update = pqt_update_flops(lo.shape, lo.batch_size + (lo.topk_enabled() ? lo.topk_batch_size : 0),
                                          lo.max_len);
    r.ours_gflop_per_s = r.flops_per_update * r.ours_updates_per_s * 1e-9;
  }
  torch::set_num_threads(saved_threads);
  return r;
}

double pqt_update_flops(const PolicyShape& shape, int rows, int steps) {
  double per_position = 2.0 * shape.top_size() * shape.vocab;
  for (int l = 0; l < shape.num_layers(); ++l) {
    const double h = shape.lstm_sizes[static_cast<std::size_t>(l)];
    per_position += 2.0 * (shape.layer_input(l) + h) * 4.0 * h;
  }
  return 3.0 * per_position * rows * steps;
}

}  // namespace ringrl::learner
