// The HIRO collector (actors/hiro/hiro_actor.h): the §7.1 loop's records on a kinematic
// episode, the next-goal variants, the evaluation episode, the actor-nets blob checks, and an
// actor process refusing a blob of another shape.
#include "actors/hiro/hiro_actor.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "common/blob_layout.h"
#include "common/hiro/actor_blob.h"
#include "common/hiro/transition_record.h"
#include "common/run_segment.h"
#include "common/weight_channel.h"
#include "tests/common/test_util.h"

namespace ringrl::actors {
namespace {

constexpr int kHidden = 16;
constexpr int kEpisodeSteps = 500;
constexpr int kMetaPeriod = 10;
constexpr float kWeightScale = 0.3f;

HiroActorOptions small_options(NextGoal next = NextGoal::kEmitted) {
  HiroActorOptions o;
  o.env = "kinematic-maze";
  o.env_options.max_step = 1.0;
  o.goal_space = hiro::GoalSpaceKind::kXy;
  o.hidden = kHidden;
  o.seed = 7;
  o.next_goal = next;
  return o;
}

// A valid channel blob of `shape` with pseudo-random weights, no masking and a unit box.
std::vector<std::byte> random_blob(const hiro::ActorBlobShape& shape, std::uint64_t seed) {
  const hiro::ActorBlobLayout layout(shape);
  std::vector<std::byte> blob(layout.channel_bytes());
  write_blob_header(blob.data(), layout.blob());
  auto* payload = reinterpret_cast<float*>(blob.data() + sizeof(BlobHeader));
  envs::Rng rng(seed);
  for (std::size_t i = 0; i < layout.blob().num_floats(); ++i)
    payload[i] = static_cast<float>(rng.uniform(-kWeightScale, kWeightScale));
  for (const hiro::MlpOffsets* m : {&layout.meta(), &layout.low()}) {
    for (int j = 0; j < m->in; ++j) payload[m->mask + static_cast<std::size_t>(j)] = 1.f;
    for (int j = 0; j < m->out; ++j) {
      payload[m->mid + static_cast<std::size_t>(j)] = 0.f;
      payload[m->half_range + static_cast<std::size_t>(j)] = 1.f;
    }
  }
  return blob;
}

// Keeps every record in memory.
class MemorySink final : public RecordSink {
 public:
  std::byte* reserve(std::uint32_t bytes) override {
    pending_.assign(bytes, std::byte{0});
    return pending_.data();
  }
  void commit(RecordType type) override { (type == kRecordTransition ? low : meta).push_back(pending_); }
  std::vector<std::vector<std::byte>> low, meta;

 private:
  std::vector<std::byte> pending_;
};

struct Decoded {
  std::vector<hiro::TransitionView> low;
  std::vector<hiro::MetaTransitionView> meta;
};

TEST(HiroCollector, OneKinematicEpisodeGives500StepsAnd50AlignedSegments) {
  HiroCollector c(small_options());
  const std::vector<std::byte> blob = random_blob(HiroCollector::blob_shape(small_options()), 3);
  std::string error;
  ASSERT_TRUE(c.nets().load(blob, &error)) << error;
  MemorySink sink;
  ASSERT_TRUE(c.run_episode(/*episode=*/0, sink));
  ASSERT_EQ(sink.low.size(), static_cast<std::size_t>(kEpisodeSteps));
  ASSERT_EQ(sink.meta.size(), static_cast<std::size_t>(kEpisodeSteps / kMetaPeriod));

  const envs::EnvSpec& spec = c.spec();
  const int O = spec.obs_dim, A = spec.action_dim, K = c.goal_space().dim, C = spec.task.context_dim();
  const hiro::TransitionDims td{O, A, K};
  const hiro::MetaTransitionDims md{O, A, K, C, kMetaPeriod};
  const hiro::TransitionLayout tl(td);
  const hiro::MetaTransitionLayout ml(md);
  std::vector<std::vector<float>> low_rows, meta_rows;
  for (std::size_t t = 0; t < sink.low.size(); ++t) {
    hiro::TransitionView v;
    ASSERT_TRUE(
        hiro::decode_transition(sink.low[t].data(), static_cast<std::uint32_t>(sink.low[t].size()), td, &v, &error))
        << error;
    EXPECT_EQ(v.header.t, t);
    EXPECT_EQ(v.header.flags, t + 1 == sink.low.size() ? hiro::kTransitionEpisodeEnd : 0);
    low_rows.emplace_back(static_cast<std::size_t>(v.count));
    v.copy_floats(low_rows.back().data());
  }
  for (auto& m : sink.meta) {
    hiro::MetaTransitionView v;
    ASSERT_TRUE(hiro::decode_meta_transition(m.data(), static_cast<std::uint32_t>(m.size()), md, &v, &error)) << error;
    meta_rows.emplace_back(static_cast<std::size_t>(v.count));
    v.copy_floats(meta_rows.back().data());
  }
  const auto eq = [](const float* a, const float* b, int n) { return std::memcmp(a, b, sizeof(float) * n) == 0; };
  for (int t = 0; t < kEpisodeSteps; ++t) {
    const float* r = low_rows[static_cast<std::size_t>(t)].data();
    if (t + 1 < kEpisodeSteps) {
      const float* next = low_rows[static_cast<std::size_t>(t + 1)].data();
      EXPECT_TRUE(eq(r + tl.s_next(), next + tl.s(), O)) << "s' of step " << t << " is s of the next";
      EXPECT_TRUE(eq(r + tl.g_next(), next + tl.g(), K)) << "g' of step " << t << " is the goal executed next";
    }
    if ((t + 1) % kMetaPeriod != 0) {
      std::vector<float> h(static_cast<std::size_t>(K));
      hiro::goal_transition(r + tl.s(), r + tl.g(), r + tl.s_next(), K, h.data());
      EXPECT_TRUE(eq(r + tl.g_next(), h.data(), K)) << "between decisions g' = h(s, g, s') at " << t;
    }
  }
  for (int k = 0; k < kEpisodeSteps / kMetaPeriod; ++k) {
    const float* m = meta_rows[static_cast<std::size_t>(k)].data();
    const float* first = low_rows[static_cast<std::size_t>(k * kMetaPeriod)].data();
    const float* last = low_rows[static_cast<std::size_t>(k * kMetaPeriod + kMetaPeriod - 1)].data();
    EXPECT_TRUE(eq(m + ml.s(), first + tl.s(), O));
    EXPECT_TRUE(eq(m + ml.g(), first + tl.g(), K)) << "the segment's goal is the one its first step ran under";
    EXPECT_TRUE(eq(m + ml.s_next(), last + tl.s_next(), O));
    float sum = 0;
    for (int i = 0; i < kMetaPeriod; ++i) {
      const float* step = low_rows[static_cast<std::size_t>(k * kMetaPeriod + i)].data();
      EXPECT_TRUE(eq(m + ml.low_states() + i * O, step + tl.s(), O)) << "states[" << i << "] of segment " << k;
      EXPECT_TRUE(eq(m + ml.low_actions() + i * A, step + tl.a(), A)) << "actions[" << i << "] of segment " << k;
      sum += step[tl.r_env()];
    }
    EXPECT_NEAR(m[ml.reward()], 0.1f * sum, 1e-4f * std::abs(sum) + 1e-5f);
    EXPECT_TRUE(eq(m + ml.context(), m + ml.context_next(), C));
  }
}

TEST(HiroCollector, PaperVariantStoresHAtDecisionBoundaries) {
  const HiroActorOptions o = small_options(NextGoal::kTransition);
  HiroCollector c(o);
  const std::vector<std::byte> blob = random_blob(HiroCollector::blob_shape(o), 3);
  std::string error;
  ASSERT_TRUE(c.nets().load(blob, &error)) << error;
  MemorySink sink;
  ASSERT_TRUE(c.run_episode(0, sink));
  const envs::EnvSpec& spec = c.spec();
  const hiro::TransitionDims td{spec.obs_dim, spec.action_dim, c.goal_space().dim};
  const hiro::TransitionLayout tl(td);
  hiro::TransitionView v;
  ASSERT_TRUE(hiro::decode_transition(sink.low[kMetaPeriod - 1].data(),
                                      static_cast<std::uint32_t>(sink.low[kMetaPeriod - 1].size()), td, &v, &error));
  std::vector<float> row(static_cast<std::size_t>(v.count)), h(static_cast<std::size_t>(td.goal_dim));
  v.copy_floats(row.data());
  hiro::goal_transition(row.data() + tl.s(), row.data() + tl.g(), row.data() + tl.s_next(), td.goal_dim, h.data());
  for (int j = 0; j < td.goal_dim; ++j)
    EXPECT_EQ(row[static_cast<std::size_t>(tl.g_next() + j)], h[static_cast<std::size_t>(j)]);
}

TEST(HiroCollector, EvaluationIsDeterministicAndJudgesTheFinalStep) {
  HiroCollector c(small_options());
  const std::vector<std::byte> blob = random_blob(HiroCollector::blob_shape(small_options()), 5);
  std::string error;
  ASSERT_TRUE(c.nets().load(blob, &error)) << error;
  const std::vector<float>& target = c.spec().task.primary_target();
  std::vector<EvalPoint> a, b;
  const EvalEpisode e1 = c.eval_episode(11, target.data(), [&](const EvalPoint& p) { a.push_back(p); });
  const EvalEpisode e2 = c.eval_episode(11, target.data(), [&](const EvalPoint& p) { b.push_back(p); });
  ASSERT_EQ(a.size(), static_cast<std::size_t>(kEpisodeSteps + 1));
  ASSERT_EQ(b.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].x, b[i].x);
  EXPECT_EQ(e1.final_distance, e2.final_distance);
  EXPECT_EQ(e1.final_distance, a.back().distance);
  EXPECT_EQ(e1.success, a.back().distance < 5.0f);
}

TEST(ActorBlob, AnotherShapeOrLayoutIsRefused) {
  const hiro::ActorBlobShape shape = HiroCollector::blob_shape(small_options());
  ActorNets nets(shape);
  std::string error;
  const std::vector<std::byte> good = random_blob(shape, 1);
  EXPECT_TRUE(nets.load(good, &error)) << error;

  hiro::ActorBlobShape other = shape;
  other.hidden1 = other.hidden2 = kHidden * 2;
  EXPECT_FALSE(nets.load(random_blob(other, 1), &error));
  EXPECT_NE(error.find("fingerprint"), std::string::npos) << error;
  other = shape;
  other.meta_out = shape.meta_out + 1;
  EXPECT_FALSE(nets.load(random_blob(other, 1), &error)) << "another goal dim";

  std::vector<std::byte> bad_magic = good;
  bad_magic[0] ^= std::byte{1};
  EXPECT_FALSE(nets.load(bad_magic, &error));
  EXPECT_NE(error.find("magic"), std::string::npos) << error;
  std::vector<std::byte> cut = good;
  cut.resize(cut.size() - sizeof(float) * 16);
  EXPECT_FALSE(nets.load(cut, &error)) << "the right header on a truncated payload";
  EXPECT_FALSE(nets.load(std::vector<std::byte>(8), &error)) << "shorter than the header";
}

TEST(ActorBlob, AnActorProcessRefusesAMismatchedBlobWithOneLineAndExitStatus) {
  RunLayoutOptions lo;
  lo.num_actors = 1;
  lo.ring_capacity = 1 << 16;
  lo.weight_capacity = 1 << 20;
  RunSegment seg = RunSegment::create(testing::unique_run_id("hiro-blob"), lo);
  hiro::ActorBlobShape other = HiroCollector::blob_shape(small_options());
  other.hidden1 = other.hidden2 = kHidden + 16;
  const std::vector<std::byte> wrong = random_blob(other, 2);
  WeightWriter(seg.weights()).publish(wrong.data(), wrong.size());
  const pid_t pid = fork();
  if (pid == 0) {
    HiroActorOptions o = small_options();
    o.segment = seg.name();
    o.slot = 0;
    _exit(run_hiro_actor(o));
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kExitBadBlob);
}

}  // namespace
}  // namespace ringrl::actors
