// The GA wing stepped by hand (learner/ga/ga_algorithm.h): the request blob and its records,
// NPE counting, the reward cache, elitism, determinism for a seed whatever the actor count,
// arrival order or evaluator, and checkpoints.
#include "learner/ga/ga_algorithm.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/checkpoint.h"
#include "common/errors.h"
#include "common/ga/fitness_record.h"
#include "common/ga/request_layout.h"
#include "common/records.h"
#include "envs/bf/scorer.h"

namespace {

using namespace ringrl;
using namespace ringrl::ga;
namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("ringrl-ga-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

GaOptions small_options(const fs::path& dir) {
  GaOptions o;
  o.run_dir = dir.string();
  o.task = "reverse";
  o.population = 20;
  o.genome_length = 20;
  o.max_npe = 0;
  o.seed = 9;
  return o;
}

// The actors' side by hand: reads the blob, scores every row, and hands the records to the
// algorithm as `actors` actors would push them (rows j % actors == slot), in `order`.
class HandActors {
 public:
  explicit HandActors(const GaOptions& o)
      : layout_(ga_request_layout(static_cast<int>(o.population), o.genome_length)), scorer_(make(o)) {}

  // Answers the current request; returns the number of rows.
  std::size_t answer(GaAlgorithm& algo, std::uint32_t actors, bool reversed) {
    std::vector<std::byte> blob(algo.blob_bytes());
    algo.write_blob(blob.data());
    std::string error;
    const float* payload = blob_payload(blob, layout_, &error);
    EXPECT_NE(payload, nullptr) << error;
    std::vector<std::string> rows;
    EXPECT_TRUE(read_ga_request(payload, layout_, &rows, &error)) << error;
    std::vector<std::pair<std::uint32_t, GaFitnessRecord>> recs;
    for (std::uint32_t slot = 0; slot < actors; ++slot)
      for (std::size_t j = slot; j < rows.size(); j += actors) {
        const bf::ScoreResult s = scorer_.score(rows[j]);
        GaFitnessRecord r{};
        r.request_index = static_cast<std::uint32_t>(j);
        r.correct = s.correct ? 1 : 0;
        r.reward = s.total_reward;
        r.genome_hash = ga_genome_hash(rows[j].data(), rows[j].size());
        recs.emplace_back(slot, r);
      }
    if (reversed) std::reverse(recs.begin(), recs.end());
    for (const auto& [slot, r] : recs) feed(algo, slot, r, algo.version());
    return rows.size();
  }

  static void feed(GaAlgorithm& algo, std::uint32_t actor, const GaFitnessRecord& r, std::uint64_t version) {
    RecordView v;
    v.type = kRecordGaFitness;
    v.length = sizeof r;
    v.data = reinterpret_cast<const std::byte*>(&r);
    algo.on_record(actor, v, version);
  }

 private:
  static bf::Scorer make(const GaOptions& o) {
    bf::ScoreOptions so = bf::ScoreOptions::for_variant(bf::Variant::kPaper);
    so.max_code_length = o.genome_length;
    return bf::make_task(o.task, so);
  }
  BlobLayout layout_;
  bf::Scorer scorer_;
};

// Runs `generations` generations through the record path.
void run_generations(GaAlgorithm& algo, const GaOptions& o, int generations, std::uint32_t actors, bool reversed) {
  HandActors ev(o);
  for (int g = 0; g < generations; ++g) {
    ev.answer(algo, actors, reversed);
    ASSERT_TRUE(algo.ready());
    ASSERT_TRUE(algo.step());
  }
}

TEST(GaAlgorithm, NpeCountsGenerationsTimesPopulationCacheHitsIncluded) {
  const fs::path dir = temp_dir("npe");
  GaOptions o = small_options(dir);
  o.mutation_rate = 0;   // children are copies of their parents ...
  o.crossover_rate = 0;  // ... so from generation 2 on every genome is a cache hit
  GaAlgorithm algo(o);
  algo.begin_repetition(0);
  EXPECT_EQ(algo.budget_used(), 0u);
  EXPECT_EQ(algo.request().size(), 20u) << "generation 1: every random genome is scored";
  run_generations(algo, o, 1, 1, false);
  EXPECT_EQ(algo.budget_used(), 20u);
  EXPECT_EQ(algo.executed(), 20u);
  for (int g = 2; g <= 10; ++g) {
    EXPECT_TRUE(algo.request().empty()) << "nothing to execute again, generation " << g;
    EXPECT_TRUE(algo.ready());
    EXPECT_TRUE(algo.step());
    EXPECT_EQ(algo.budget_used(), static_cast<std::uint64_t>(g) * 20u);
  }
  EXPECT_EQ(algo.executed(), 20u) << "a repeated string is never executed again";
  EXPECT_EQ(algo.version(), 10u);
  fs::remove_all(dir);
}

TEST(GaAlgorithm, TheCacheSkipsRepeatsAndWithoutItTheyRunAgain) {
  const fs::path dir = temp_dir("cache");
  GaOptions o = small_options(dir);
  o.mutation_rate = 0.01;  // many unmutated copies
  GaAlgorithm cached(o);
  o.cache_size = 0;
  GaAlgorithm uncached(o);
  cached.begin_repetition(0);
  uncached.begin_repetition(0);
  run_generations(cached, o, 10, 1, false);
  run_generations(uncached, o, 10, 1, false);
  EXPECT_LT(cached.executed(), uncached.executed());
  EXPECT_GT(cached.cache_hits(), 0u);
  EXPECT_EQ(cached.best_code(), uncached.best_code()) << "the cache never changes a result";
  EXPECT_EQ(cached.population(), uncached.population());
  fs::remove_all(dir);
}

TEST(GaAlgorithm, HallOfFameIsAppendedAndTheBestNeverGetsWorse) {
  const fs::path dir = temp_dir("elite");
  GaOptions o = small_options(dir);
  GaAlgorithm algo(o);
  algo.begin_repetition(0);
  HandActors ev(o);
  double best = -10;
  for (int g = 0; g < 15; ++g) {
    ev.answer(algo, 2, false);
    ASSERT_TRUE(algo.step());
    const auto& hof = algo.hall_of_fame().entries();
    ASSERT_EQ(hof.size(), 2u);
    EXPECT_NE(hof[0].genome, hof[1].genome);
    EXPECT_GE(hof[0].fitness.reward, hof[1].fitness.reward);
    const auto& pop = algo.population();
    ASSERT_EQ(pop.size(), 20u);
    EXPECT_EQ(pop[18], hof[0].genome) << "elitism: the hall of fame closes the population";
    EXPECT_EQ(pop[19], hof[1].genome);
    for (const Genome& g2 : pop) EXPECT_EQ(g2.size(), 20u);
    EXPECT_GE(hof[0].fitness.reward, best);
    best = hof[0].fitness.reward;
  }
  EXPECT_DOUBLE_EQ(algo.best_reward(), best);
  fs::remove_all(dir);
}

TEST(GaAlgorithm, AnOddLastParentGoesOnUnmutatedAsInGaLib) {
  // population 5 - hall of fame 2 = 3 parents: pair (0, 1) is crossed and mutated, parent 2
  // is copied as selected (ga_lib's mutate_and_crossover leaves children[-1] = population[-1]).
  const fs::path dir = temp_dir("odd");
  GaOptions o = small_options(dir);
  o.population = 5;
  o.crossover_rate = 0;
  o.mutation_rate = 1;  // every gene of a mutated child changes place or value
  GaAlgorithm algo(o);
  algo.begin_repetition(0);
  HandActors ev(o);
  for (int g = 0; g < 5; ++g) {
    const std::vector<Genome> parents = algo.population();
    ev.answer(algo, 1, false);
    ASSERT_TRUE(algo.step());
    const std::vector<Genome>& pop = algo.population();
    ASSERT_EQ(pop.size(), 5u);
    const auto selected = [&](const Genome& x) { return std::find(parents.begin(), parents.end(), x) != parents.end(); };
    EXPECT_FALSE(selected(pop[0])) << "generation " << g;
    EXPECT_FALSE(selected(pop[1])) << "generation " << g;
    EXPECT_TRUE(selected(pop[2])) << "generation " << g << ": the odd parent was changed";
  }
  fs::remove_all(dir);
}

TEST(GaAlgorithm, SameSeedSameRunWhateverTheActorsOrderOrEvaluator) {
  const fs::path dir = temp_dir("det");
  GaOptions o = small_options(dir);
  GaAlgorithm one(o), two(o), other(o);
  one.begin_repetition(0);
  two.begin_repetition(0);
  run_generations(one, o, 12, 1, false);
  run_generations(two, o, 12, 3, true);
  EXPECT_EQ(one.population(), two.population());
  EXPECT_EQ(one.best_code(), two.best_code());

  GaOptions lo = o;
  lo.evaluator = Evaluator::kLearner;
  lo.learner_threads = 2;
  GaAlgorithm in_learner(lo);
  in_learner.begin_repetition(0);
  for (int g = 0; g < 12; ++g) {
    ASSERT_TRUE(in_learner.ready());
    ASSERT_TRUE(in_learner.step());
  }
  EXPECT_EQ(in_learner.population(), one.population());
  EXPECT_EQ(in_learner.executed(), one.executed());

  GaOptions other_seed = o;
  other_seed.seed = 10;
  GaAlgorithm diff(other_seed);
  diff.begin_repetition(0);
  EXPECT_NE(diff.population(), one.population());
  fs::remove_all(dir);
}

TEST(GaAlgorithm, CorrectnessIsCheckedEveryCheckEveryGenerationsAndAtTheBudget) {
  const fs::path dir = temp_dir("check");
  GaOptions o = small_options(dir);
  o.task = "print";  // 1 2 3 4 5 in 12 genes: `+.+.+.+.+.` and two harmless ones
  o.genome_length = 12;
  o.population = 100;
  o.check_every = 5;
  o.evaluator = Evaluator::kLearner;
  GaAlgorithm algo(o);
  algo.begin_repetition(0);
  while (!algo.finished() && algo.generation() < 5000) {
    ASSERT_TRUE(algo.ready());
    algo.step();
    if (!algo.solved()) continue;
    EXPECT_EQ(algo.generation() % 5, 0u) << "solved only at a check";
  }
  ASSERT_TRUE(algo.solved()) << "print with 12 genes is easy";
  EXPECT_FALSE(algo.ready()) << "stop_on_success: no further generation";
  const nlohmann::json r = algo.result();
  EXPECT_TRUE(r["found_solution"].get<bool>());
  EXPECT_EQ(r["code_solution"].get<std::string>().size(), 12u);
  EXPECT_EQ(algo.budget_used(), algo.generation() * 100);
  fs::remove_all(dir);
}

TEST(GaAlgorithm, TheBudgetEndsTheRepetitionAfterWholeGenerations) {
  const fs::path dir = temp_dir("budget");
  GaOptions o = small_options(dir);
  o.max_npe = 70;  // 20 per generation: the fourth one reaches it
  o.evaluator = Evaluator::kLearner;
  GaAlgorithm algo(o);
  algo.begin_repetition(0);
  int steps = 0;
  while (algo.ready()) {
    algo.step();
    ++steps;
  }
  EXPECT_EQ(steps, 4);
  EXPECT_EQ(algo.budget_used(), 80u);
  EXPECT_TRUE(algo.finished());
  fs::remove_all(dir);
}

TEST(GaAlgorithm, CheckpointRoundTripContinuesTheSameRun) {
  const fs::path dir = temp_dir("ckpt");
  GaOptions o = small_options(dir);
  GaAlgorithm straight(o), first(o), second(o);
  straight.begin_repetition(0);
  run_generations(straight, o, 10, 1, false);

  first.begin_repetition(0);
  run_generations(first, o, 4, 2, false);
  {
    CheckpointWriter out(dir / "ck.bin", "ga");
    first.save(out);
    out.commit();
  }
  CheckpointReader in(dir / "ck.bin", "ga");
  second.begin_repetition(0);
  second.load(in);
  EXPECT_EQ(second.generation(), 4u);
  EXPECT_EQ(second.budget_used(), 80u);
  EXPECT_EQ(second.population(), first.population());
  run_generations(second, o, 6, 1, false);
  EXPECT_EQ(second.population(), straight.population()) << "no cache in the checkpoint, same generations";
  EXPECT_EQ(second.best_code(), straight.best_code());

  // A checkpoint of another population size is refused in one line.
  GaOptions bigger = o;
  bigger.population = 21;
  GaAlgorithm wrong(bigger);
  wrong.begin_repetition(0);
  CheckpointReader again(dir / "ck.bin", "ga");
  try {
    wrong.load(again);
    FAIL() << "loaded a population of 20 into 21";
  } catch (const CorruptData& e) {
    EXPECT_NE(std::string(e.what()).find("population"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(GaAlgorithm, BadStaleAndRepeatedRecords) {
  const fs::path dir = temp_dir("records");
  GaOptions o = small_options(dir);
  GaAlgorithm algo(o);
  algo.begin_repetition(0);
  const Genome g = algo.request().at(0);
  GaFitnessRecord r{};
  r.request_index = 0;
  r.reward = 0.1;
  r.genome_hash = ga_genome_hash(g.data(), g.size());
  HandActors::feed(algo, 0, r, 0);
  HandActors::feed(algo, 0, r, 0);  // a restarted actor's repeat: ignored
  EXPECT_EQ(algo.executed(), 1u);
  HandActors::feed(algo, 0, r, 7);  // made for another request: ignored
  EXPECT_EQ(algo.executed(), 1u);
  GaFitnessRecord bad = r;
  bad.request_index = 1;  // the hash of row 0 under row 1
  EXPECT_THROW(HandActors::feed(algo, 1, bad, 0), std::runtime_error);
  bad = r;
  bad.request_index = 500;
  EXPECT_THROW(HandActors::feed(algo, 1, bad, 0), std::runtime_error);
  bad = r;
  bad.correct = 3;
  EXPECT_THROW(HandActors::feed(algo, 1, bad, 0), std::runtime_error);
  fs::remove_all(dir);
}

TEST(GaOptions, BadValuesNameTheValue) {
  GaOptions o = small_options(temp_dir("opts"));
  auto message = [](const GaOptions& x) {
    try {
      x.validate();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  GaOptions x = o;
  x.population = 2;
  EXPECT_NE(message(x).find("population 2"), std::string::npos) << message(x);
  x = o;
  x.crossover_rate = 1.5;
  EXPECT_NE(message(x).find("crossover_rate 1.5"), std::string::npos) << message(x);
  x = o;
  x.mutation_rate = -0.1;
  EXPECT_NE(message(x).find("mutation_rate -0.1"), std::string::npos) << message(x);
  x = o;
  x.task = "revers";
  EXPECT_NE(message(x).find("reverse"), std::string::npos) << message(x);
  EXPECT_EQ(message(o), "");
  fs::remove_all(o.run_dir);
}

}  // namespace
