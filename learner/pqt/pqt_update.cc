#include "learner/pqt/pqt_update.h"

#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "common/float_block.h"
#include "common/pqt/state_format.h"
#include "learner/pqt/losses.h"
#include "learner/pqt/policy.h"
#include "learner/pqt/policy_pass.h"
#include "learner/pqt/rmsprop_tf1.h"

namespace ringrl::learner {

namespace {

/// Opens a saved learner state, so a state read out of step fails at once.
/// Longest accepted text form of the sampling RNG (mt19937_64 writes about 6.5k characters).
constexpr std::uint64_t kMaxRngStateChars = 1 << 16;
/// Stats read back once per step, in this order.
enum StatIndex { kStatTotal, kStatPg, kStatEntropy, kStatTopk, kStatNorm, kNumStats };

torch::Device resolve_device(const std::string& name) {
  if (name == "auto") {
    return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  }
  if (name == "cpu") return torch::Device(torch::kCPU);
  if (name == "cuda" || name.rfind("cuda:", 0) == 0) {
    if (!torch::cuda::is_available()) {
      throw UsageError("device '" + name + "' requested but CUDA is not available");
    }
    int index = 0;
    if (name.size() > 5) {
      const std::string digits = name.substr(5);
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
        throw UsageError("device '" + name + "': expected cuda:N");
      }
      index = std::stoi(digits);
    }
    const auto count = static_cast<int>(torch::cuda::device_count());
    if (index >= count) {
      throw UsageError("device '" + name + "': only " + std::to_string(count) + " CUDA device(s) visible");
    }
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  throw UsageError("device must be auto, cpu or cuda:N, got '" + name + "'");
}

/// The tensor count, then each tensor as a float block (common/float_block.h; a contiguous host copy).
void put_tensors(ByteWriter& w, const std::vector<torch::Tensor>& tensors) {
  w.put<std::uint64_t>(tensors.size());
  for (const torch::Tensor& t : tensors) {
    const torch::Tensor host = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
    put_floats(w, host.data_ptr<float>(), static_cast<std::size_t>(host.numel()));
  }
}

/// Host tensors shaped like `like`, read from what put_tensors wrote for tensors of those sizes.
std::vector<torch::Tensor> get_tensors(ByteReader& r, const std::vector<torch::Tensor>& like, const std::string& what) {
  const auto count = r.get<std::uint64_t>();
  if (count != like.size()) {
    r.fail(what + ": " + std::to_string(count) + " tensors, expected " + std::to_string(like.size()));
  }
  std::vector<torch::Tensor> out;
  for (std::size_t k = 0; k < like.size(); ++k) {
    torch::Tensor host = torch::empty(like[k].sizes(), torch::TensorOptions().dtype(torch::kFloat32));
    get_floats(r, host.data_ptr<float>(), static_cast<std::size_t>(like[k].numel()),
               what + ": tensor " + std::to_string(k));
    out.push_back(std::move(host));
  }
  return out;
}

}  // namespace

TrainMode parse_train_mode(const std::string& name) {
  if (name == "pg") return TrainMode::kPg;
  if (name == "pqt" || name == "topk") return TrainMode::kPqt;
  if (name == "pg+pqt" || name == "pg+topk" || name == "pg-topk") return TrainMode::kPgPqt;
  throw UsageError("train mode must be pg, pqt or pg+pqt, got '" + name + "'");
}

const char* train_mode_name(TrainMode mode) {
  switch (mode) {
    case TrainMode::kPg:
      return "pg";
    case TrainMode::kPqt:
      return "pqt";
    case TrainMode::kPgPqt:
      return "pg+pqt";
  }
  return "?";
}

LearnerOptions LearnerOptions::paper(TrainMode mode) {
  LearnerOptions o;
  o.mode = mode;
  o.batch_size = 64;
  o.max_len = 100;
  o.lr = 1e-4;
  o.grad_clip = 50.0;
  o.param_init_factor = 0.5;
  o.ema_baseline_decay = 0.99;
  switch (mode) {
    case TrainMode::kPg:  // pg-20M
      o.entropy_beta = 0.05;
      o.topk = 0;
      o.topk_loss_hparam = 0.0;
      o.pi_loss_hparam = 1.0;
      break;
    case TrainMode::kPqt:  // topk-20M
      o.entropy_beta = 0.01;
      o.topk = 10;
      o.topk_loss_hparam = 200.0;
      o.pi_loss_hparam = 0.0;
      break;
    case TrainMode::kPgPqt:  // pg-topk-20M
      o.entropy_beta = 0.01;
      o.topk = 10;
      o.topk_loss_hparam = 50.0;
      o.pi_loss_hparam = 1.0;
      break;
  }
  return o;
}

void LearnerOptions::validate() const {
  shape.validate();
  auto fail = [](const std::string& what) { throw UsageError("learner option " + what); };
  if (batch_size < 1) fail("batch_size must be >= 1, got " + std::to_string(batch_size));
  if (max_len < 1) fail("max_len must be >= 1, got " + std::to_string(max_len));
  if (!(lr > 0.0)) fail("lr must be > 0, got " + std::to_string(lr));
  if (mode != TrainMode::kPg) {
    if (topk < 1) fail("topk must be >= 1 in mode " + std::string(train_mode_name(mode)));
    if (topk_loss_hparam == 0.0) {
      fail("topk_loss_hparam must be nonzero in mode " + std::string(train_mode_name(mode)));
    }
    if (topk_batch_size < 1) fail("topk_batch_size must be >= 1, got " + std::to_string(topk_batch_size));
  }
  if (!(ema_baseline_decay >= 0.0 && ema_baseline_decay < 1.0)) {
    fail("ema_baseline_decay must be in [0, 1), got " + std::to_string(ema_baseline_decay));
  }
  if (!(rms_decay >= 0.0 && rms_decay < 1.0)) {
    fail("rms_decay must be in [0, 1), got " + std::to_string(rms_decay));
  }
  if (!(rms_epsilon >= 0.0)) fail("rms_epsilon must be >= 0, got " + std::to_string(rms_epsilon));
  if (!(param_init_factor > 0.0)) {
    fail("param_init_factor must be > 0, got " + std::to_string(param_init_factor));
  }
  if (!(is_clip > 0.0)) fail("is_clip must be > 0, got " + std::to_string(is_clip));
  if (!(alpha >= 0.0 && alpha < 1.0)) fail("alpha must be in [0, 1), got " + std::to_string(alpha));
  if (alpha > 0.0 && !pg_enabled()) {
    fail("alpha " + std::to_string(alpha) +
         " (experience replay) weights the PG term: expected mode pg or pg+pqt, got " + train_mode_name(mode));
  }
  if (!(replay_temperature > 0.0)) {
    fail("replay_temperature must be > 0, got " + std::to_string(replay_temperature));
  }
  if (replay_capacity < 1) fail("replay_capacity must be >= 1, got 0");
  if (batches_per_update < 1) fail("batches_per_update must be >= 1, got " + std::to_string(batches_per_update));
  if (batches_per_update > 1 && alpha > 0.0) {
    fail("batches_per_update " + std::to_string(batches_per_update) +
         " with experience replay (alpha > 0): expected batches_per_update 1, since each batch's fresh share "
         "depends on the buffer the previous batch left");
  }
}

PolicyKernel parse_policy_kernel(const std::string& name) {
  if (name == "auto") return PolicyKernel::kAuto;
  if (name == "fused") return PolicyKernel::kFused;
  if (name == "eager") return PolicyKernel::kEager;
  throw UsageError("policy_kernel '" + name + "': expected auto, fused or eager");
}

struct PqtLearner::Impl {
  LearnerOptions o;
  torch::Device device;
  Policy policy;
  std::unique_ptr<PolicyPass> pass;  // the fused pass, when policy_kernel resolves to it
  RmsPropTf1 optimizer;
  std::vector<double> baselines;
  MaxUniquePriorityQueue queue;
  ProportionalReplayBuffer replay;
  std::mt19937_64 rng;
  std::uint64_t version = 0;
  int rows_max;  // batch_size + topk_batch_size

  // Host staging (pinned when the device is CUDA), allocated once.
  torch::Tensor h_tokens;     // [rows_max, T] int64
  torch::Tensor h_mask;       // [rows_max, T] float
  torch::Tensor h_rewards;    // [batch_size] float
  torch::Tensor h_baselines;  // [T] float
  torch::Tensor h_blogp;      // [batch_size, T] float
  torch::Tensor h_stale;      // [batch_size] float, 1 = lag-corrected
  std::vector<std::uint64_t> lags;
  std::vector<std::int32_t> replay_tokens;  // scratch for one replayed program

  explicit Impl(const LearnerOptions& options)
      : o(options),
        device(resolve_device(options.device)),
        policy(PolicyOptions{options.shape, options.param_init_factor, options.eos_token, options.seed}),
        optimizer(policy->blob_parameters(), RmsPropTf1Options{options.lr, options.rms_decay, options.rms_epsilon,
                                                               options.rms_initial_accumulator}),
        baselines(static_cast<std::size_t>(options.max_len), 0.0),
        queue(static_cast<std::size_t>(std::max(options.topk, 1))),
        replay(options.replay_capacity, options.replay_temperature),
        rng(options.seed ^ 0x5851f42d4c957f2dULL) {
    policy->to(device);
    // Re-create the optimizer over the moved parameters (to() may replace the storage).
    optimizer = RmsPropTf1(policy->blob_parameters(),
                           RmsPropTf1Options{o.lr, o.rms_decay, o.rms_epsilon, o.rms_initial_accumulator});
    rows_max = o.batch_size + (o.topk_enabled() ? o.topk_batch_size : 0);
    if (o.policy_kernel == PolicyKernel::kFused && !PolicyPass::supports(policy))
      throw UsageError("policy_kernel fused runs on the CPU only, the device is " + device.str() +
                       ": expected auto or eager");
    if (o.policy_kernel != PolicyKernel::kEager && PolicyPass::supports(policy))
      pass = std::make_unique<PolicyPass>(policy);
    const bool pin = device.is_cuda();
    auto f32 = torch::TensorOptions().dtype(torch::kFloat32).pinned_memory(pin);
    auto i64 = torch::TensorOptions().dtype(torch::kInt64).pinned_memory(pin);
    const int k = o.batches_per_update;
    h_tokens = torch::zeros({k * rows_max, o.max_len}, i64);
    h_mask = torch::zeros({k * rows_max, o.max_len}, f32);
    h_rewards = torch::zeros({k * o.batch_size}, f32);
    h_baselines = torch::zeros({k, o.max_len}, f32);
    h_blogp = torch::zeros({k * o.batch_size, o.max_len}, f32);
    h_stale = torch::zeros({k * o.batch_size}, f32);
    lags.reserve(static_cast<std::size_t>(o.batch_size));
  }

  torch::Tensor to_device(const torch::Tensor& host) const {
    if (!device.is_cuda()) return host;
    return host.to(device, /*non_blocking=*/true);
  }

  /// Writes one program (row r of the staging) with its mask.
  void stage_row(int r, const std::int32_t* tokens, int len) {
    const int t_max = o.max_len;
    int64_t* dst = h_tokens.data_ptr<int64_t>() + static_cast<std::size_t>(r) * t_max;
    float* m = h_mask.data_ptr<float>() + static_cast<std::size_t>(r) * t_max;
    for (int t = 0; t < t_max; ++t) {
      const bool in = t < len;
      dst[t] = in ? tokens[t] : kPolicyEosToken;
      m[t] = in ? 1.0f : 0.0f;
    }
  }

  int fresh_batch_size() const {
    return o.replay_enabled() && !replay.empty() ? o.batch_size - o.replay_rows() : o.batch_size;
  }

  /// One batch of a step: where its rows are staged and what its loss needs.
  struct Group {
    int row0 = 0;          // first staging row (tokens, mask)
    int b = 0;             // fresh episodes
    int nr = 0;            // replayed programs (rows b .. npg)
    int npg = 0;           // rows of the PG and entropy terms
    int k_rows = 0;        // queue rows (npg .. npg + k_rows)
    bool replaying = false;
    bool any_stale = false;
    std::vector<double> log_q;  // replay log-probabilities of the npg rows
    StepStats st;
  };

  void check_batch(const EpisodeBatch& batch) const {
    batch.validate(o.shape.vocab);
    if (batch.max_len != o.max_len) {
      throw UsageError("episode batch T=" + std::to_string(batch.max_len) + " differs from the learner's max_len " +
                       std::to_string(o.max_len));
    }
    if (batch.batch_size > o.batch_size) {
      throw UsageError("episode batch B=" + std::to_string(batch.batch_size) + " exceeds the learner's batch_size " +
                       std::to_string(o.batch_size));
    }
    if (o.replay_enabled() && !replay.empty() && batch.batch_size > fresh_batch_size()) {
      throw UsageError("episode batch B=" + std::to_string(batch.batch_size) + " leaves no room for the " +
                       std::to_string(o.replay_rows()) + " replayed programs: expected at most " +
                       std::to_string(fresh_batch_size()) + " (fresh_batch_size())");
    }
  }

  /// Stages batch j at staging row row0, in the original's order: the episodes, the replayed
  /// programs and the queue draws (from the state the previous batch left), the baselines; then
  /// the host side of "after the step" (EMA baselines, the queue push of the batch's argmax,
  /// replay pushes), none of which depends on the weights. Rows up to row0 + pad_to are filled
  /// with empty programs (mask 0).
  Group stage(const EpisodeBatch& batch, int j, int row0, int pad_to) {
    const int t_max = o.max_len;
    Group g;
    g.row0 = row0;
    g.b = batch.batch_size;
    g.replaying = o.replay_enabled() && !replay.empty();
    g.nr = g.replaying ? o.replay_rows() : 0;
    g.npg = g.b + g.nr;
    StepStats& st = g.st;
    const int r0 = j * o.batch_size;  // first row of this batch in the per-episode staging
    float* rew = h_rewards.data_ptr<float>() + r0;
    float* blogp = h_blogp.data_ptr<float>() + static_cast<std::size_t>(r0) * t_max;
    float* stale = h_stale.data_ptr<float>() + r0;
    lags.clear();
    for (int i = 0; i < g.b; ++i) {
      const std::size_t row = static_cast<std::size_t>(i) * t_max;
      stage_row(row0 + i, batch.tokens.data() + row, batch.lengths[i]);
      rew[i] = batch.rewards[i];
      std::memcpy(blogp + row, batch.behaviour_log_probs.data() + row, sizeof(float) * t_max);
      const std::uint64_t pv = batch.policy_versions[i];
      const bool is_stale = pv != version;
      g.any_stale = g.any_stale || is_stale;
      st.stale_episodes += is_stale ? 1 : 0;
      stale[i] = is_stale ? 1.0f : 0.0f;
      lags.push_back(version > pv ? version - pv : 0);
    }
    if (o.replay_enabled()) {
      for (int i = 0; i < g.b; ++i) {
        g.log_q.push_back(replay.log_probability(batch.tokens.data() + static_cast<std::size_t>(i) * t_max,
                                                 static_cast<std::size_t>(batch.lengths[i])));
      }
      for (int r = g.b; r < g.npg; ++r) {
        const auto& item = replay.sample(rng);
        const int len = std::min<int>(static_cast<int>(item.program.size()), t_max);
        replay_tokens.clear();
        for (int t = 0; t < len; ++t) replay_tokens.push_back(static_cast<unsigned char>(item.program[t]));
        stage_row(row0 + r, replay_tokens.data(), len);
        rew[r] = static_cast<float>(item.reward);
        stale[r] = 0.0f;
        g.log_q.push_back(std::log(item.weight) - std::log(replay.total_weight()));
      }
      st.replayed_episodes = g.nr;
    }
    float* base = h_baselines.data_ptr<float>() + static_cast<std::size_t>(j) * t_max;
    for (int t = 0; t < t_max; ++t) base[t] = static_cast<float>(baselines[t]);
    if (o.topk_enabled()) {
      if (!queue.empty()) {
        for (int k = 0; k < o.topk_batch_size; ++k) {
          const auto& item = queue.sample(rng);
          const int len = std::min<int>(static_cast<int>(item.tokens.size()), t_max);
          stage_row(row0 + g.npg + k, item.tokens.data(), len);
        }
        g.k_rows = o.topk_batch_size;
        st.topk_samples = g.k_rows;
      } else if (o.dummy_topk_on_empty_queue) {
        const std::int32_t eos = kPolicyEosToken;
        stage_row(row0 + g.npg, &eos, 1);
        g.k_rows = 1;
      }
    }
    for (int r = g.npg + g.k_rows; r < pad_to; ++r) stage_row(row0 + r, nullptr, 0);

    // After the step, host side.
    update_ema_baselines(&baselines, batch.rewards, batch.lengths, o.ema_baseline_decay);
    int best = 0;  // the batch's argmax, first index on ties
    for (int i = 1; i < g.b; ++i) {
      if (batch.rewards[i] > batch.rewards[best]) best = i;
    }
    st.argmax_index = best;
    if (o.topk_enabled()) {
      const std::int32_t* row = batch.tokens.data() + static_cast<std::size_t>(best) * t_max;
      st.pushed = queue.push(batch.rewards[best], MaxUniquePriorityQueue::Tokens(row, row + batch.lengths[best]));
    }
    if (o.replay_enabled()) {
      for (int i = 0; i < g.b; ++i) {
        replay.push(batch.tokens.data() + static_cast<std::size_t>(i) * t_max,
                    static_cast<std::size_t>(batch.lengths[i]), batch.rewards[i]);
      }
    }
    double sum = 0.0;
    st.max_reward = batch.rewards[0];
    for (int i = 0; i < g.b; ++i) {
      sum += batch.rewards[i];
      st.max_reward = std::max<double>(st.max_reward, batch.rewards[i]);
    }
    st.mean_reward = sum / g.b;
    std::sort(lags.begin(), lags.end());
    st.lag_min = lags.front();
    st.lag_max = lags.back();
    st.lag_median = lags[lags.size() / 2];
    st.queue_size = queue.size();
    st.queue_max_score = queue.empty() ? 0.0 : queue.max().score;
    st.replay_size = replay.size();
    return g;
  }

  /// k = batches.size() consecutive updates of §5.7 (see the header): every batch's gradient
  /// is taken at the weights from before the first of them, then the k RMSProp updates run in
  /// order. k = 1 is exactly one update of the original.
  StepStats step(const std::vector<const EpisodeBatch*>& batches, PhaseProfiler* profiler) {
    const int k = static_cast<int>(batches.size());
    if (k < 1 || k > o.batches_per_update) {
      throw UsageError("a step takes 1 to " + std::to_string(o.batches_per_update) + " batches (batches_per_update), got " +
                       std::to_string(k));
    }
    for (const EpisodeBatch* b : batches) check_batch(*b);
    const int t_max = o.max_len;

    // 1. Batch build (host state advances batch by batch, as in the original).
    std::vector<Group> groups;
    int rows = 0;  // staged rows (k > 1: every group padded to rows_max)
    {
      auto scope = profile_scope(profiler, Phase::kBatchBuild);
      for (int j = 0; j < k; ++j) {
        const int row0 = j * rows_max;
        groups.push_back(stage(*batches[static_cast<std::size_t>(j)], j, row0, k > 1 ? rows_max : 0));
      }
      rows = k * (k > 1 ? rows_max : groups[0].npg + groups[0].k_rows);
    }
    bool any_stale = false;
    for (const Group& g : groups) any_stale = any_stale || g.any_stale;
    const bool lag_weights = any_stale && o.pg_enabled() && o.lag_correction != LagCorrection::kNone;

    // 2. Host -> device.
    torch::Tensor tokens, mask, rewards, base, blogp, stale;
    {
      auto scope = profile_scope(profiler, Phase::kHostToDevice);
      tokens = to_device(h_tokens.narrow(0, 0, rows));
      mask = to_device(h_mask.narrow(0, 0, rows));
      rewards = to_device(h_rewards.narrow(0, 0, k * o.batch_size));
      base = to_device(h_baselines.narrow(0, 0, k));
      if (lag_weights) {
        blogp = to_device(h_blogp.narrow(0, 0, k * o.batch_size));
        stale = to_device(h_stale.narrow(0, 0, k * o.batch_size));
      }
    }

    // 3. Forward, and each batch's total loss of §5.3 (plus, for the fused pass, dL/dlog pi(a)
    //    and dL/dH per position).
    torch::Tensor alp, ent_steps;  // [rows, T]
    torch::Tensor ca, ce;
    PolicyForward fwd;
    std::vector<torch::Tensor> totals, stat_rows;
    {
      auto scope = profile_scope(profiler, Phase::kForward);
      if (pass) {
        pass->forward(tokens, k);
        alp = pass->action_log_probs();
        ent_steps = pass->entropy_steps();
        ca = torch::zeros({rows, t_max}, alp.options());
        ce = torch::zeros({rows, t_max}, alp.options());
      } else {
        fwd = policy->forward(tokens, /*retain_embedding_grad=*/true);
        const torch::Tensor lp = torch::log_softmax(fwd.logits, 2);
        alp = action_log_probs(lp, tokens);
        const torch::Tensor lc = lp.clamp_min(kEntropyLogFloor);
        ent_steps = -(torch::exp(lc) * lc).sum(2);
      }
      for (int j = 0; j < k; ++j) {
        const Group& g = groups[static_cast<std::size_t>(j)];
        const torch::Tensor alp_b = alp.narrow(0, g.row0, g.npg);
        const torch::Tensor mask_b = mask.narrow(0, g.row0, g.npg);
        auto zero = torch::zeros({}, alp.options());
        torch::Tensor pg = zero, topk = zero;
        const torch::Tensor ent = entropy_from_steps(ent_steps.narrow(0, g.row0, g.npg), mask_b, kMagicLossMultiplier);
        torch::Tensor total = -o.entropy_beta * ent;
        if (pass) ce.narrow(0, g.row0, g.npg).copy_(mask_b * (-o.entropy_beta * kMagicLossMultiplier / g.npg));
        if (o.pg_enabled()) {
          const int r0 = j * o.batch_size;
          const torch::Tensor adv = advantages(rewards.narrow(0, r0, g.npg), base.select(0, j), mask_b);
          c10::optional<torch::Tensor> w;
          if (lag_weights) {
            torch::NoGradGuard no_grad;
            const torch::Tensor ratio = torch::exp(alp_b.detach() - blogp.narrow(0, r0, g.npg)).clamp_max(o.is_clip);
            w = torch::where(stale.narrow(0, r0, g.npg).unsqueeze(1) > 0, ratio, torch::ones_like(ratio));
          }
          if (o.replay_enabled()) {
            torch::NoGradGuard no_grad;
            torch::Tensor rw;
            if (!g.replaying) {
              rw = torch::zeros({g.npg, 1}, alp_b.options());  // empty buffer: no PG this step
            } else {
              const torch::Tensor lp_seq =
                  (alp_b.detach() * mask_b).sum(1).to(torch::kCPU, torch::kFloat64).contiguous();
              const std::vector<double> log_p(lp_seq.data_ptr<double>(), lp_seq.data_ptr<double>() + g.npg);
              const std::vector<double> iw =
                  replay_importance_weights(g.log_q, log_p, static_cast<double>(g.nr) / g.npg, o.iw_normalize);
              rw = torch::tensor(iw, torch::TensorOptions().dtype(torch::kFloat64))
                       .to(alp_b.device(), torch::kFloat32)
                       .unsqueeze(1);
            }
            w = w ? *w * rw : rw.expand({g.npg, t_max});
          }
          pg = pg_loss(alp_b, adv, mask_b, kMagicLossMultiplier, w);
          total = total + o.pi_loss_hparam * pg;
          if (pass) {
            const torch::Tensor a = w ? adv * *w : adv;
            ca.narrow(0, g.row0, g.npg).add_(a * mask_b, -o.pi_loss_hparam * kMagicLossMultiplier / g.npg);
          }
        }
        if (g.k_rows > 0) {
          // The queue rows follow the fresh and the replayed rows.
          const torch::Tensor mask_k = mask.narrow(0, g.row0 + g.npg, g.k_rows);
          topk = topk_loss(alp.narrow(0, g.row0 + g.npg, g.k_rows), mask_k);
          total = total + o.topk_loss_hparam * topk;
          if (pass) ca.narrow(0, g.row0 + g.npg, g.k_rows).copy_(mask_k * (-o.topk_loss_hparam / g.k_rows));
        }
        if (o.regularizer != 0.0) {
          torch::Tensor reg = zero;
          for (const auto& kern : policy->kernels) reg = reg + 0.5 * kern.pow(2).sum();
          reg = reg + 0.5 * policy->output.pow(2).sum();
          total = total + o.regularizer * reg;
        }
        totals.push_back(total);
        stat_rows.push_back(torch::stack({total.detach(), pg.detach(), ent.detach(), topk.detach()}));
      }
    }

    // 4. Each batch's gradient of every parameter (blob order) and the sum of squares of its
    //    per-lookup embedding gradient.
    std::vector<std::vector<torch::Tensor>> grads(static_cast<std::size_t>(k));
    std::vector<torch::Tensor> lookup_sq(static_cast<std::size_t>(k));
    const std::vector<torch::Tensor> params = policy->blob_parameters();
    {
      auto scope = profile_scope(profiler, Phase::kBackward);
      if (pass) {
        pass->backward(ca, ce);
        for (int j = 0; j < k; ++j) {
          std::vector<torch::Tensor>& gr = grads[static_cast<std::size_t>(j)];
          gr = pass->group_grads(j);
          lookup_sq[static_cast<std::size_t>(j)] = torch::tensor(pass->lookup_sq(j), alp.options());
          if (o.regularizer != 0.0) {
            // d/dW of reg * sum 1/2 |W|^2 on the kernels and the output (not the embedding);
            // blob order is embedding, (kernel, bias) per layer, output.
            torch::NoGradGuard no_grad;
            for (std::size_t q = 1; q + 1 < params.size(); q += 2) gr[q].add_(params[q], o.regularizer);
            gr.back().add_(params.back(), o.regularizer);
          }
        }
      } else {
        std::vector<torch::Tensor> inputs = params;
        inputs.push_back(fwd.embedded);
        for (int j = 0; j < k; ++j) {
          std::vector<torch::Tensor> g = torch::autograd::grad({totals[static_cast<std::size_t>(j)]}, inputs, {},
                                                               /*retain_graph=*/j + 1 < k, false, /*allow_unused=*/true);
          for (std::size_t q = 0; q < params.size(); ++q) {
            grads[static_cast<std::size_t>(j)].push_back(g[q].defined() ? g[q] : torch::zeros_like(params[q]));
          }
          lookup_sq[static_cast<std::size_t>(j)] = g.back().defined() ? g.back().pow(2).sum() : g[0].pow(2).sum();
        }
      }
    }

    // 5. Clip and RMSProp, batch after batch.
    std::vector<torch::Tensor> norms;
    {
      auto scope = profile_scope(profiler, Phase::kOptimizer);
      torch::NoGradGuard no_grad;
      for (int j = 0; j < k; ++j) {
        std::vector<torch::Tensor>& gr = grads[static_cast<std::size_t>(j)];
        // Global norm as TF computes it: the embedding gradient counts once per lookup
        // (IndexedSlices values), the dense ones as they are.
        torch::Tensor sq = lookup_sq[static_cast<std::size_t>(j)];
        for (std::size_t q = 1; q < gr.size(); ++q) sq = sq + gr[q].pow(2).sum();
        const torch::Tensor norm = sq.sqrt();
        norms.push_back(norm);
        if (o.grad_clip > 0.0) {
          const torch::Tensor scale = o.grad_clip / torch::clamp_min(norm, o.grad_clip);
          for (auto& g : gr) g.mul_(scale);
        }
        // Sparse embedding update: the rows this batch looked up (padding included).
        const Group& g = groups[static_cast<std::size_t>(j)];
        const torch::Tensor looked_up =
            pass ? pass->group_input_tokens(j)
                 : fwd.input_tokens.narrow(0, g.row0, g.npg + g.k_rows).reshape({-1});
        const torch::Tensor emb_rows =
            torch::zeros({o.shape.vocab}, torch::TensorOptions().dtype(torch::kFloat32).device(device))
                .index_fill_(0, looked_up, 1.0);
        optimizer.apply_row_mask(0, emb_rows, gr[0]);
        for (std::size_t q = 1; q < gr.size(); ++q) optimizer.apply_dense(q, gr[q]);
        ++version;
      }
    }

    // 6. Stats: one read-back, which also waits for all device work of this step.
    std::vector<torch::Tensor> all;
    for (int j = 0; j < k; ++j) {
      all.push_back(torch::cat({stat_rows[static_cast<std::size_t>(j)], norms[static_cast<std::size_t>(j)].reshape({1})}));
    }
    const torch::Tensor stats = torch::stack(all).to(torch::kCPU, torch::kFloat64).contiguous();
    const double* s = stats.data_ptr<double>() + static_cast<std::size_t>(k - 1) * kNumStats;
    StepStats st = groups.back().st;
    st.version = version;
    st.total_loss = s[kStatTotal];
    st.pg_loss = s[kStatPg];
    st.entropy = s[kStatEntropy];
    st.topk_loss = s[kStatTopk];
    st.grad_norm = s[kStatNorm];
    st.clipped = o.grad_clip > 0.0 && st.grad_norm > o.grad_clip;
    return st;
  }
};

PqtLearner::PqtLearner(const LearnerOptions& options) {
  options.validate();
  impl_ = std::make_unique<Impl>(options);
}

PqtLearner::~PqtLearner() = default;

StepStats PqtLearner::step(const EpisodeBatch& batch, PhaseProfiler* profiler) {
  return impl_->step({&batch}, profiler);
}

StepStats PqtLearner::step(const std::vector<EpisodeBatch>& batches, PhaseProfiler* profiler) {
  std::vector<const EpisodeBatch*> ptrs;
  for (const EpisodeBatch& b : batches) ptrs.push_back(&b);
  return impl_->step(ptrs, profiler);
}

void PqtLearner::write_blob(float* dst) const { impl_->policy->write_blob(dst); }
void PqtLearner::read_blob(const float* src) { impl_->policy->read_blob(src); }
const PolicyLayout& PqtLearner::layout() const { return impl_->policy->layout(); }
const LearnerOptions& PqtLearner::options() const { return impl_->o; }
std::uint64_t PqtLearner::version() const { return impl_->version; }
std::string PqtLearner::device() const { return impl_->device.str(); }
const std::vector<double>& PqtLearner::baselines() const { return impl_->baselines; }
const MaxUniquePriorityQueue& PqtLearner::queue() const { return impl_->queue; }
MaxUniquePriorityQueue& PqtLearner::queue() { return impl_->queue; }
int PqtLearner::fresh_batch_size() const { return impl_->fresh_batch_size(); }
const ProportionalReplayBuffer& PqtLearner::replay() const { return impl_->replay; }

std::function<void()> PqtLearner::device_synchronizer() const {
  if (!impl_->device.is_cuda()) return {};
  const auto index = impl_->device.index();
  return [index] { torch::cuda::synchronize(index); };
}

std::vector<float> PqtLearner::logits(const std::vector<std::int32_t>& tokens, int b, int t) const {
  if (b < 1 || t < 1 || tokens.size() != static_cast<std::size_t>(b) * t) {
    throw UsageError("logits: tokens must hold b*t = " + std::to_string(b) + "*" + std::to_string(t) +
                     " entries, got " + std::to_string(tokens.size()));
  }
  torch::NoGradGuard no_grad;
  auto host = torch::empty({b, t}, torch::kInt64);
  for (std::size_t k = 0; k < tokens.size(); ++k) host.data_ptr<int64_t>()[k] = tokens[k];
  const torch::Tensor out = impl_->policy->forward(host.to(impl_->device)).logits.to(torch::kCPU).contiguous();
  return std::vector<float>(out.data_ptr<float>(), out.data_ptr<float>() + out.numel());
}

void PqtLearner::save(ByteWriter& w) const {
  const Impl& m = *impl_;
  pqt_format::write_learner_head(w, {m.policy->layout().fingerprint(), m.o.max_len, m.version});
  put_tensors(w, m.policy->blob_parameters());
  put_tensors(w, m.optimizer.accumulators());
  w.put_vector(m.baselines);
  std::ostringstream rng;
  rng << m.rng;
  w.put_string(rng.str());
  m.queue.save(w);
  m.replay.save(w);
}

void PqtLearner::load(ByteReader& r) {
  Impl& m = *impl_;
  // 1. Decode and check everything.
  const pqt_format::LearnerHead head = pqt_format::read_learner_head(r);
  if (head.fingerprint != m.policy->layout().fingerprint()) {
    r.fail("learner state has policy layout fingerprint " + std::to_string(head.fingerprint) + ", this learner " +
           std::to_string(m.policy->layout().fingerprint()) + " (a different policy shape)");
  }
  if (head.max_len != m.o.max_len) {
    r.fail("learner state has T (max_len) " + std::to_string(head.max_len) + ", this learner " +
           std::to_string(m.o.max_len));
  }
  const std::uint64_t version = head.version;
  const std::vector<torch::Tensor> params = get_tensors(r, m.policy->blob_parameters(), "parameters");
  const std::vector<torch::Tensor> accs = get_tensors(r, m.optimizer.accumulators(), "RMSProp accumulators");
  std::vector<double> baselines = r.get_vector<double>(m.baselines.size());
  if (baselines.size() != m.baselines.size()) {
    r.fail("learner state has " + std::to_string(baselines.size()) + " baselines, expected " +
           std::to_string(m.baselines.size()));
  }
  std::istringstream rng_in(r.get_string(kMaxRngStateChars));
  std::mt19937_64 rng;
  rng_in >> rng;
  if (!rng_in) r.fail("learner state has a malformed sampling RNG state");
  MaxUniquePriorityQueue queue = MaxUniquePriorityQueue::load(r);
  ProportionalReplayBuffer replay(m.o.replay_capacity, m.o.replay_temperature);
  replay.load(r);

  // 2. Apply.
  {
    torch::NoGradGuard no_grad;
    const std::vector<torch::Tensor> dst_params = m.policy->blob_parameters();
    for (std::size_t k = 0; k < dst_params.size(); ++k) dst_params[k].copy_(params[k]);
    std::vector<torch::Tensor>& dst_accs = m.optimizer.accumulators();
    for (std::size_t k = 0; k < dst_accs.size(); ++k) dst_accs[k].copy_(accs[k]);
  }
  m.baselines = std::move(baselines);
  m.rng = rng;
  m.queue = std::move(queue);
  m.replay = std::move(replay);
  m.version = version;
}

}  // namespace ringrl::learner
