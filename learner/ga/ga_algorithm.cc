#include "learner/ga/ga_algorithm.h"

#include "learner/threads.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include "common/errors.h"
#include "common/ga/fitness_record.h"
#include "common/records.h"
#include "common/run_segment.h"
#include "common/runfiles/results_jsonl.h"
#include "common/seeds.h"
#include "common/spsc_ring.h"

namespace ringrl::ga {
namespace {

namespace fs = std::filesystem;

constexpr const char* kGaSection = "ga";       // this wing's checkpoint section
constexpr std::uint32_t kGaStateVersion = 1;   // layout of that section
constexpr double kInitialBestReward = -10.0;   // as the PQT trainer's (spec §5.6)
constexpr double kBestRewardRounding = 1e10;   // compare after rounding to 10 decimals (§5.6)
constexpr std::uint64_t kRingGenerations = 2;  // a ring holds this many generations of records
constexpr std::uint64_t kMaxCodeBytes = std::uint64_t{1} << 20;

bf::Scorer make_scorer(const GaOptions& o) {
  bf::ScoreOptions so = bf::ScoreOptions::for_variant(bf::Variant::kPaper);
  so.max_code_length = o.genome_length;
  return bf::make_task(o.task, so);
}

}  // namespace

Evaluator parse_evaluator(const std::string& name) {
  if (name == "actors") return Evaluator::kActors;
  if (name == "learner") return Evaluator::kLearner;
  throw UsageError(fmt::format("evaluator '{}': expected actors or learner", name));
}

const char* evaluator_name(Evaluator e) { return e == Evaluator::kActors ? "actors" : "learner"; }

void GaOptions::validate() const {
  RunSettings::validate();
  if (task.empty()) throw UsageError("no task given: expected --task NAME (see `ringrl bf tasks`)");
  if (hall_of_fame < 1) throw UsageError(fmt::format("hall_of_fame {}: expected at least 1", hall_of_fame));
  if (population <= hall_of_fame || population > kMaxPopulation)
    throw UsageError(fmt::format("population {}: expected {} to {} (more than the hall of fame of {})", population,
                                 hall_of_fame + 1, kMaxPopulation, hall_of_fame));
  if (!(crossover_rate >= 0 && crossover_rate <= 1))
    throw UsageError(fmt::format("crossover_rate {}: expected a probability in [0, 1]", crossover_rate));
  if (!(mutation_rate >= 0 && mutation_rate <= 1))
    throw UsageError(fmt::format("mutation_rate {}: expected a probability in [0, 1]", mutation_rate));
  if (genome_length < 1 || genome_length > kMaxGenomeLength)
    throw UsageError(
        fmt::format("timestep_limit {}: expected a genome length of 1 to {}", genome_length, kMaxGenomeLength));
  if (std::uint64_t{population} * static_cast<std::uint64_t>(genome_length) > kMaxGenes)
    throw UsageError(fmt::format("population {} x timestep_limit {}: expected at most {} genes in all", population,
                                 genome_length, kMaxGenes));
  if (check_every < 1) throw UsageError(fmt::format("check_every {}: expected at least 1", check_every));
  if (learner_threads < 1 || learner_threads > kMaxLearnerThreads)
    throw UsageError(fmt::format("learner_threads {}: expected 1 to {}", learner_threads, kMaxLearnerThreads));
  if (actors < 1 || actors > kMaxActors)
    throw UsageError(fmt::format("actors {}: expected 1 to {}", actors, kMaxActors));
  (void)make_scorer(*this);  // an unknown task: UsageError listing the closest names
}

// The arena the learner-side evaluation runs in: learner_threads threads, kept for the run
// (an arena per generation costs more than a generation's scoring).
struct GaAlgorithm::Threads {
  explicit Threads(int n) : arena(n) {}
  tbb::task_arena arena;
};

GaAlgorithm::GaAlgorithm(const GaOptions& o)
    : o_(o),
      layout_(ga_request_layout(static_cast<int>(o.population), o.genome_length)),
      hof_(o.hall_of_fame),
      cache_(static_cast<std::size_t>(o.cache_size)) {
  const std::uint32_t scorers = o.evaluator == Evaluator::kLearner ? o.learner_threads : 0;
  for (std::uint32_t t = 0; t < scorers; ++t) scorers_.push_back(make_scorer(o));
  if (scorers > 1) threads_ = std::make_unique<Threads>(static_cast<int>(scorers));
}

GaAlgorithm::~GaAlgorithm() = default;

std::uint64_t GaAlgorithm::record_mask() const { return record_type_bit(kRecordGaFitness); }

std::uint64_t GaAlgorithm::ring_bytes() const {
  return kRingGenerations * std::uint64_t{o_.population} * frame_bytes(sizeof(GaFitnessRecord));
}

bool GaAlgorithm::finished() const noexcept {
  return (o_.max_npe > 0 && budget_used() >= o_.max_npe) || (found_ && o_.stop_on_success);
}

void GaAlgorithm::begin_repetition(std::uint32_t rep) {
  rep_ = rep;
  rng_ = GaRng(repetition_seed(o_.seed, rep));
  generation_ = 0;
  hof_.clear();
  cache_.clear();
  found_ = false;
  code_solution_.clear();
  solution_npe_ = 0;
  best_reward_ = kInitialBestReward;
  best_code_.clear();
  mean_reward_ = 0;
  executed_ = cache_hits_ = stale_ = 0;
  // Generation 1: random genomes, none scored yet.
  population_.clear();
  for (std::uint32_t m = 0; m < o_.population; ++m) population_.push_back(random_genome(o_.genome_length, rng_));
  fitness_.assign(o_.population, Fitness{});
  known_.assign(o_.population, 0);
  build_request();
}

// Every individual without a known reward: from the cache, or a request row (one row per
// distinct genome).
void GaAlgorithm::build_request() {
  request_.clear();
  rows_.clear();
  std::unordered_map<Genome, std::size_t> row_of;
  for (std::size_t m = 0; m < population_.size(); ++m) {
    if (known_[m]) continue;
    if (const Fitness* f = cache_.find(population_[m])) {
      fitness_[m] = *f;
      known_[m] = 1;
      ++cache_hits_;
      continue;
    }
    auto [it, fresh] = row_of.emplace(population_[m], request_.size());
    if (fresh) {
      request_.push_back(population_[m]);
      rows_.emplace_back();
    } else {
      ++cache_hits_;  // a repeat within the generation: scored once
    }
    rows_[it->second].push_back(m);
  }
  answered_.assign(request_.size(), 0);
  unanswered_ = request_.size();
}

void GaAlgorithm::fill_launch(ActorLaunch& launch) const {
  if (run_actors_ == 0) return;  // one machine: the slot is the place, the config the count
  launch.params["run_slot"] = std::to_string(launch.slot);
  launch.params["run_actors"] = std::to_string(run_actors_);
}

void GaAlgorithm::on_record(std::uint32_t actor, const RecordView& rec, std::uint64_t version) {
  GaFitnessRecord r;
  std::string error;
  if (!decode_ga_fitness(rec.data, rec.length, kMaxPopulation, &r, &error))
    throw std::runtime_error(fmt::format("actor {} sent a bad GA fitness record: {}", actor, error));
  if (version != generation_ || finished()) {  // an answer to an older request (a restarted actor)
    ++stale_;
    return;
  }
  if (r.request_index >= request_.size())
    throw std::runtime_error(fmt::format("actor {} sent a GA fitness record for row {}, the request has {} rows", actor,
                                         r.request_index, request_.size()));
  const Genome& g = request_[r.request_index];
  if (r.genome_hash != ga_genome_hash(g.data(), g.size()))
    throw std::runtime_error(
        fmt::format("actor {} sent a GA fitness record for row {} whose genome hash does not match the request", actor,
                    r.request_index));
  if (answered_[r.request_index]) {  // a repeat (a restarted actor scored its share again)
    ++stale_;
    return;
  }
  answered_[r.request_index] = 1;
  --unanswered_;
  ++executed_;
  ++executed_total_;
  const Fitness f{r.reward, r.correct != 0};
  cache_.insert(g, f);
  for (std::size_t m : rows_[r.request_index]) {
    fitness_[m] = f;
    known_[m] = 1;
  }
}

bool GaAlgorithm::ready() const {
  if (finished()) return false;
  return o_.evaluator == Evaluator::kLearner || unanswered_ == 0;
}

// Scores the request in this process: row j goes to scorer j * threads / rows (contiguous
// chunks), so the results never depend on the thread count.
void GaAlgorithm::score_in_learner() {
  const std::size_t n = request_.size();
  if (n == 0) return;
  std::vector<Fitness> out(n);
  const std::size_t chunks = std::min<std::size_t>(scorers_.size(), n);
  auto run_chunk = [&](std::size_t c) {
    for (std::size_t j = c * n / chunks; j < (c + 1) * n / chunks; ++j) {
      const bf::ScoreResult s = scorers_[c].score(request_[j]);
      out[j] = Fitness{s.total_reward, s.correct};
    }
  };
  if (chunks == 1) {
    run_chunk(0);
  } else {
    threads_->arena.execute([&] { tbb::parallel_for(std::size_t{0}, chunks, run_chunk); });
  }
  for (std::size_t j = 0; j < n; ++j) {
    cache_.insert(request_[j], out[j]);
    for (std::size_t m : rows_[j]) {
      fitness_[m] = out[j];
      known_[m] = 1;
    }
  }
  executed_ += n;
  executed_total_ += n;
  unanswered_ = 0;
}

// Every individual is scored: the generation counts, the hall of fame takes its best, and
// every check_every generations (and at the budget) the best is checked for correctness.
void GaAlgorithm::complete_generation() {
  ++generation_;
  double sum = 0;
  for (std::size_t m = 0; m < population_.size(); ++m) {
    hof_.offer(population_[m], fitness_[m]);
    sum += fitness_[m].reward;
  }
  mean_reward_ = sum / static_cast<double>(population_.size());
  note_best();
  const bool at_budget = o_.max_npe > 0 && budget_used() >= o_.max_npe;
  if (!found_ && (generation_ % o_.check_every == 0 || at_budget) && hof_.best().fitness.correct) {
    found_ = true;
    code_solution_ = hof_.best().genome;
    solution_npe_ = budget_used();
  }
}

void GaAlgorithm::note_best() {
  const HallOfFame::Entry& b = hof_.best();
  if (std::round(b.fitness.reward * kBestRewardRounding) <= std::round(best_reward_ * kBestRewardRounding)) return;
  best_reward_ = b.fitness.reward;
  best_code_ = b.genome;
  runfiles::append_solution(fs::path(o_.run_dir) / runfiles::kSolutionsFileName, best_code_, best_reward_,
                            static_cast<std::int64_t>(budget_used()));
}

// Selection, crossover, mutation, elitism (the order of the contract).
void GaAlgorithm::next_generation() {
  const std::size_t children = o_.population - hof_.entries().size();
  std::vector<double> rewards(population_.size());
  for (std::size_t m = 0; m < population_.size(); ++m) rewards[m] = fitness_[m].reward;
  const std::vector<std::size_t> parents = roulette_select(rewards, children, rng_);
  std::vector<Genome> next;
  next.reserve(o_.population);
  for (std::size_t p : parents) next.push_back(population_[p]);
  vary(next, o_.crossover_rate, o_.mutation_rate, rng_);
  fitness_.assign(o_.population, Fitness{});
  known_.assign(o_.population, 0);
  for (const HallOfFame::Entry& e : hof_.entries()) {
    fitness_[next.size()] = e.fitness;
    known_[next.size()] = 1;
    next.push_back(e.genome);
  }
  population_ = std::move(next);
  build_request();
}

bool GaAlgorithm::step() {
  if (o_.evaluator == Evaluator::kLearner) score_in_learner();
  if (unanswered_ != 0) return false;
  complete_generation();
  if (finished()) return false;  // the driver stops before the next step
  next_generation();
  return true;
}

void GaAlgorithm::write_blob(std::byte* dst) const {
  write_blob_header(dst, layout_);
  write_ga_request(reinterpret_cast<float*>(dst + sizeof(BlobHeader)), layout_,
                   o_.evaluator == Evaluator::kActors ? request_ : std::vector<Genome>{});
}

void GaAlgorithm::save(CheckpointWriter& out) const {
  ByteWriter& w = out.section(kGaSection);
  w.put(kGaStateVersion);
  w.put(o_.population);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(o_.genome_length));
  rng_.save(w);
  w.put(generation_);
  for (std::size_t m = 0; m < population_.size(); ++m) {
    w.put_string(population_[m]);
    w.put(fitness_[m].reward);
    w.put<std::uint8_t>(static_cast<std::uint8_t>((known_[m] ? 1 : 0) | (fitness_[m].correct ? 2 : 0)));
  }
  hof_.save(w);
  w.put<std::uint8_t>(found_ ? 1 : 0);
  w.put_string(code_solution_);
  w.put(solution_npe_);
  w.put(best_reward_);
  w.put_string(best_code_);
  w.put(mean_reward_);
  w.put(executed_);
  w.put(cache_hits_);
}

void GaAlgorithm::load(CheckpointReader& in) {
  ByteReader& b = in.section(kGaSection);
  b.expect(kGaStateVersion, "ga state version");
  b.expect(o_.population, "population");
  b.expect(static_cast<std::uint32_t>(o_.genome_length), "genome length (timestep_limit)");
  rng_.load(b);
  generation_ = b.get<std::uint64_t>();
  for (std::size_t m = 0; m < population_.size(); ++m) {
    population_[m] = b.get_string(kMaxCodeBytes);
    if (population_[m].size() != static_cast<std::size_t>(o_.genome_length))
      b.fail(fmt::format("genome {} has {} genes, expected {}", m, population_[m].size(), o_.genome_length));
    for (char c : population_[m])
      if (ga_gene_index(c) < 0) b.fail(fmt::format("genome {} holds '{}', not a BF op", m, c));
    fitness_[m].reward = b.get<double>();
    const auto flags = b.get<std::uint8_t>();
    known_[m] = flags & 1;
    fitness_[m].correct = (flags & 2) != 0;
  }
  hof_.load(b, static_cast<std::size_t>(o_.genome_length));
  found_ = b.get<std::uint8_t>() != 0;
  code_solution_ = b.get_string(kMaxCodeBytes);
  solution_npe_ = b.get<std::uint64_t>();
  best_reward_ = b.get<double>();
  best_code_ = b.get_string(kMaxCodeBytes);
  mean_reward_ = b.get<double>();
  executed_ = b.get<std::uint64_t>();
  cache_hits_ = b.get<std::uint64_t>();
  b.expect_end();
  build_request();
}

std::vector<std::string> GaAlgorithm::metric_columns() const {
  return {"rep",      "npe",        "npe_per_s", "generation", "best_reward", "mean_reward",
          "executed", "cache_hits", "lag_p50",   "lag_max",    "stale"};
}

std::vector<double> GaAlgorithm::metric_row(const learner::DriverTick& t) const {
  return {static_cast<double>(t.rep),
          static_cast<double>(budget_used()),
          t.budget_per_s,
          static_cast<double>(generation_),
          best_reward_,
          mean_reward_,
          static_cast<double>(executed_),
          static_cast<double>(cache_hits_),
          static_cast<double>(t.lag_p50),
          static_cast<double>(t.lag_max),
          static_cast<double>(stale_)};
}

std::vector<std::pair<std::string, std::string>> GaAlgorithm::progress_fields(const learner::DriverTick& t) const {
  return {{"rep", fmt::format("{}/{}", t.rep + 1, t.repetitions)}, {"NPE", fmt::format("{}", budget_used())},
          {"NPE/s", fmt::format("{:.0f}", t.budget_per_s)},        {"gen", fmt::format("{}", generation_)},
          {"best", fmt::format("{:.4f}", best_reward_)},           {"executed", fmt::format("{}", executed_)}};
}

nlohmann::json GaAlgorithm::result() const {
  return {{"found_solution", found_},          {"code_solution", code_solution_},
          {"solution_npe", solution_npe_},     {"best_reward", best_reward_},
          {"best_code", best_code_},           {"num_batches", generation_},
          {"batch_size", o_.population},       {"mode", "ga"},
          {"generations", generation_},        {"executed", executed_},
          {"cache_hits", cache_hits_},         {"crossover_rate", o_.crossover_rate},
          {"mutation_rate", o_.mutation_rate}, {"evaluator", evaluator_name(o_.evaluator)}};
}

std::string GaAlgorithm::describe_result() const {
  return fmt::format("{} at NPE {} after {} generations; best reward {:.4f}; {} programs executed",
                     found_ ? "solved" : "not solved", budget_used(), generation_, best_reward_, executed_);
}

GaTrainSummary run_ga_training(const GaOptions& o) {
  o.validate();
  learner::DriverOptions d(o);
  d.actors = o.actors;
  d.max_budget = o.max_npe;
  d.seed = o.seed;
  d.identity = {
      {"task", o.task}, {"max_npe", o.max_npe}, {"population", o.population}, {"timestep_limit", o.genome_length}};
  learner::set_torch_threads();  // the GA trains no network: this process keeps to one thread
  GaAlgorithm algo(o);
  GaTrainSummary s;
  s.driver = learner::run_training(algo, d);
  s.executed = algo.executed_total();
  s.executed_per_s = s.driver.seconds > 0 ? static_cast<double>(s.executed) / s.driver.seconds : 0;
  return s;
}

}  // namespace ringrl::ga
