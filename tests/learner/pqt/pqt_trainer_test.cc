// Tests for learner/pqt/pqt_trainer.h: the PQT wing fed record by record, as the run driver
// feeds it: the update ratio of each pace and what the top-k queue is offered (spec §5.4, §5.7).
#include "learner/pqt/pqt_trainer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <sched.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/checkpoint.h"
#include "common/errors.h"
#include "common/pqt/program_record.h"
#include "common/records.h"

namespace ringrl::learner {
namespace {

namespace fs = std::filesystem;

constexpr int kB = 4;
constexpr int kT = 6;

using Tokens = std::vector<std::int32_t>;

class PqtWing : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::set_num_threads(1);
    dir_ = fs::temp_directory_path() / ("ringrl-pqt-trainer-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    o_.learner = LearnerOptions::paper(TrainMode::kPqt);
    o_.learner.batch_size = kB;
    o_.learner.max_len = kT;
    o_.learner.device = "cpu";
    o_.task = "reverse";
    o_.run_dir = dir_.string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One program record, made with learner version `version`, fed to `algo`.
  static void feed(Algorithm& algo, const Tokens& tokens, double reward, std::uint64_t version) {
    ProgramEpisodeHeader h{};
    h.length = static_cast<std::uint32_t>(tokens.size());
    h.reward = reward;
    const std::vector<float> log_probs(tokens.size(), std::log(1.0f / 8));
    std::vector<std::byte> bytes(program_episode_bytes(h.length));
    encode_program_episode(bytes.data(), h, tokens.data(), log_probs.data());
    RecordView rec;
    rec.type = kRecordProgramEpisode;
    rec.version = version;
    rec.data = bytes.data();
    rec.length = static_cast<std::uint32_t>(bytes.size());
    algo.on_record(/*actor=*/0, rec, version);
  }

  // The wing's top-k queue as its checkpoint holds it.
  MaxUniquePriorityQueue queue_of(const Algorithm& algo) const {
    const fs::path file = dir_ / "state.ckpt";
    {
      CheckpointWriter w(file, "pqt");
      algo.save(w);
      w.commit();
    }
    CheckpointReader r(file, "pqt");
    return load_pqt_model(r, o_.learner)->queue();
  }

  // Batch u: four programs no other batch has; rewards tie at the top (indices 1 and 2).
  static std::vector<Tokens> batch_programs(int u) {
    std::vector<Tokens> p;
    for (int i = 0; i < kB; ++i) p.push_back({1 + u % 8, 2 + i, 3, 4, 5, 6});
    return p;
  }
  static constexpr float kRewards[kB] = {0.1f, 0.7f, 0.7f, 0.3f};

  fs::path dir_;
  PqtTrainOptions o_;
};

TEST_F(PqtWing, OptionNamesParseOnceAndBadValuesNameWhatWasExpected) {
  EXPECT_EQ(parse_queue_offer("batch_best"), QueueOffer::kBatchBest);
  EXPECT_EQ(parse_queue_offer("arrival"), QueueOffer::kArrival);
  EXPECT_STREQ(queue_offer_name(QueueOffer::kBatchBest), "batch_best");
  EXPECT_STREQ(queue_offer_name(QueueOffer::kArrival), "arrival");
  try {
    parse_queue_offer("sometimes");
    ADD_FAILURE() << "accepted queue_offer 'sometimes'";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "queue_offer 'sometimes': expected batch_best or arrival");
  }
  // The fixture's options keep the defaults of both.
  EXPECT_EQ(o_.pace, Pace::kLearner);
  EXPECT_EQ(o_.queue_offer, QueueOffer::kBatchBest);
}

TEST_F(PqtWing, DefaultsStepOncePerBatchAndQueueOnlyItsBestAfterTheStep) {
  const std::unique_ptr<Algorithm> algo = make_pqt_algorithm(o_);
  algo->begin_repetition(0);
  constexpr int kUpdates = 3;
  for (int u = 0; u < kUpdates; ++u) {
    const std::vector<Tokens> p = batch_programs(u);
    for (int i = 0; i < kB; ++i) {
      EXPECT_FALSE(algo->ready()) << "update " << u << ", episode " << i;
      EXPECT_TRUE(algo->wants_records());
      feed(*algo, p[i], kRewards[i], algo->version());
    }
    EXPECT_TRUE(algo->ready());
    EXPECT_FALSE(algo->wants_records()) << "a whole batch is held: the rings hold the actors back";
    // Nothing of this batch reached the queue or the count before its step.
    EXPECT_EQ(queue_of(*algo).size(), static_cast<std::size_t>(u));
    EXPECT_EQ(algo->budget_used(), static_cast<std::uint64_t>(u * kB));
    ASSERT_TRUE(algo->step());
    EXPECT_EQ(algo->version(), static_cast<std::uint64_t>(u + 1));
    EXPECT_EQ(algo->budget_used(), static_cast<std::uint64_t>((u + 1) * kB)) << "one update per B programs";
    // Exactly one program per update: the batch's argmax, the first index of the tie.
    const MaxUniquePriorityQueue q = queue_of(*algo);
    EXPECT_EQ(q.size(), static_cast<std::size_t>(u + 1));
    EXPECT_TRUE(q.contains(p[1])) << "update " << u;
    EXPECT_FALSE(q.contains(p[2]));
    EXPECT_FALSE(q.contains(p[0]));
    EXPECT_FALSE(q.contains(p[3]));
    EXPECT_FALSE(algo->ready());
  }
  EXPECT_EQ(algo->result()["num_batches"], kUpdates);
}

TEST_F(PqtWing, ArrivalOffersEveryProgramBeforeTheStep) {
  o_.queue_offer = QueueOffer::kArrival;
  const std::unique_ptr<Algorithm> algo = make_pqt_algorithm(o_);
  algo->begin_repetition(0);
  const std::vector<Tokens> p = batch_programs(0);
  for (int i = 0; i < kB; ++i) feed(*algo, p[i], kRewards[i], 0);
  MaxUniquePriorityQueue q = queue_of(*algo);
  EXPECT_EQ(q.size(), static_cast<std::size_t>(kB)) << "every program is offered on arrival";
  for (const Tokens& t : p) EXPECT_TRUE(q.contains(t));
  ASSERT_TRUE(algo->step());
  q = queue_of(*algo);
  EXPECT_EQ(q.size(), static_cast<std::size_t>(kB)) << "the step's own push is a duplicate";
}

TEST_F(PqtWing, PaceActorsCountsOnArrivalAndStepsOnTheNewestBatch) {
  o_.pace = Pace::kActors;
  const std::unique_ptr<Algorithm> algo = make_pqt_algorithm(o_);
  algo->begin_repetition(0);
  const std::vector<Tokens> old = batch_programs(0), newest = batch_programs(1);
  for (int i = 0; i < kB; ++i) feed(*algo, old[i], kRewards[i], 0);
  for (int i = 0; i < kB; ++i) feed(*algo, newest[i], kRewards[i], 0);
  EXPECT_TRUE(algo->wants_records()) << "pace actors never holds the actors back";
  EXPECT_EQ(algo->budget_used(), static_cast<std::uint64_t>(2 * kB));
  ASSERT_TRUE(algo->step());
  EXPECT_EQ(algo->version(), 1u);
  const MaxUniquePriorityQueue q = queue_of(*algo);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_TRUE(q.contains(newest[1])) << "the newest batch was trained on";
}

}  // namespace
}  // namespace ringrl::learner
