// The actors' torch-free MLP (actors/hiro/mlp.h) against the learner's torch actors: the blob
// written by HiroLearner::write_blob, loaded by ActorNets, gives the same actions as
// td3::Actor::forward on random inputs (tolerance 1e-4), with and without x,y masking.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "actors/hiro/mlp.h"
#include "envs/maze/factory.h"
#include "learner/hiro/hiro_learner.h"
#include "learner/td3/td3.h"

namespace ringrl {
namespace {

constexpr int kInputs = 64;  // random inputs per network
constexpr float kTolerance = 1e-4f;
constexpr double kInputScale = 5.0;  // inputs ~ U(-5, 5): tanh away from its flat ends

void expect_agreement(const std::string& env, hiro::GoalSpaceKind kind, int hidden) {
  hiro::HiroOptions o = hiro::make_hiro_options(env, kind);
  o.hidden = hidden;
  o.device = "cpu";
  o.seed = 9;
  hiro::HiroLearner learner(o);
  std::vector<std::byte> blob(learner.blob_bytes());
  learner.write_blob(blob.data());
  actors::ActorNets nets(o.actor_blob_shape());
  std::string error;
  ASSERT_TRUE(nets.load(blob, &error)) << error;

  torch::manual_seed(4);
  struct Net {
    td3::Actor* torch_actor;
    actors::Mlp* mlp;
  };
  for (const Net& n :
       {Net{&learner.high_agent().actor(), &nets.meta()}, Net{&learner.low_agent().actor(), &nets.low()}}) {
    torch::NoGradGuard no_grad;
    const auto x = (torch::rand({kInputs, n.mlp->in_dim()}) * 2 - 1) * kInputScale;
    const auto y = (*n.torch_actor)->forward(x).contiguous();
    std::vector<float> out(static_cast<std::size_t>(n.mlp->out_dim()));
    for (int i = 0; i < kInputs; ++i) {
      const auto row = x[i].contiguous();
      n.mlp->forward(row.data_ptr<float>(), out.data());
      for (int j = 0; j < n.mlp->out_dim(); ++j)
        ASSERT_NEAR(out[static_cast<std::size_t>(j)], y[i][j].item<float>(), kTolerance)
            << env << " row " << i << " output " << j;
    }
  }
}

TEST(MlpAgreement, MatchesTheLearnersTorchActorsWithoutMasking) {
  expect_agreement("kinematic-maze", hiro::GoalSpaceKind::kXy, 64);
}

TEST(MlpAgreement, MatchesTheLearnersTorchActorsWithXyMasking) {
  expect_agreement("kinematic-maze", hiro::GoalSpaceKind::kOrig, 300);
}

TEST(MlpAgreement, TrainedWeightsStillAgree) {
  // After updates the weights are far from their init scale: the last layer is no longer tiny.
  hiro::HiroOptions o = hiro::make_hiro_options("kinematic-maze", hiro::GoalSpaceKind::kXy);
  o.hidden = 32;
  o.device = "cpu";
  o.batch_size = 8;
  o.actor_lr = 0.05;
  hiro::HiroLearner learner(o);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : learner.low_agent().actor()->parameters()) p.uniform_(-0.5, 0.5);
  }
  std::vector<std::byte> blob(learner.blob_bytes());
  learner.write_blob(blob.data());
  actors::ActorNets nets(o.actor_blob_shape());
  std::string error;
  ASSERT_TRUE(nets.load(blob, &error)) << error;
  torch::NoGradGuard no_grad;
  const auto x = torch::randn({kInputs, nets.low().in_dim()});
  const auto y = learner.low_agent().actor()->forward(x).contiguous();
  std::vector<float> out(static_cast<std::size_t>(nets.low().out_dim()));
  for (int i = 0; i < kInputs; ++i) {
    const auto row = x[i].contiguous();
    nets.low().forward(row.data_ptr<float>(), out.data());
    for (int j = 0; j < nets.low().out_dim(); ++j)
      ASSERT_NEAR(out[static_cast<std::size_t>(j)], y[i][j].item<float>(), kTolerance * 30) << "row " << i;
  }
}

}  // namespace
}  // namespace ringrl
