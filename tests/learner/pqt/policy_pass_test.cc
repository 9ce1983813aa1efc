// Tests for learner/pqt/policy_pass.h: the fused pass must give the eager path's log-probs,
// entropies and gradients (Policy::forward_reference, log_softmax, losses.h, autograd).
#include "learner/pqt/policy_pass.h"

#include <gtest/gtest.h>

#include "learner/pqt/losses.h"

namespace ringrl::learner {
namespace {

struct Eager {
  torch::Tensor alp, ent;              // [N, T]
  std::vector<torch::Tensor> grads;    // blob order
  double lookup_sq = 0.0;
};

// L = sum ca * log pi(a) + sum ce * H through plain autograd.
Eager eager(Policy& p, const torch::Tensor& actions, const torch::Tensor& ca, const torch::Tensor& ce) {
  for (auto& q : p->parameters()) q.mutable_grad() = torch::Tensor();
  PolicyForward f = p->forward_reference(actions, /*retain_embedding_grad=*/true);
  const torch::Tensor lp = torch::log_softmax(f.logits, 2);
  const torch::Tensor alp = action_log_probs(lp, actions);
  const torch::Tensor lc = lp.clamp_min(kEntropyLogFloor);
  const torch::Tensor ent = -(torch::exp(lc) * lc).sum(2);
  ((alp * ca).sum() + (ent * ce).sum()).backward();
  Eager e;
  e.alp = alp.detach();
  e.ent = ent.detach();
  for (const auto& q : p->blob_parameters()) e.grads.push_back(q.grad().clone());
  e.lookup_sq = f.embedded.grad().pow(2).sum().item<double>();
  return e;
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const double scale = std::max(1.0, want.abs().max().item<double>());
  const double diff = (got - want).abs().max().item<double>();
  EXPECT_LE(diff, 2e-4 * scale) << what << ": max diff " << diff << " at scale " << scale;
}

Policy make_policy(bool eos, std::vector<int> sizes) {
  PolicyOptions o;
  o.param_init_factor = 1.0;
  o.eos_token = eos;
  o.shape.lstm_sizes = std::move(sizes);
  o.seed = 7;
  Policy p(o);
  torch::NoGradGuard g;
  for (auto& b : p->biases) b.uniform_(-0.5, 0.5);
  return p;
}

class PolicyPassMatchesEager : public ::testing::TestWithParam<std::tuple<bool, int>> {};

TEST_P(PolicyPassMatchesEager, LogProbsEntropiesAndGradients) {
  const auto [eos, threads] = GetParam();
  torch::manual_seed(3);
  const int saved = torch::get_num_threads();
  torch::set_num_threads(threads);
  Policy p = make_policy(eos, {35, 20, 35});  // three layers: also a middle layer
  const int n = 19, t = 11;
  const torch::Tensor actions = torch::randint(eos ? 0 : 1, 9, {n, t}, torch::kInt64);
  const torch::Tensor ca = torch::randn({n, t});
  const torch::Tensor ce = torch::randn({n, t});
  const Eager want = eager(p, actions, ca, ce);

  PolicyPass pass(p);
  pass.forward(actions);
  expect_close(pass.action_log_probs(), want.alp, "log pi(a)");
  expect_close(pass.entropy_steps(), want.ent, "entropy");
  pass.backward(ca, ce);
  ASSERT_EQ(pass.group_grads(0).size(), want.grads.size());
  for (std::size_t k = 0; k < want.grads.size(); ++k) {
    expect_close(pass.group_grads(0)[k], want.grads[k], "gradient " + std::to_string(k));
    EXPECT_GT(want.grads[k].abs().max().item<double>(), 1e-3) << "gradient " << k << " is trivially zero";
  }
  EXPECT_NEAR(pass.lookup_sq(0), want.lookup_sq, 1e-4 * want.lookup_sq);
  torch::set_num_threads(saved);
}

INSTANTIATE_TEST_SUITE_P(EosAndThreads, PolicyPassMatchesEager,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(1, 2)));

// Groups: each group's gradient is the gradient of the loss restricted to its rows, as if the
// group had been a batch of its own.
TEST(PolicyPass, GroupsGiveEachGroupsOwnGradient) {
  torch::manual_seed(5);
  Policy p = make_policy(false, {35, 35});
  const int groups = 3, n = 6, t = 9;
  const torch::Tensor actions = torch::randint(1, 9, {groups * n, t}, torch::kInt64);
  const torch::Tensor ca = torch::randn({groups * n, t});
  const torch::Tensor ce = torch::randn({groups * n, t});
  PolicyPass pass(p);
  pass.forward(actions, groups);
  pass.backward(ca, ce);
  for (int g = 0; g < groups; ++g) {
    const Eager want = eager(p, actions.narrow(0, g * n, n), ca.narrow(0, g * n, n), ce.narrow(0, g * n, n));
    for (std::size_t k = 0; k < want.grads.size(); ++k) {
      expect_close(pass.group_grads(g)[k], want.grads[k], "group " + std::to_string(g) + " gradient " + std::to_string(k));
    }
    EXPECT_NEAR(pass.lookup_sq(g), want.lookup_sq, 1e-4 * want.lookup_sq);
  }
  // The whole batch in one group is the sum of the groups.
  PolicyPass whole(p);
  whole.forward(actions, 1);
  whole.backward(ca, ce);
  for (std::size_t k = 0; k < whole.group_grads(0).size(); ++k) {
    torch::Tensor sum = torch::zeros_like(whole.group_grads(0)[k]);
    for (int g = 0; g < groups; ++g) sum += pass.group_grads(g)[k];
    expect_close(whole.group_grads(0)[k], sum, "sum of groups, gradient " + std::to_string(k));
  }
}

// With N threads the rows are cut into shards that run on a oneTBB arena; the numbers are the
// one-thread pass's up to float summation order, whatever the scheduling.
TEST(PolicyPass, ShardsOverThreadsGiveTheOneThreadNumbers) {
  torch::manual_seed(9);
  Policy p = make_policy(false, {35, 35});
  const int groups = 2, n = 13, t = 17;
  const torch::Tensor actions = torch::randint(1, 9, {groups * n, t}, torch::kInt64);
  const torch::Tensor ca = torch::randn({groups * n, t});
  const torch::Tensor ce = torch::randn({groups * n, t});
  const int saved = torch::get_num_threads();
  torch::set_num_threads(1);
  PolicyPass one(p);
  one.forward(actions, groups);
  one.backward(ca, ce);
  EXPECT_EQ(one.shards(), 1);
  for (const int threads : {2, 3}) {
    torch::set_num_threads(threads);
    PolicyPass sharded(p);
    for (int pass = 0; pass < 2; ++pass) {  // the second pass reuses every buffer
      sharded.forward(actions, groups);
      sharded.backward(ca, ce);
    }
    const std::string tag = std::to_string(threads) + " threads";
    EXPECT_EQ(sharded.shards(), 2 * threads) << tag;
    expect_close(sharded.action_log_probs(), one.action_log_probs(), tag + ": log pi(a)");
    expect_close(sharded.entropy_steps(), one.entropy_steps(), tag + ": entropy");
    for (int g = 0; g < groups; ++g) {
      for (std::size_t k = 0; k < one.group_grads(g).size(); ++k) {
        const torch::Tensor& want = one.group_grads(g)[k];
        const double scale = want.abs().max().item<double>();
        EXPECT_LE((sharded.group_grads(g)[k] - want).abs().max().item<double>(), 1e-5 * scale)
            << tag << ": group " << g << " gradient " << k;
      }
      EXPECT_NEAR(sharded.lookup_sq(g), one.lookup_sq(g), 1e-5 * one.lookup_sq(g)) << tag;
      EXPECT_TRUE(torch::equal(std::get<0>(sharded.group_input_tokens(g).sort()),
                               std::get<0>(one.group_input_tokens(g).sort())))
          << tag << ": group " << g << " looked-up rows";
    }
  }
  torch::set_num_threads(saved);
}

TEST(PolicyPass, RefusesBadInput) {
  Policy p = make_policy(false, {35, 35});
  PolicyPass pass(p);
  EXPECT_THROW(pass.forward(torch::zeros({5, 4}, torch::kInt64), 2), std::exception);
  EXPECT_THROW(pass.forward(torch::zeros({4, 4}, torch::kFloat32)), std::exception);
  pass.forward(torch::ones({4, 4}, torch::kInt64));
  EXPECT_THROW(pass.backward(torch::zeros({4, 3}), torch::zeros({4, 4})), std::exception);
}

}  // namespace
}  // namespace ringrl::learner
