// The HIRO collector (actors/hiro/hiro_actor.h): the §7.1 loop's records on a kinematic
// episode, the next-goal variants, exploration noise and clipping of goals and actions, the
// evaluation episode, the actor-nets blob checks, an actor process refusing a blob of another
// shape, and restarted or resumed actor processes continuing their random streams.
#include "actors/hiro/hiro_actor.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/blob_layout.h"
#include "common/exit_status.h"
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
  Rng rng(seed);
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

// A valid blob whose networks output their box middle whatever the input: every weight and
// bias 0, so the output is mid + half_range * tanh(0) = mid.
std::vector<std::byte> constant_blob(const hiro::ActorBlobShape& shape, const std::vector<float>& meta_mid,
                                     const std::vector<float>& low_mid) {
  const hiro::ActorBlobLayout layout(shape);
  std::vector<std::byte> blob(layout.channel_bytes());
  write_blob_header(blob.data(), layout.blob());
  auto* payload = reinterpret_cast<float*>(blob.data() + sizeof(BlobHeader));
  std::fill(payload, payload + layout.blob().num_floats(), 0.f);
  const std::pair<const hiro::MlpOffsets*, const std::vector<float>*> nets[] = {{&layout.meta(), &meta_mid},
                                                                                {&layout.low(), &low_mid}};
  for (const auto& [m, mid] : nets) {
    for (int j = 0; j < m->in; ++j) payload[m->mask + static_cast<std::size_t>(j)] = 1.f;
    for (int j = 0; j < m->out; ++j) {
      payload[m->mid + static_cast<std::size_t>(j)] = (*mid)[static_cast<std::size_t>(j)];
      payload[m->half_range + static_cast<std::size_t>(j)] = 1.f;
    }
  }
  return blob;
}

// The goals (meta records' g_t, as emitted) and actions (transitions' a, as executed) of
// `episodes` training episodes with a constant-output blob.
struct Emitted {
  std::vector<std::vector<float>> goals, actions;
};
Emitted run_constant(const HiroActorOptions& o, const std::vector<float>& meta_mid, const std::vector<float>& low_mid,
                     int episodes) {
  HiroCollector c(o);
  std::string error;
  EXPECT_TRUE(c.nets().load(constant_blob(HiroCollector::blob_shape(o), meta_mid, low_mid), &error)) << error;
  const envs::EnvSpec& spec = c.spec();
  const int K = c.goal_space().dim;
  const hiro::TransitionDims td{spec.obs_dim, spec.action_dim, K};
  const hiro::MetaTransitionDims md{spec.obs_dim, spec.action_dim, K, spec.task.context_dim(), o.meta_period};
  Emitted out;
  for (int e = 0; e < episodes; ++e) {
    MemorySink sink;
    EXPECT_TRUE(c.run_episode(static_cast<std::uint64_t>(e) * kEpisodeSteps, sink));
    for (const auto& r : sink.low) {
      hiro::TransitionView v;
      EXPECT_TRUE(hiro::decode_transition(r.data(), static_cast<std::uint32_t>(r.size()), td, &v, &error)) << error;
      std::vector<float> row(static_cast<std::size_t>(v.count));
      v.copy_floats(row.data());
      const int a = hiro::TransitionLayout(td).a();
      out.actions.emplace_back(row.begin() + a, row.begin() + a + spec.action_dim);
    }
    for (const auto& r : sink.meta) {
      hiro::MetaTransitionView v;
      EXPECT_TRUE(hiro::decode_meta_transition(r.data(), static_cast<std::uint32_t>(r.size()), md, &v, &error))
          << error;
      std::vector<float> row(static_cast<std::size_t>(v.count));
      v.copy_floats(row.data());
      const int g = hiro::MetaTransitionLayout(md).g();
      out.goals.emplace_back(row.begin() + g, row.begin() + g + K);
    }
  }
  return out;
}

// Mean and standard deviation of column j.
std::pair<double, double> column_stats(const std::vector<std::vector<float>>& rows, int j) {
  double s = 0, ss = 0;
  for (const auto& r : rows) {
    s += r[static_cast<std::size_t>(j)];
    ss += static_cast<double>(r[static_cast<std::size_t>(j)]) * r[static_cast<std::size_t>(j)];
  }
  const double n = static_cast<double>(rows.size());
  return {s / n, std::sqrt(ss / n - (s / n) * (s / n))};
}

// §3: goals get N(0, high_noise^2) per dim and actions N(0, low_noise^2) per dim around the
// networks' outputs (here the box middles, 0), far inside their boxes.
TEST(HiroCollector, ExplorationNoiseHasTheConfiguredSigmaPerLevel) {
  HiroActorOptions o = small_options();
  o.low_noise = 2.0;   // actions: box +-30
  o.high_noise = 1.5;  // goals: box +-10
  const Emitted e = run_constant(o, std::vector<float>(2, 0.f), std::vector<float>(8, 0.f), /*episodes=*/20);
  ASSERT_EQ(e.goals.size(), 20u * kEpisodeSteps / kMetaPeriod);
  for (int j = 0; j < 2; ++j) {
    const auto [mean, sd] = column_stats(e.goals, j);
    EXPECT_NEAR(mean, 0.0, 0.1) << "goal dim " << j;
    EXPECT_NEAR(sd, 1.5, 0.07 * 1.5) << "goal dim " << j;
  }
  for (int j = 0; j < 8; ++j) {
    const auto [mean, sd] = column_stats(e.actions, j);
    EXPECT_NEAR(mean, 0.0, 0.1) << "action dim " << j;
    EXPECT_NEAR(sd, 2.0, 0.04 * 2.0) << "action dim " << j;
  }
}

// Noisy goals are clipped to the goal box per dimension (hiro_orig: +-10, +-0.5, +-1, +-0.5 /
// +-0.3 alternating), and noisy actions to the action box: every value inside, and as many at
// each bound as the Gaussian tail beyond it.
TEST(HiroCollector, NoisyGoalsAndActionsAreClippedToTheirBoxesPerDimension) {
  HiroActorOptions o = small_options();
  o.goal_space = hiro::GoalSpaceKind::kOrig;
  o.high_noise = 1.0;  // §3: sigma 1 on every goal dim; the small dims mostly saturate
  o.low_noise = 10.0;  // around 25, in a +-30 box: 31 % beyond the top
  const std::vector<float> low_mid(8, 25.f);
  HiroCollector probe(o);
  const hiro::GoalSpace gs = probe.goal_space();
  ASSERT_EQ(gs.dim, 15);
  const Emitted e = run_constant(o, std::vector<float>(15, 0.f), low_mid, /*episodes=*/20);
  const auto normal_tail = [](double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); };  // P(N(0,1) > z)
  for (int j = 0; j < gs.dim; ++j) {
    const float lo = gs.low[static_cast<std::size_t>(j)], hi = gs.high[static_cast<std::size_t>(j)];
    int at_high = 0, at_low = 0;
    for (const auto& g : e.goals) {
      const float v = g[static_cast<std::size_t>(j)];
      ASSERT_GE(v, lo) << "goal dim " << j;
      ASSERT_LE(v, hi) << "goal dim " << j;
      at_high += v == hi;
      at_low += v == lo;
    }
    const double n = static_cast<double>(e.goals.size());
    EXPECT_NEAR(at_high / n, normal_tail(hi), 0.05) << "goal dim " << j << " at its top " << hi;
    EXPECT_NEAR(at_low / n, normal_tail(-lo), 0.05) << "goal dim " << j << " at its bottom " << lo;
  }
  for (int j = 0; j < 8; ++j) {
    int at_top = 0;
    for (const auto& a : e.actions) {
      const float v = a[static_cast<std::size_t>(j)];
      ASSERT_GE(v, -30.f);
      ASSERT_LE(v, 30.f);
      at_top += v == 30.f;
    }
    EXPECT_NEAR(at_top / static_cast<double>(e.actions.size()), normal_tail(0.5), 0.02) << "action dim " << j;
  }
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
  EXPECT_EQ(WEXITSTATUS(status), kExitActorRefused);
}

// ---------------------------------------------------------------- restarts and resumes

// The first step of one training episode as a collector pushed it.
struct EpisodeStart {
  std::uint64_t key = 0;       // the header's episode (its stream key)
  std::vector<float> s, a, g;  // s_0, a_0, g_0
};

// Reads `ring` until `transitions` transitions arrived (0: until it stays empty for 0.2 s);
// keeps the first step of each episode; returns the transitions read.
std::size_t read_ring(RingReader& ring, std::size_t transitions, const hiro::TransitionDims& td,
                      std::vector<EpisodeStart>* starts) {
  const hiro::TransitionLayout L(td);
  constexpr auto kQuiet = std::chrono::milliseconds(200);
  constexpr auto kGiveUp = std::chrono::seconds(60);
  const auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  std::size_t n = 0;
  while (transitions == 0 || n < transitions) {
    RecordView rec;
    const PeekStatus st = ring.peek(rec);
    EXPECT_NE(st, PeekStatus::kCorrupt);
    if (st != PeekStatus::kRecord) {
      const auto now = std::chrono::steady_clock::now();
      if ((transitions == 0 && now - last > kQuiet) || now - t0 > kGiveUp) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    last = std::chrono::steady_clock::now();
    if (rec.type == kRecordTransition) {
      hiro::TransitionView v;
      std::string error;
      EXPECT_TRUE(hiro::decode_transition(rec.data, rec.length, td, &v, &error)) << error;
      ++n;
      if (v.header.t == 0) {
        std::vector<float> row(static_cast<std::size_t>(v.count));
        v.copy_floats(row.data());
        EpisodeStart e;
        e.key = v.header.episode;
        e.s.assign(row.begin() + L.s(), row.begin() + L.s() + L.obs);
        e.a.assign(row.begin() + L.a(), row.begin() + L.a() + L.act);
        e.g.assign(row.begin() + L.g(), row.begin() + L.g() + L.goal);
        starts->push_back(std::move(e));
      }
    }
    ring.release();
  }
  return n;
}

pid_t start_actor(const HiroActorOptions& o) {
  const pid_t pid = fork();
  if (pid == 0) _exit(run_hiro_actor(o));
  return pid;
}

void kill_actor(pid_t pid) {
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
}

// A crashed collector restarted on its slot (the supervisor's restart: same segment, same
// seed) and one started by a resumed learner (a fresh segment, step_base = the steps the
// checkpoint holds from the slot) draw new episodes: no episode start (reset state, target,
// first goal and first noisy action) and no stream key of a predecessor comes again. Each
// one continues where the steps pushed before it end.
TEST(HiroActorProcess, RestartedAndResumedActorsDoNotRepeatTheirPredecessorsEpisodes) {
  RunLayoutOptions lo;
  lo.num_actors = 1;
  lo.ring_capacity = 1 << 18;
  lo.weight_capacity = 1 << 20;
  HiroActorOptions o = small_options();
  o.throttle_slack = 1u << 30;  // no learner here: never wait for one
  const std::vector<std::byte> blob = random_blob(HiroCollector::blob_shape(o), 3);
  const HiroCollector probe(o);
  const hiro::TransitionDims td{probe.spec().obs_dim, probe.spec().action_dim, probe.goal_space().dim};

  std::vector<EpisodeStart> first, second, third;
  std::size_t pushed_first = 0, pushed_second = 0;
  {
    RunSegment seg = RunSegment::create(testing::unique_run_id("hiro-restart"), lo);
    WeightWriter(seg.weights()).publish(blob.data(), blob.size());
    RingReader ring(seg.ring(0));
    o.segment = seg.name();
    // The first process dies mid-episode (700 steps read; it has pushed a few more).
    pid_t pid = start_actor(o);
    pushed_first = read_ring(ring, 700, td, &first);
    kill_actor(pid);
    pushed_first += read_ring(ring, 0, td, &first);
    // Its replacement on the same slot of the same segment.
    pid = start_actor(o);
    pushed_second = read_ring(ring, 1200, td, &second);
    kill_actor(pid);
    pushed_second += read_ring(ring, 0, td, &second);
  }
  {
    // A resumed learner: a fresh segment; the checkpoint held every step the slot sent.
    RunSegment seg = RunSegment::create(testing::unique_run_id("hiro-resume"), lo);
    WeightWriter(seg.weights()).publish(blob.data(), blob.size());
    RingReader ring(seg.ring(0));
    o.segment = seg.name();
    o.step_base = pushed_first + pushed_second;
    const pid_t pid = start_actor(o);
    read_ring(ring, 1200, td, &third);
    kill_actor(pid);
  }
  ASSERT_GE(first.size(), 2u);
  ASSERT_GE(second.size(), 2u);
  ASSERT_GE(third.size(), 2u);
  EXPECT_EQ(first.front().key, 0u);
  EXPECT_GE(second.front().key, pushed_first) << "the replacement starts after every step its predecessor pushed";
  EXPECT_LE(second.front().key, pushed_first + 1) << "(one more when it died between counting and publishing)";
  EXPECT_EQ(third.front().key, o.step_base) << "the resumed actor starts where the checkpoint's count ends";
  const std::vector<EpisodeStart>* runs[] = {&first, &second, &third};
  for (int later = 1; later < 3; ++later)
    for (int earlier = 0; earlier < later; ++earlier)
      for (const EpisodeStart& b : *runs[later])
        for (const EpisodeStart& a : *runs[earlier]) {
          EXPECT_NE(b.key, a.key);
          EXPECT_FALSE(a.s == b.s) << "episode " << b.key << " starts where " << a.key << " did";
          EXPECT_FALSE(a.a == b.a) << "episode " << b.key << " repeats the first action of " << a.key;
          EXPECT_FALSE(a.g == b.g) << "episode " << b.key << " repeats the first goal of " << a.key;
        }
}

}  // namespace
}  // namespace ringrl::actors
