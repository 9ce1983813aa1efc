// The GA baseline (spec brain_coder §6.5, settings ga-20M of §6.2) as an Algorithm of the run
// driver (learner/run_driver.h): `ringrl train ga`.
//
// Contract:
// * Generations. Generation 1 is `population` random genomes. Every later one: roulette
//   selection of population - hall_of_fame parents from the previous generation, then, pair
//   by pair (0-1, 2-3, ...), single-point crossover with probability crossover_rate and
//   per-gene mutation of both children with probability mutation_rate (an odd last parent
//   goes on unchanged, as in ga_lib), then the hall of fame's genomes appended best first with
//   their known rewards (elitism). The random draws come in that order from one generator
//   seeded with repetition_seed(seed, rep); the operators are defined in learner/ga/ga_ops.h.
// * Fitness = the total reward of §3 from bf::make_task(task, paper variant) with
//   max_code_length = genome_length. Children found in the reward cache, and repeats within
//   one generation, are not executed again.
// * Evaluation. evaluator "actors": the genomes that still need a score are the weight blob
//   (common/ga/request_layout.h); each actor scores rows j with j % actors == its slot and
//   pushes one GaFitness record per genome; when every row is answered, ready() and step()
//   completes the generation and builds the next, which the driver publishes. Records of an
//   older request are ignored, repeats of an answered row too. evaluator "learner": step()
//   scores the rows itself, with a oneTBB parallel_for over learner_threads threads (the
//   actors idle). Results do not depend on the evaluator, the actor count or arrival order.
// * Counting (§6.5): NPE = completed generations x population (cache hits and the hall of
//   fame included); the learner version is the number of completed generations. The hall of
//   fame's best is checked for correctness every check_every generations and when the budget
//   is reached; solved() turns true only there, and the driver stops on it with
//   stop_on_success. `executed` counts the programs really run.
// * Results: found_solution, code_solution (the hall-of-fame best when a check found it
//   correct), best_reward / best_code (the best ever seen), num_batches = generations,
//   batch_size = population; solutions.txt gets every new best with the NPE so far.
// * State (checkpoints): generator, generation count, the pending population with its known
//   rewards, the hall of fame, the results so far. The reward cache is not saved (it never
//   changes a result), so a resumed run redoes the same generations as an uninterrupted one.
// * One thread (the driver's) uses an instance; options are validated once (UsageError).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <vector>

#include "common/blob_layout.h"
#include "envs/bf/scorer.h"
#include "learner/ga/ga_ops.h"
#include "learner/run_driver.h"

namespace ringrl::ga {

/// Where the genomes are scored (see the contract).
enum class Evaluator { kActors, kLearner };
/// "actors" / "learner"; UsageError otherwise.
Evaluator parse_evaluator(const std::string& name);
const char* evaluator_name(Evaluator e);

inline constexpr std::uint32_t kDefaultPopulation = 100;    // ga-20M (§6.2)
inline constexpr double kDefaultCrossoverRate = 0.95;       // ga-20M
inline constexpr double kDefaultMutationRate = 0.15;        // ga-20M
inline constexpr int kDefaultGenomeLength = 100;            // T (§6.5)
inline constexpr std::uint32_t kDefaultHallOfFame = 2;      // §6.5
inline constexpr std::uint64_t kDefaultCheckEvery = 100;    // generations between correctness checks
inline constexpr std::uint64_t kDefaultCacheSize = 100000;  // genomes the reward cache holds
inline constexpr std::uint64_t kDefaultMaxNpe = 20000000;   // ga-20M
inline constexpr std::uint32_t kMaxPopulation = 100000;
inline constexpr int kMaxGenomeLength = 10000;
inline constexpr std::uint64_t kMaxGenes = std::uint64_t{1} << 24;  // population x length: a 64 MiB blob
inline constexpr std::uint32_t kMaxLearnerThreads = 1024;

struct GaOptions : learner::RunSettings {
  std::string task;  // required
  std::uint32_t population = kDefaultPopulation;
  double crossover_rate = kDefaultCrossoverRate;
  double mutation_rate = kDefaultMutationRate;
  int genome_length = kDefaultGenomeLength;  // config key timestep_limit
  std::uint32_t hall_of_fame = kDefaultHallOfFame;
  std::uint64_t check_every = kDefaultCheckEvery;
  std::uint64_t cache_size = kDefaultCacheSize;  // 0 = no cache
  Evaluator evaluator = Evaluator::kActors;
  std::uint32_t learner_threads = 1;  // evaluator learner: scoring threads
  std::uint32_t actors = 1;
  std::uint64_t max_npe = kDefaultMaxNpe;  // per repetition; 0 = unlimited
  std::uint64_t seed = 0;

  /// Throws UsageError naming the first bad value (the task name included).
  void validate() const;
};

/// What run_ga_training() adds to the driver's summary.
struct GaTrainSummary {
  learner::DriverSummary driver;
  std::uint64_t executed = 0;  // programs run in this invocation (cache misses)
  double executed_per_s = 0;   // executed / driver.seconds
};

/// Runs the training through the run driver.
GaTrainSummary run_ga_training(const GaOptions& options);

/// The wing run_ga_training() hands the driver; tests step it by hand. `options` (validated)
/// must outlive it.
class GaAlgorithm final : public learner::Algorithm {
 public:
  explicit GaAlgorithm(const GaOptions& options);
  ~GaAlgorithm() override;

  // --- learner::Algorithm
  std::string name() const override { return "ga"; }
  std::uint64_t record_mask() const override;
  std::uint64_t ring_bytes() const override;
  std::size_t blob_bytes() const override { return channel_blob_bytes(layout_); }
  const char* budget_key() const override { return "npe"; }
  /// With actors on other nodes, every evaluator's launch carries its place in the run and the
  /// run's evaluator count (params run_slot, run_actors): each scores rows j with
  /// j % run_actors == run_slot, so the nodes split every request with rank 0's evaluators.
  void fill_launch(ActorLaunch& launch) const override;
  void add_remote_slots(std::uint32_t first, std::uint32_t count) override { run_actors_ = first + count; }
  void begin_repetition(std::uint32_t rep) override;
  std::uint64_t version() const override { return generation_; }
  void on_record(std::uint32_t actor, const RecordView& record, std::uint64_t version) override;
  bool ready() const override;
  bool step() override;
  void write_blob(std::byte* dst) const override;
  std::uint64_t budget_used() const override { return generation_ * o_.population; }
  bool solved() const override { return found_; }
  void save(CheckpointWriter& out) const override;
  void load(CheckpointReader& in) override;
  std::vector<std::string> metric_columns() const override;
  std::vector<double> metric_row(const learner::DriverTick& tick) const override;
  std::vector<std::pair<std::string, std::string>> progress_fields(const learner::DriverTick& tick) const override;
  nlohmann::json result() const override;
  std::string describe_result() const override;

  // --- inspection (tests, the command's summary)
  /// Completed generations of this repetition.
  std::uint64_t generation() const noexcept { return generation_; }
  /// The generation being evaluated (hall-of-fame copies last).
  const std::vector<Genome>& population() const noexcept { return population_; }
  /// The genomes the actors are asked to score now (the blob's rows).
  const std::vector<Genome>& request() const noexcept { return request_; }
  const HallOfFame& hall_of_fame() const noexcept { return hof_; }
  /// Programs executed in this repetition / by this object since construction.
  std::uint64_t executed() const noexcept { return executed_; }
  std::uint64_t executed_total() const noexcept { return executed_total_; }
  std::uint64_t cache_hits() const noexcept { return cache_hits_; }
  double best_reward() const noexcept { return best_reward_; }
  const std::string& best_code() const noexcept { return best_code_; }
  /// Whether the repetition reached its end (budget, or solved with stop_on_success).
  bool finished() const noexcept;

 private:
  void build_request();
  void score_in_learner();
  void complete_generation();
  void next_generation();
  void note_best();

  const GaOptions& o_;
  BlobLayout layout_;
  GaRng rng_;
  std::uint32_t rep_ = 0;
  std::uint64_t generation_ = 0;
  std::vector<Genome> population_;
  std::vector<Fitness> fitness_;
  std::vector<std::uint8_t> known_;             // fitness_[m] is valid
  std::vector<Genome> request_;                 // rows of the blob
  std::vector<std::vector<std::size_t>> rows_;  // request row -> population indices
  std::vector<std::uint8_t> answered_;          // per request row
  std::size_t unanswered_ = 0;
  HallOfFame hof_;
  FitnessCache cache_;
  std::vector<bf::Scorer> scorers_;  // evaluator learner: one per thread
  struct Threads;                    // evaluator learner: the oneTBB arena, made once
  std::unique_ptr<Threads> threads_;
  bool found_ = false;
  std::string code_solution_;
  std::uint64_t solution_npe_ = 0;
  double best_reward_ = 0;
  std::string best_code_;
  double mean_reward_ = 0;  // of the last completed generation
  std::uint64_t executed_ = 0, executed_total_ = 0, cache_hits_ = 0, stale_ = 0;
  std::uint32_t run_actors_ = 0;  // evaluators over every node; 0 = this machine's only
};

}  // namespace ringrl::ga
