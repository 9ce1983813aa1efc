// The HIRO wing (learner/hiro/hiro_algorithm.h) driven by hand: every collector launch carries
// where its episode streams continue (step_base), and checkpoints keep, per slot, that base
// plus the transitions received from the slot since, so the collectors of a resumed run
// continue their streams (actors/hiro/hiro_actor.h) instead of starting them over.
#include "learner/hiro/hiro_algorithm.h"

#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/actor_launch.h"
#include "common/checkpoint.h"
#include "common/errors.h"
#include "common/hiro/eval_record.h"
#include "common/hiro/transition_record.h"
#include "common/records.h"
#include "common/spsc_ring.h"

namespace ringrl::hiro {
namespace {

namespace fs = std::filesystem;

HiroTrainOptions small_run(const fs::path& dir) {
  HiroTrainOptions o;
  o.learner = make_hiro_options("kinematic-maze", hiro::GoalSpaceKind::kXy);
  o.learner.hidden = 16;
  o.learner.replay_capacity = 1000;
  o.learner.device = "cpu";
  o.actors = 2;
  o.eval = false;
  o.initial_steps = 1000;  // every step below is admitted without an update
  o.run_dir = dir.string();
  return o;
}

// One well-formed Transition record.
std::vector<std::byte> transition(const HiroOptions& o) {
  const hiro::TransitionDims d = o.transition_dims();
  const std::vector<float> s(static_cast<std::size_t>(d.obs_dim), 0.5f), a(static_cast<std::size_t>(d.action_dim)),
      g(static_cast<std::size_t>(d.goal_dim), 1.f);
  hiro::TransitionHeader h{};
  h.obs_dim = static_cast<std::uint16_t>(d.obs_dim);
  h.action_dim = static_cast<std::uint16_t>(d.action_dim);
  h.goal_dim = static_cast<std::uint16_t>(d.goal_dim);
  std::vector<std::byte> bytes(hiro::transition_bytes(d));
  hiro::encode_transition(bytes.data(), h, {s.data(), a.data(), s.data(), g.data(), g.data(), 0.f, 1.f});
  return bytes;
}

void send(learner::Algorithm& algo, std::uint32_t actor, int steps, const std::vector<std::byte>& rec) {
  for (int i = 0; i < steps; ++i) {
    RecordView v;
    v.type = kRecordTransition;
    v.data = rec.data();
    v.length = static_cast<std::uint32_t>(rec.size());
    algo.on_record(actor, v, 0);
  }
}

std::string step_base(const learner::Algorithm& algo, std::uint32_t slot) {
  ActorLaunch launch;
  launch.slot = slot;
  algo.fill_launch(launch);
  const auto it = launch.params.find("step_base");
  return it == launch.params.end() ? std::string("(none)") : it->second;
}

void save(const learner::Algorithm& algo, const fs::path& path) {
  CheckpointWriter w(path, "hiro");
  algo.save(w);
  w.commit();
}

TEST(HiroAlgorithm, CheckpointsCarryEachCollectorsStreamPositionIntoItsLaunches) {
  const fs::path dir = fs::temp_directory_path() / ("ringrl-hiro-algo-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const HiroTrainOptions o = small_run(dir);
  const std::vector<std::byte> rec = transition(o.learner);
  const fs::path ck = dir / "checkpoint";

  // A fresh run: both collectors start their streams at 0, also when restarted later in the
  // same process (the actor adds what its slot pushed into this process's segment).
  auto first = make_hiro_algorithm(o);
  first->begin_repetition(0);
  EXPECT_EQ(step_base(*first, 0), "0");
  EXPECT_EQ(step_base(*first, 1), "0");
  send(*first, 0, 7, rec);
  send(*first, 1, 3, rec);
  EXPECT_EQ(step_base(*first, 0), "0");
  save(*first, ck);

  // Resumed: each launch continues after the steps the checkpoint holds from its slot.
  auto second = make_hiro_algorithm(o);
  second->begin_repetition(0);
  {
    CheckpointReader r(ck, "hiro");
    second->load(r);
  }
  EXPECT_EQ(step_base(*second, 0), "7");
  EXPECT_EQ(step_base(*second, 1), "3");
  send(*second, 0, 5, rec);
  EXPECT_EQ(step_base(*second, 0), "7") << "fixed for the learner process: the segment counts the rest";
  save(*second, ck);

  // Resumed again: the counts add up over the processes, and over repetitions (the actors
  // keep running from one to the next).
  auto third = make_hiro_algorithm(o);
  third->begin_repetition(0);
  {
    CheckpointReader r(ck, "hiro");
    third->load(r);
  }
  EXPECT_EQ(step_base(*third, 0), "12");
  EXPECT_EQ(step_base(*third, 1), "3");
  third->begin_repetition(1);
  EXPECT_EQ(step_base(*third, 0), "12");
  fs::remove_all(dir);
}

// A checkpoint from before the stream positions (hiro section layout 1) still loads; each
// collector's streams then continue after the steps it had sent (admitted or queued), above
// every episode count of the collectors of that time, which restarted at 0 in each process.
TEST(HiroAlgorithm, ALayoutOneCheckpointLoadsWithPositionsFromTheStepsEachCollectorSent) {
  const fs::path dir = fs::temp_directory_path() / ("ringrl-hiro-algo-v1-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const HiroTrainOptions o = small_run(dir);
  const std::vector<std::byte> rec = transition(o.learner);
  const fs::path ck = dir / "checkpoint";
  {
    // The layout-1 section: counters, eval summary, steps per collector, the queue, the learner.
    CheckpointWriter w(ck, "hiro");
    ByteWriter& b = w.section("hiro");
    b.put<std::uint32_t>(1);
    b.put<std::uint64_t>(9);  // env steps
    b.put<std::uint64_t>(0);  // low updates
    b.put<std::uint64_t>(0);  // high updates
    b.put<std::uint64_t>(0);  // evals
    b.put(hiro::HiroEvalRecord{});
    b.put<double>(-1);                               // best success
    b.put<double>(0);                                // intrinsic reward mean
    b.put_vector(std::vector<std::uint64_t>{6, 3});  // steps admitted per collector
    b.put<std::uint64_t>(2);                         // queued steps: one of each
    for (const std::uint32_t actor : {0u, 1u}) {
      b.put(actor);
      b.put_vector(rec);
    }
    HiroLearner learner(o.learner);
    learner.save(b);
    w.commit();
  }
  auto algo = make_hiro_algorithm(o);
  algo->begin_repetition(0);
  {
    CheckpointReader r(ck, "hiro");
    algo->load(r);
  }
  EXPECT_EQ(algo->budget_used(), 9u);
  EXPECT_EQ(step_base(*algo, 0), "7");
  EXPECT_EQ(step_base(*algo, 1), "4");
  fs::remove_all(dir);
}

// Publications follow the acting networks: with an actor step every update_period-th low
// update (from the first), step() asks for one after those updates only, and after every
// update when the off updates take zero-gradient actor steps (which move the actor too);
// version() counts every update either way (the run driver counts updates from it).
TEST(HiroAlgorithm, PublishesOnlyWhenAnActingNetworkChanged) {
  const fs::path dir = fs::temp_directory_path() / ("ringrl-hiro-algo-pub-" + std::to_string(getpid()));
  fs::create_directories(dir);
  for (const bool zero_grad : {false, true}) {
    for (const std::uint32_t every : {1u, 3u}) {
      HiroTrainOptions o = small_run(dir);
      o.initial_steps = 20;
      o.learner.batch_size = 8;
      o.learner.actor_zero_grad_steps = zero_grad;
      o.publish_every = every;
      auto algo = make_hiro_algorithm(o);
      algo->begin_repetition(0);
      send(*algo, 0, 32, transition(o.learner));  // 20 initial steps (admitted on arrival), 12 queued
      EXPECT_EQ(algo->version(), 0u);
      bool changed = false;  // an actor moved since the last publication
      for (std::uint64_t low = 1; low <= 12; ++low) {
        changed = changed || zero_grad || (low - 1) % 2 == 0;  // update `low` has counter low - 1
        const bool expected = low % every == 0 && changed;
        if (expected) changed = false;
        EXPECT_EQ(algo->step(), expected) << "low update " << low << ", zero_grad " << zero_grad << ", publish_every "
                                          << every;
        EXPECT_EQ(algo->version(), low);
      }
    }
  }
  fs::remove_all(dir);
}

// A learner_threads count is taken as asked up to the maximum the options accept (auto:
// tests/learner/threads_test.cc).
TEST(HiroLearnerThreads, CountsAreValidatedUpToTheMaximum) {
  HiroTrainOptions o = small_run(fs::temp_directory_path());
  o.learner_threads = static_cast<std::uint32_t>(learner::kMaxTaskThreads);
  EXPECT_NO_THROW(o.validate());
  o.learner_threads = static_cast<std::uint32_t>(learner::kMaxTaskThreads) + 1;
  try {
    o.validate();
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "learner_threads 257: expected 0 (auto) to 256");
  }
}

}  // namespace
}  // namespace ringrl::hiro
