// Policy files (common/hiro/policy_file.h) and HiroPolicy (actors/hiro/hiro_policy.h): a
// learner's networks written to a policy file and read back act as the learner's own torch
// actors on 100 observations; HiroPolicy steps the two levels as the evaluator does; damaged
// and foreign files are refused with CorruptData.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "actors/hiro/hiro_policy.h"
#include "common/byte_codec.h"
#include "common/checkpoint.h"
#include "common/errors.h"
#include "common/hiro/policy_file.h"
#include "envs/maze/ant_env.h"
#include "envs/maze/factory.h"
#include "envs/maze/video.h"
#include "learner/hiro/hiro_learner.h"
#include "learner/td3/td3.h"

namespace ringrl {
namespace {

namespace fs = std::filesystem;

constexpr int kObservations = 100;
constexpr float kTolerance = 1e-4f;
const char* const kEnv = "kinematic-maze";

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("ringrl-policy-test-" + std::to_string(::getpid()) + "-" + name);
}

// A learner whose actors are far from their initial scale, and its policy file.
struct Exported {
  hiro::HiroOptions options;
  std::unique_ptr<hiro::HiroLearner> learner;
  hiro::PolicyFile file;
};

Exported export_learner() {
  Exported e;
  e.options = hiro::make_hiro_options(kEnv, hiro::GoalSpaceKind::kOrig);  // the low level masks x, y
  e.options.hidden = 64;
  e.options.device = "cpu";
  e.options.seed = 3;
  e.learner = std::make_unique<hiro::HiroLearner>(e.options);
  {
    torch::NoGradGuard no_grad;
    torch::manual_seed(12);
    for (td3::Td3Agent* a : {&e.learner->low_agent(), &e.learner->high_agent()})
      for (auto& p : a->actor()->parameters()) p.uniform_(-0.3, 0.3);
  }
  e.file.blob.resize(e.learner->blob_bytes());
  e.learner->write_blob(e.file.blob.data());
  hiro::PolicyInfo& i = e.file.info;
  i.env = kEnv;
  i.multi_target = true;
  i.kinematic_max_step = envs::maze::MazeEnvOptions{}.max_step;
  i.goal_space = hiro::GoalSpaceKind::kOrig;
  i.meta_period = e.options.meta_period;
  i.shape = e.options.actor_blob_shape();
  i.source = "test";
  i.env_steps = 1234;
  return e;
}

TEST(PolicyFile, ExportedNetworksActAsTheLearnersOwnOn100Observations) {
  const Exported e = export_learner();
  const fs::path path = temp_file("roundtrip");
  hiro::write_policy_file(path, e.file);
  const hiro::PolicyFile back = hiro::read_policy_file(path);
  fs::remove(path);
  EXPECT_EQ(back.info.env, kEnv);
  EXPECT_EQ(back.info.env_steps, 1234u);
  EXPECT_EQ(back.info.goal_space, hiro::GoalSpaceKind::kOrig);
  EXPECT_EQ(back.blob, e.file.blob);
  const actors::HiroActorOptions ao = actors::policy_actor_options(back.info);
  EXPECT_EQ(ao.env, kEnv);
  EXPECT_EQ(ao.hidden, 64);

  actors::ActorNets nets(back.info.shape);
  std::string error;
  ASSERT_TRUE(nets.load(back.blob, &error)) << error;
  torch::manual_seed(5);
  struct Net {
    td3::Td3Agent* agent;
    actors::Mlp* mlp;
  };
  for (const Net& n : {Net{&e.learner->high_agent(), &nets.meta()}, Net{&e.learner->low_agent(), &nets.low()}}) {
    const auto x = torch::randn({kObservations, n.mlp->in_dim()}) * 4;
    const auto want = n.agent->act(x).contiguous();
    std::vector<float> got(static_cast<std::size_t>(n.mlp->out_dim()));
    for (int i = 0; i < kObservations; ++i) {
      const auto row = x[i].contiguous();
      n.mlp->forward(row.data_ptr<float>(), got.data());
      for (int j = 0; j < n.mlp->out_dim(); ++j)
        ASSERT_NEAR(got[static_cast<std::size_t>(j)], want[i][j].item<float>(), kTolerance) << i << "," << j;
    }
  }
}

TEST(PolicyFile, HiroPolicyEmitsEveryCStepsAndMovesTheGoalBetween) {
  const Exported e = export_learner();
  actors::ActorNets nets(e.file.info.shape);
  std::string error;
  ASSERT_TRUE(nets.load(e.file.blob, &error)) << error;
  const envs::EnvSpec spec = envs::maze::maze_env_spec(kEnv, {});
  const hiro::GoalSpace& gs = e.options.goal_space;
  const int obs = spec.obs_dim, ctx = spec.task.context_dim(), k = gs.dim, c = e.options.meta_period;
  actors::HiroPolicy policy(nets, gs, spec.action, obs, ctx, c);
  torch::manual_seed(6);
  const auto states = torch::randn({2 * c + 1, obs}) * 3;
  const auto G = torch::randn({1, ctx}) * 5;
  std::vector<float> a(static_cast<std::size_t>(spec.action_dim)), g_want(static_cast<std::size_t>(k));
  torch::NoGradGuard no_grad;
  for (int t = 0; t < 2 * c + 1; ++t) {
    const auto s = states[t].contiguous();
    policy.act(s.data_ptr<float>(), G.contiguous().data_ptr<float>(), a.data());
    if (t % c == 0) {
      const auto g = e.learner->high_agent().act(torch::cat({states[t].view({1, obs}), G}, 1))[0].contiguous();
      for (int j = 0; j < k; ++j) g_want[static_cast<std::size_t>(j)] = g[j].item<float>();
      gs.clip(g_want.data());
    } else {
      std::vector<float> next(g_want.size());
      const auto prev = states[t - 1].contiguous();
      hiro::goal_transition(prev.data_ptr<float>(), g_want.data(), s.data_ptr<float>(), k, next.data());
      g_want = next;
    }
    for (int j = 0; j < k; ++j)
      ASSERT_NEAR(policy.goal()[static_cast<std::size_t>(j)], g_want[static_cast<std::size_t>(j)], kTolerance)
          << "step " << t;
    const auto x = torch::cat({states[t].view({1, obs}), torch::from_blob(g_want.data(), {1, k}).clone()}, 1);
    const auto want = e.learner->low_agent().act(x)[0];
    for (int j = 0; j < spec.action_dim; ++j) {
      const float lo = spec.action.low[static_cast<std::size_t>(j)], hi = spec.action.high[static_cast<std::size_t>(j)];
      ASSERT_NEAR(a[static_cast<std::size_t>(j)], std::clamp(want[j].item<float>(), lo, hi), kTolerance) << t;
    }
  }
  EXPECT_EQ(policy.steps(), 2 * c + 1);
}

TEST(PolicyFile, DamagedTruncatedAndForeignFilesAreRefused) {
  const Exported e = export_learner();
  const fs::path path = temp_file("damaged");
  hiro::write_policy_file(path, e.file);
  const auto size = fs::file_size(path);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.put('\x5a');
  }
  try {
    (void)hiro::read_policy_file(path);
    ADD_FAILURE() << "a damaged file was read";
  } catch (const CorruptData& err) {
    EXPECT_NE(std::string(err.what()).find("checksum"), std::string::npos) << err.what();
  }
  fs::resize_file(path, size / 3);
  EXPECT_THROW((void)hiro::read_policy_file(path), CorruptData);
  {
    CheckpointWriter w(path, "hiro");  // a training checkpoint is no policy file
    w.section("hiro").put<std::uint32_t>(1);
    w.commit();
  }
  try {
    (void)hiro::read_policy_file(path);
    ADD_FAILURE() << "a foreign file was read";
  } catch (const CorruptData& err) {
    EXPECT_NE(std::string(err.what()).find("expected 'hiro-policy'"), std::string::npos) << err.what();
  }
  fs::remove(path);
}

TEST(PolicyFile, AShapeThatDoesNotFitTheEnvIsRefused) {
  Exported e = export_learner();
  e.file.info.shape.low_in += 1;
  EXPECT_THROW((void)actors::policy_actor_options(e.file.info), CorruptData);
}

// An ant-maze (or `env`) policy file with random weights (hidden 32): enough to drive an episode.
fs::path random_ant_policy(const std::string& name, const std::string& env = "ant-maze") {
  actors::HiroActorOptions ao;
  ao.env = env;
  ao.goal_space = hiro::GoalSpaceKind::kOrig;
  ao.hidden = 32;
  hiro::PolicyFile f;
  f.info.env = ao.env;
  f.info.kinematic_max_step = ao.env_options.max_step;
  f.info.goal_space = ao.goal_space;
  f.info.meta_period = ao.meta_period;
  f.info.shape = actors::HiroCollector::blob_shape(ao);
  const hiro::ActorBlobLayout layout(f.info.shape);
  f.blob.assign(layout.channel_bytes(), std::byte{0});
  write_blob_header(f.blob.data(), layout.blob());
  auto* w = reinterpret_cast<float*>(f.blob.data() + sizeof(BlobHeader));
  torch::manual_seed(2);
  const auto values = torch::randn({static_cast<std::int64_t>(layout.blob().num_bytes() / sizeof(float))}) * 0.3;
  std::copy_n(values.data_ptr<float>(), values.numel(), w);
  for (const hiro::MlpOffsets* m : {&layout.meta(), &layout.low()}) {  // the function's own tensors
    for (int j = 0; j < m->in; ++j) w[m->mask + static_cast<std::size_t>(j)] = 1.0f;
    for (int j = 0; j < m->out; ++j) {
      w[m->mid + static_cast<std::size_t>(j)] = 0.0f;
      w[m->half_range + static_cast<std::size_t>(j)] = 1.0f;
    }
  }
  const fs::path path = temp_file(name);
  hiro::write_policy_file(path, f);
  return path;
}

TEST(PolicyVideo, AnEpisodeGivesOneFrameAtTheResetAndOneEveryNSteps) {
  if (!envs::maze::video_support()) GTEST_SKIP() << "this build has no video libraries";
  const fs::path policy = random_ant_policy("ant.policy");
  for (const char* ext : {".gif", ".mp4"}) {
    actors::PolicyVideoOptions o;
    o.env = "ant-maze";
    o.out = temp_file(std::string("ant") + ext).string();
    o.width = 64;
    o.height = 48;
    o.steps = 30;
    o.every = 4;
    const actors::PolicyVideoResult r = actors::render_policy_video(policy.string(), o);
    EXPECT_EQ(r.frames, 1 + 30 / 4);
    EXPECT_EQ(r.steps, 30);
    EXPECT_EQ(envs::maze::count_video_frames(o.out), 1 + 30 / 4) << ext;
    EXPECT_GT(r.final_distance, 0.0f);
    EXPECT_NEAR(r.final_distance, std::hypot(r.final_x - 0.0f, r.final_y - 16.0f), 1e-3f) << "AntMaze's target (0, 16)";
    EXPECT_FALSE(r.has_block);
    fs::remove(o.out);
  }
  actors::PolicyVideoOptions wrong;
  wrong.env = "ant-push";
  wrong.out = temp_file("push.gif").string();
  EXPECT_THROW((void)actors::render_policy_video(policy.string(), wrong), UsageError);
  EXPECT_FALSE(fs::exists(wrong.out));
  fs::remove(policy);
}

// Push and Fall say where their block started and ended: the block of an episode's reset, and
// a block that only the ant can have moved.
TEST(PolicyVideo, PushAndFallSayWhereTheBlockStartedAndEnded) {
  if (!envs::maze::video_support()) GTEST_SKIP() << "this build has no video libraries";
  for (const char* env : {"ant-push", "ant-fall"}) {
    const fs::path policy = random_ant_policy(std::string(env) + ".policy", env);
    actors::PolicyVideoOptions o;
    o.env = env;
    o.out = temp_file(std::string(env) + ".gif").string();
    o.width = 32;
    o.height = 24;
    o.steps = 20;
    o.every = 10;
    const actors::PolicyVideoResult r = actors::render_policy_video(policy.string(), o);
    ASSERT_TRUE(r.has_block) << env;
    const auto fresh = envs::maze::make_maze_env(env, {});
    const auto* ant = dynamic_cast<const envs::maze::AntMazeEnv*>(fresh.get());
    ASSERT_NE(ant, nullptr);
    for (int k = 0; k < 3; ++k) EXPECT_DOUBLE_EQ(r.block_start[k], ant->block_position()[k]) << env << " axis " << k;
    EXPECT_GT(r.block_start[2], 0.0) << "a block stands on the floor (or, in Fall, on its ledge)";
    for (int k = 0; k < 3; ++k) EXPECT_TRUE(std::isfinite(r.block_end[k]));
    fs::remove(o.out);
    fs::remove(policy);
  }
}

}  // namespace
}  // namespace ringrl
