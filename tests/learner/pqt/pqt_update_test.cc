// Tests for learner/pqt/pqt_update.h: options, step order (§5.7), quirks, checkpoints.
#include "learner/pqt/pqt_update.h"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "common/byte_codec.h"
#include "common/checkpoint.h"

namespace ringrl::learner {
namespace {

constexpr int kB = 4;
constexpr int kT = 6;

LearnerOptions small(TrainMode mode) {
  LearnerOptions o = LearnerOptions::paper(mode);
  o.batch_size = kB;
  o.max_len = kT;
  o.device = "cpu";
  return o;
}

EpisodeBatch random_batch(std::uint64_t seed, std::uint64_t version) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> tok(1, 8);
  std::uniform_real_distribution<float> rew(-0.5f, 1.0f);
  EpisodeBatch b;
  b.resize(kB, kT);
  for (auto& t : b.tokens) t = tok(rng);
  for (auto& l : b.lengths) l = kT;
  for (auto& r : b.rewards) r = rew(rng);
  for (auto& lp : b.behaviour_log_probs) lp = std::log(1.0f / 8);
  for (auto& v : b.policy_versions) v = version;
  return b;
}

TEST(PqtLearner, OptionsValidation) {
  torch::set_num_threads(1);
  EXPECT_EQ(parse_train_mode("pg+pqt"), TrainMode::kPgPqt);
  EXPECT_EQ(parse_train_mode("topk"), TrainMode::kPqt);
  EXPECT_THROW(parse_train_mode("ppo"), UsageError);
  LearnerOptions o = small(TrainMode::kPqt);
  EXPECT_EQ(o.pi_loss_hparam, 0.0);  // PQT-only: pi 0, entropy on (pitfall 12)
  EXPECT_EQ(o.entropy_beta, 0.01);
  EXPECT_EQ(o.topk_loss_hparam, 200.0);
  o.topk = 0;
  EXPECT_THROW(PqtLearner{o}, UsageError);
  o = small(TrainMode::kPg);
  o.lr = 0.0;
  EXPECT_THROW(PqtLearner{o}, UsageError);
  o = small(TrainMode::kPg);
  o.device = "tpu";
  EXPECT_THROW(PqtLearner{o}, UsageError);
  if (!torch::cuda::is_available()) {
    o.device = "cuda:0";
    EXPECT_THROW(PqtLearner{o}, UsageError);
    o.device = "auto";
    EXPECT_EQ(PqtLearner(o).device(), "cpu");
  }
}

TEST(PqtLearner, BadBatchThrowsBeforeChangingState) {
  PqtLearner l(small(TrainMode::kPqt));
  EpisodeBatch b = random_batch(1, 0);
  b.tokens[3] = 9;
  EXPECT_THROW(l.step(b), UsageError);
  b = random_batch(1, 0);
  b.lengths[0] = kT + 1;
  EXPECT_THROW(l.step(b), UsageError);
  EXPECT_EQ(l.version(), 0u);
  EXPECT_TRUE(l.queue().empty());
}

TEST(PqtLearner, StepOrderQueueAndBaselines) {
  PqtLearner l(small(TrainMode::kPqt));
  EpisodeBatch b = random_batch(2, 0);
  b.rewards = {0.1f, 0.7f, 0.7f, 0.3f};  // argmax tie: first index wins
  b.lengths[1] = 4;
  StepStats s = l.step(b);
  // First step: empty queue -> dummy [EOS] target; EOS is masked, so the loss is huge
  // (the faithful quirk) but the gradient is finite.
  EXPECT_EQ(s.topk_samples, 0);
  EXPECT_GT(s.topk_loss, 1e37);
  EXPECT_TRUE(std::isfinite(s.grad_norm));
  EXPECT_EQ(s.argmax_index, 1);
  EXPECT_TRUE(s.pushed);
  EXPECT_EQ(s.version, 1u);
  ASSERT_EQ(l.queue().size(), 1u);
  EXPECT_EQ(l.queue().max().tokens.size(), 4u);  // the episode's own length
  EXPECT_FLOAT_EQ(static_cast<float>(l.queue().max().score), 0.7f);
  // Baselines updated after the step, sequentially in episode order (decay 0.99).
  double b0 = 0.0;
  for (float r : b.rewards) b0 = 0.99 * b0 + 0.01 * r;
  EXPECT_NEAR(l.baselines()[0], b0, 1e-7);
  double b5 = 0.0;
  for (int i = 0; i < kB; ++i) {
    if (b.lengths[i] > 5) b5 = 0.99 * b5 + 0.01 * b.rewards[i];
  }
  EXPECT_NEAR(l.baselines()[5], b5, 1e-7);
  // Second step trains on the one queued program.
  s = l.step(random_batch(3, 1));
  EXPECT_EQ(s.topk_samples, 1);
  EXPECT_TRUE(std::isfinite(s.topk_loss));
  EXPECT_GT(s.topk_loss, 0.0);
  EXPECT_TRUE(std::isfinite(s.total_loss));
}

TEST(PqtLearner, SkippingTheDummyTargetIsAnOption) {
  LearnerOptions o = small(TrainMode::kPqt);
  o.dummy_topk_on_empty_queue = false;
  PqtLearner l(o);
  const StepStats s = l.step(random_batch(4, 0));
  EXPECT_EQ(s.topk_loss, 0.0);
  EXPECT_TRUE(std::isfinite(s.total_loss));
}

TEST(PqtLearner, GradientClippingAndLossTerms) {
  LearnerOptions o = small(TrainMode::kPgPqt);
  o.grad_clip = 1e-3;
  PqtLearner l(o);
  StepStats s = l.step(random_batch(5, 0));
  EXPECT_TRUE(s.clipped);
  EXPECT_GT(s.grad_norm, 1e-3);
  EXPECT_NE(s.pg_loss, 0.0);
  EXPECT_GT(s.entropy, 0.0);
  // Entropy of a near-uniform policy over 8 live tokens: ~ 64 * T * ln 8.
  EXPECT_NEAR(s.entropy / (64.0 * kT), std::log(8.0), 0.2);
}

TEST(PqtLearner, StaleEpisodesAreCounted) {
  PqtLearner l(small(TrainMode::kPg));
  l.step(random_batch(6, 0));
  l.step(random_batch(7, 1));
  EpisodeBatch b = random_batch(8, 2);
  b.policy_versions = {2, 1, 0, 2};
  const StepStats s = l.step(b);
  EXPECT_EQ(s.stale_episodes, 2);
  EXPECT_EQ(s.lag_min, 0u);
  EXPECT_EQ(s.lag_max, 2u);
  EXPECT_TRUE(std::isfinite(s.total_loss));
}

/// The state `save` writes, as bytes.
template <class T>
std::string saved(const T& x) {
  std::string bytes;
  StringSink sink(&bytes);
  ByteWriter w(sink);
  x.save(w);
  return bytes;
}

void load(PqtLearner& l, const std::string& bytes) {
  MemorySource src(bytes);
  ByteReader r(src, "test learner state");
  l.load(r);
  r.expect_end();
}

/// Expects load() to throw CorruptData whose message contains `part`.
void expect_refused(PqtLearner& l, const std::string& bytes, const std::string& part) {
  try {
    load(l, bytes);
    ADD_FAILURE() << "accepted a state that should fail with '" << part << "'";
  } catch (const CorruptData& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("test learner state: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  }
}

TEST(PqtLearner, CheckpointRestoresExactState) {
  LearnerOptions o = small(TrainMode::kPgPqt);
  PqtLearner a(o);
  for (int i = 0; i < 3; ++i) a.step(random_batch(10 + i, a.version()));
  const std::string state = saved(a);
  o.seed = 77;  // different init: everything must come from the checkpoint
  PqtLearner b(o);
  std::vector<float> before(b.layout().num_floats());
  b.write_blob(before.data());
  expect_refused(b, state.substr(0, 100), "truncated");
  expect_refused(b, state.substr(0, state.size() - 1), "");
  std::vector<float> after(b.layout().num_floats());
  b.write_blob(after.data());
  EXPECT_EQ(before, after);  // a refused state changes nothing
  EXPECT_EQ(b.version(), 0u);
  load(b, state);
  EXPECT_EQ(b.version(), a.version());
  EXPECT_EQ(saved(b.queue()), saved(a.queue()));
  EXPECT_EQ(b.baselines(), a.baselines());
  EXPECT_EQ(saved(b), state);
  const StepStats sa = a.step(random_batch(20, 3));
  const StepStats sb = b.step(random_batch(20, 3));
  EXPECT_EQ(sa.total_loss, sb.total_loss);
  std::vector<float> ba(a.layout().num_floats()), bb(b.layout().num_floats());
  a.write_blob(ba.data());
  b.write_blob(bb.data());
  EXPECT_EQ(ba, bb);
  LearnerOptions other = small(TrainMode::kPgPqt);
  other.max_len = kT + 1;
  PqtLearner c(other);
  expect_refused(c, state, "T (max_len) 6, this learner 7");
  other = small(TrainMode::kPgPqt);
  other.shape.embedding += 1;
  PqtLearner d(other);
  expect_refused(d, state, "policy layout fingerprint");
  std::string bad_tag = state;
  bad_tag[0] = 'X';
  expect_refused(b, bad_tag, "bad tag");
}

TEST(PqtLearner, CheckpointFileRoundTrip) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("ringrl-pqt-update-test-" + std::to_string(::getpid()) + ".bin");
  LearnerOptions o = small(TrainMode::kPgPqt);
  PqtLearner a(o);
  for (int i = 0; i < 2; ++i) a.step(random_batch(50 + i, a.version()));
  {
    CheckpointWriter w(path, "pqt");
    a.save(w.section("learner"));
    w.commit();
  }
  PqtLearner b(o);
  {
    CheckpointReader r(path, "pqt");
    ByteReader& in = r.section("learner");
    b.load(in);
    in.expect_end();
  }
  EXPECT_EQ(saved(b), saved(a));
  // A learner of another T names the file, the section and the mismatch.
  LearnerOptions other = small(TrainMode::kPgPqt);
  other.max_len = kT + 2;
  PqtLearner c(other);
  CheckpointReader r(path, "pqt");
  try {
    c.load(r.section("learner"));
    ADD_FAILURE() << "accepted a state of another T";
  } catch (const CorruptData& e) {
    EXPECT_EQ(std::string(e.what()),
              "checkpoint " + path.string() + ", section learner: learner state has T (max_len) 6, this learner 8");
  }
  std::filesystem::remove(path);
}

/// log pi(a_t) of each row under the learner's current policy (teacher-forced logits).
std::vector<std::vector<double>> token_log_probs(const PqtLearner& l, const std::vector<std::int32_t>& tokens,
                                                 int rows) {
  const std::vector<float> logits = l.logits(tokens, rows, kT);
  const int v = static_cast<int>(logits.size()) / (rows * kT);
  std::vector<std::vector<double>> out(static_cast<std::size_t>(rows));
  for (int i = 0; i < rows; ++i) {
    for (int t = 0; t < kT; ++t) {
      const float* z = logits.data() + (static_cast<std::size_t>(i) * kT + t) * v;
      double m = z[0];
      for (int a = 1; a < v; ++a) m = std::max<double>(m, z[a]);
      double sum = 0.0;
      for (int a = 0; a < v; ++a) sum += std::exp(z[a] - m);
      out[i].push_back(z[tokens[static_cast<std::size_t>(i) * kT + t]] - m - std::log(sum));
    }
  }
  return out;
}

TEST(PqtLearner, ExperienceReplayWeightsMatchHandComputedValues) {
  LearnerOptions o = small(TrainMode::kPg);
  o.alpha = 0.5;  // nr = int(4 * 0.5) = 2 replayed rows per step
  PqtLearner l(o);
  EXPECT_EQ(l.fresh_batch_size(), kB);  // empty buffer: all B fresh
  const std::vector<std::int32_t> p = {1, 2, 3, 4, 5, 6};
  EpisodeBatch first = random_batch(30, 0);
  for (int i = 0; i < kB; ++i) {
    std::copy(p.begin(), p.end(), first.tokens.begin() + i * kT);
    first.rewards[i] = 0.4f;
  }
  StepStats s = l.step(first);
  EXPECT_EQ(s.pg_loss, 0.0);  // empty buffer: the PG multipliers are zero (§5.5)
  EXPECT_EQ(s.replayed_episodes, 0);
  EXPECT_EQ(l.replay().size(), 1u);  // four copies of one program
  ASSERT_EQ(l.fresh_batch_size(), kB - 2);
  EXPECT_THROW(l.step(random_batch(31, 1)), UsageError);  // B fresh rows leave no room

  EpisodeBatch second;
  second.resize(2, kT);
  const std::vector<std::int32_t> f1 = {2, 2, 7, 1, 8, 3}, f2 = {5, 1, 1, 6, 2, 4};
  std::copy(f1.begin(), f1.end(), second.tokens.begin());
  std::copy(f2.begin(), f2.end(), second.tokens.begin() + kT);
  second.lengths = {kT, kT};
  second.rewards = {-0.2f, 0.9f};
  second.behaviour_log_probs.assign(2 * kT, std::log(1.0f / 8));
  second.policy_versions = {l.version(), l.version()};

  // Expected: rows F1, F2 (not in the buffer, q = 0) then P twice (q = 1).
  std::vector<std::int32_t> all(f1);
  all.insert(all.end(), f2.begin(), f2.end());
  all.insert(all.end(), p.begin(), p.end());
  const auto lp = token_log_probs(l, all, 3);
  double log_p_p = 0.0;
  for (double x : lp[2]) log_p_p += x;
  const double a = 2.0 / 4.0;
  const double w_fresh = 1.0 / (1.0 - a);
  const double w_p = 1.0 / ((1.0 - a) + a * std::exp(0.0 - log_p_p));
  const double scale = 4.0 / (2 * w_fresh + 2 * w_p);  // iw_normalize: sum to the row count
  const std::vector<int> row_seq = {0, 1, 2, 2};
  const std::vector<double> rewards = {-0.2, 0.9, 0.4, 0.4};
  const std::vector<double> weights = {w_fresh, w_fresh, w_p, w_p};
  const std::vector<double> base = l.baselines();
  double expected = 0.0;
  for (int i = 0; i < 4; ++i) {
    for (int t = 0; t < kT; ++t) {
      expected += lp[row_seq[i]][t] * (rewards[i] - base[t]) * weights[i] * scale;
    }
  }
  expected *= -64.0 / 4.0;

  s = l.step(second);
  EXPECT_EQ(s.replayed_episodes, 2);
  EXPECT_NEAR(s.pg_loss, expected, 1e-4 * std::abs(expected) + 1e-6);
  EXPECT_EQ(l.replay().size(), 3u);                      // the fresh programs joined after the step
  EXPECT_NEAR(s.mean_reward, (-0.2 + 0.9) / 2.0, 1e-6);  // stats: fresh episodes only
}

TEST(PqtLearner, TopkTermTrainsOnTheQueueProgramWhileReplaying) {
  LearnerOptions o = small(TrainMode::kPgPqt);
  o.alpha = 0.5;  // 2 replayed rows per step once the buffer holds a program
  o.topk = 1;     // the queue holds exactly the program this test puts there
  PqtLearner l(o);
  const std::vector<std::int32_t> p = {1, 2, 3, 4, 5, 6};
  EpisodeBatch first = random_batch(60, 0);
  for (int i = 0; i < kB; ++i) {
    std::copy(p.begin(), p.end(), first.tokens.begin() + i * kT);
    first.rewards[i] = 0.4f;
  }
  l.step(first);  // fills the replay buffer (and the queue) with p
  ASSERT_EQ(l.replay().size(), 1u);
  // A queue program unlike every replayed row: other tokens, a shorter length.
  const std::vector<std::int32_t> q = {3, 7, 7, 2};
  ASSERT_TRUE(l.queue().push(5.0, q));
  ASSERT_EQ(l.queue().size(), 1u);
  ASSERT_EQ(l.queue().max().tokens, q);

  // Expected L_topk: -sum_t log pi(q_t) under the policy before the step.
  std::vector<std::int32_t> padded(q);
  padded.resize(kT, 1);  // the tokens after len(q) do not change the logits before it
  const auto lp = token_log_probs(l, padded, 1);
  double expected = 0.0;
  for (std::size_t t = 0; t < q.size(); ++t) expected -= lp[0][t];

  EpisodeBatch second = random_batch(61, l.version());
  second.resize(l.fresh_batch_size(), kT);
  const StepStats s = l.step(second);
  EXPECT_EQ(s.replayed_episodes, 2);
  EXPECT_EQ(s.topk_samples, 1);
  EXPECT_NEAR(s.topk_loss, expected, 1e-4 * std::abs(expected));
}

TEST(PqtLearner, ExperienceReplayOptionsAndCheckpoint) {
  LearnerOptions o = small(TrainMode::kPqt);
  o.alpha = 0.5;
  EXPECT_THROW(PqtLearner{o}, UsageError);  // replay weights the PG term
  o = small(TrainMode::kPgPqt);
  o.alpha = 1.0;
  EXPECT_THROW(PqtLearner{o}, UsageError);
  o.alpha = 0.75;
  o.replay_temperature = 0.0;
  EXPECT_THROW(PqtLearner{o}, UsageError);
  o.replay_temperature = 0.5;
  PqtLearner a(o);
  a.step(random_batch(40, 0));
  EpisodeBatch b = random_batch(41, 1);
  b.resize(a.fresh_batch_size(), kT);
  a.step(b);
  PqtLearner c(o);
  load(c, saved(a));
  EXPECT_EQ(saved(c.replay()), saved(a.replay()));
  EXPECT_EQ(c.fresh_batch_size(), 1);
  b = random_batch(42, 2);
  b.resize(1, kT);
  EXPECT_EQ(a.step(b).total_loss, c.step(b).total_loss);  // same draws, same weights
}

std::vector<float> blob_of(const PqtLearner& l) {
  std::vector<float> w(l.layout().num_floats());
  l.write_blob(w.data());
  return w;
}

// The fused pass and the eager (autograd) path give the same updates. Each loss term of §5.3
// is held by a case where it alone moves the weights (PG with the baselines, the lag and the
// replay importance weights, entropy, top-k, the regularizer, the global norm's embedding
// share through clipping), and the paper modes hold them together. The comparison is on the
// weight deltas, relative to the largest: a term dropped or mis-scaled in one path changes its
// case's deltas by far more than kRelTol (float32 summation order stays below 1e-5 of it).
struct KernelCase {
  const char* name;
  TrainMode mode;
  double alpha = 0.0;
  bool stale = false;  // episodes of version 0 with spread behaviour log-probs (lag weights < 1)
  std::function<void(LearnerOptions&)> tune = [](LearnerOptions&) {};
};

constexpr double kRelTol = 1e-4;

void PrintTo(const KernelCase& c, std::ostream* os) { *os << c.name; }

class PqtKernels : public ::testing::TestWithParam<KernelCase> {};

TEST_P(PqtKernels, FusedAndEagerGiveTheSameUpdates) {
  torch::set_num_threads(1);
  const KernelCase c = GetParam();
  LearnerOptions o = small(c.mode);
  o.alpha = c.alpha;
  o.lr = 1e-3;  // large enough that the weights move visibly
  c.tune(o);
  LearnerOptions e = o;
  o.policy_kernel = PolicyKernel::kFused;
  e.policy_kernel = PolicyKernel::kEager;
  PqtLearner fused(o), eager(e);
  const std::vector<float> w0 = blob_of(fused);
  std::mt19937_64 mu_rng(7);
  std::uniform_real_distribution<float> mu(0.02f, 0.6f);
  for (int s = 0; s < 6; ++s) {
    EpisodeBatch b = random_batch(100 + s, c.stale ? 0 : fused.version());
    if (c.stale) {
      for (auto& lp : b.behaviour_log_probs) lp = std::log(mu(mu_rng));
    }
    b.resize(fused.fresh_batch_size(), kT);
    const StepStats sf = fused.step(b);
    const StepStats se = eager.step(b);
    EXPECT_NEAR(sf.entropy, se.entropy, 1e-4 * std::abs(se.entropy)) << "step " << s;
    EXPECT_NEAR(sf.pg_loss, se.pg_loss, 1e-4 * std::max(1.0, std::abs(se.pg_loss))) << "step " << s;
    if (std::isfinite(se.topk_loss)) {
      EXPECT_NEAR(sf.topk_loss, se.topk_loss, 1e-4 * std::max(1.0, se.topk_loss));
    }
    EXPECT_NEAR(sf.grad_norm, se.grad_norm, 1e-4 * se.grad_norm) << "step " << s;
    EXPECT_EQ(sf.clipped, se.clipped) << "step " << s;
  }
  const std::vector<float> wf = blob_of(fused), we = blob_of(eager);
  double moved = 0.0, apart = 0.0;
  for (std::size_t i = 0; i < w0.size(); ++i) {
    moved = std::max(moved, std::abs(static_cast<double>(we[i]) - w0[i]));
    apart = std::max(apart, std::abs((static_cast<double>(wf[i]) - w0[i]) - (static_cast<double>(we[i]) - w0[i])));
  }
  EXPECT_GT(moved, 1e-4) << "the updates were not trivial";
  EXPECT_LT(apart, kRelTol * moved) << "largest delta " << moved;
  std::printf("[ %-12s ] largest delta %.3g, fused - eager %.3g (%.2g of it)\n", c.name, moved, apart, apart / moved);
}

INSTANTIATE_TEST_SUITE_P(
    Terms, PqtKernels,
    ::testing::Values(
        // The paper modes, every term at once.
        KernelCase{"pqt", TrainMode::kPqt}, KernelCase{"pg", TrainMode::kPg},
        KernelCase{"pg_pqt_stale", TrainMode::kPgPqt, 0.0, true}, KernelCase{"pg_replay", TrainMode::kPg, 0.5},
        KernelCase{"pg_pqt_reg", TrainMode::kPgPqt, 0.0, false, [](LearnerOptions& o) { o.regularizer = 1.0; }},
        // One term each.
        KernelCase{"only_pg", TrainMode::kPg, 0.0, false,
                   [](LearnerOptions& o) {
                     o.entropy_beta = 0.0;
                     o.ema_baseline_decay = 0.5;  // baselines near the rewards from step 2 on
                   }},
        KernelCase{"only_pg_lag", TrainMode::kPg, 0.0, true, [](LearnerOptions& o) { o.entropy_beta = 0.0; }},
        KernelCase{"only_pg_replay", TrainMode::kPg, 0.5, false, [](LearnerOptions& o) { o.entropy_beta = 0.0; }},
        KernelCase{"only_entropy", TrainMode::kPg, 0.0, false,
                   [](LearnerOptions& o) {
                     o.pi_loss_hparam = 0.0;
                     o.entropy_beta = 5.0;
                   }},
        KernelCase{"only_topk", TrainMode::kPqt, 0.0, false, [](LearnerOptions& o) { o.entropy_beta = 0.0; }},
        KernelCase{"only_reg", TrainMode::kPg, 0.0, false,
                   [](LearnerOptions& o) {
                     o.pi_loss_hparam = 0.0;
                     o.entropy_beta = 0.0;
                     o.regularizer = 0.5;
                   }},
        KernelCase{"clipped", TrainMode::kPgPqt, 0.0, false, [](LearnerOptions& o) { o.grad_clip = 0.5; }}),
    [](const auto& info) { return std::string(info.param.name); });

// batches_per_update k: the host state (baselines, queue, version) advances exactly as k
// consecutive updates, and the weights differ from them only by the gradients' staleness
// (tiny at a small learning rate). Both kernels.
class PqtBatchesPerUpdate : public ::testing::TestWithParam<PolicyKernel> {};

TEST_P(PqtBatchesPerUpdate, MatchesConsecutiveUpdatesUpToStaleness) {
  torch::set_num_threads(1);
  LearnerOptions o = small(TrainMode::kPgPqt);
  o.lr = 1e-5;
  o.policy_kernel = GetParam();
  LearnerOptions ok = o;
  ok.batches_per_update = 2;
  PqtLearner one(o), two(ok);
  const std::vector<float> w0 = blob_of(one);
  std::vector<EpisodeBatch> batches;
  for (int s = 0; s < 4; ++s) batches.push_back(random_batch(200 + s, 0));
  for (const auto& b : batches) one.step(b);
  const StepStats st = two.step(std::vector<EpisodeBatch>{batches[0], batches[1]});
  EXPECT_EQ(st.version, 2u);
  two.step(std::vector<EpisodeBatch>{batches[2], batches[3]});
  EXPECT_EQ(two.version(), one.version());
  ASSERT_EQ(two.baselines().size(), one.baselines().size());
  for (std::size_t t = 0; t < one.baselines().size(); ++t) EXPECT_DOUBLE_EQ(two.baselines()[t], one.baselines()[t]);
  EXPECT_EQ(two.queue().size(), one.queue().size());
  EXPECT_EQ(two.queue().max().tokens, one.queue().max().tokens);
  const std::vector<float> w1 = blob_of(one), w2 = blob_of(two);
  double moved = 0.0, apart = 0.0;
  for (std::size_t i = 0; i < w0.size(); ++i) {
    moved += (static_cast<double>(w1[i]) - w0[i]) * (static_cast<double>(w1[i]) - w0[i]);
    apart += (static_cast<double>(w2[i]) - w1[i]) * (static_cast<double>(w2[i]) - w1[i]);
  }
  EXPECT_GT(std::sqrt(moved), 1e-5);
  EXPECT_LT(std::sqrt(apart), 1e-2 * std::sqrt(moved));
}

INSTANTIATE_TEST_SUITE_P(Kernels, PqtBatchesPerUpdate, ::testing::Values(PolicyKernel::kFused, PolicyKernel::kEager));

TEST(PqtLearner, BatchesPerUpdateOptions) {
  LearnerOptions o = small(TrainMode::kPg);
  o.batches_per_update = 0;
  EXPECT_THROW(PqtLearner{o}, UsageError);
  o.batches_per_update = 2;
  o.alpha = 0.5;
  EXPECT_THROW(PqtLearner{o}, UsageError);
  o.alpha = 0.0;
  PqtLearner l(o);
  EXPECT_THROW(l.step(std::vector<EpisodeBatch>{}), UsageError);
  EXPECT_THROW(l.step(std::vector<EpisodeBatch>(3, random_batch(1, 0))), UsageError);
  EXPECT_EQ(l.version(), 0u);
  EXPECT_EQ(parse_policy_kernel("fused"), PolicyKernel::kFused);
  EXPECT_THROW(parse_policy_kernel("jit"), UsageError);
}

}  // namespace
}  // namespace ringrl::learner
