#include "learner/ga/ga_ops.h"

#include <algorithm>

#include "common/py_heapq.h"
#include "common/seeds.h"

namespace ringrl::ga {
namespace {

constexpr double kTwoPow53 = 9007199254740992.0;  // uniform(): 53 random bits / 2^53
constexpr std::uint64_t kMaxGenomeBytes = std::uint64_t{1} << 20;

std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }

}  // namespace

GaRng::GaRng(std::uint64_t seed) {
  for (int i = 0; i < 4; ++i) s_[i] = mix_seed(seed, static_cast<std::uint64_t>(i));
}

std::uint64_t GaRng::next() noexcept {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double GaRng::uniform() noexcept { return static_cast<double>(next() >> 11) / kTwoPow53; }

std::uint64_t GaRng::below(std::uint64_t n) noexcept {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // accept [0, limit): a multiple of n
  std::uint64_t x = next();
  while (x >= limit) x = next();
  return x % n;
}

void GaRng::save(ByteWriter& w) const {
  for (std::uint64_t v : s_) w.put(v);
}

void GaRng::load(ByteReader& r) {
  for (std::uint64_t& v : s_) v = r.get<std::uint64_t>();
  if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) r.fail("GA generator state is all zero");
}

bool GaRng::operator==(const GaRng& o) const noexcept { return std::equal(s_, s_ + 4, o.s_); }

Genome random_genome(int length, GaRng& rng) {
  Genome g(static_cast<std::size_t>(length), '>');
  for (char& c : g) c = kGaGeneChars[rng.below(kGaNumGenes)];
  return g;
}

namespace {

/// ga_lib's mutate_single: x < 0.25 is an insertion unless pos is an end, where it falls
/// through to the deletion branch (x < 0.5); then rotation (x < 0.75), else replacement.
constexpr double kInsertionBelow = 0.25;
constexpr double kDeletionBelow = 0.50;
constexpr double kRotationBelow = 0.75;
constexpr double kFirstBranchBelow = 0.50;  // random() < 0.5 picks each kind's first branch

bool at_an_end(std::size_t pos, std::size_t n) { return pos == 0 || pos + 1 == n; }

}  // namespace

void apply_mutation(Genome& g, std::size_t pos, MutationKind kind, bool up, char gene) {
  const std::size_t n = g.size();
  if (kind == MutationKind::kInsertion && at_an_end(pos, n)) kind = MutationKind::kDeletion;
  const auto at = [&](std::size_t i) { return g.begin() + static_cast<std::ptrdiff_t>(i); };
  switch (kind) {
    case MutationKind::kInsertion:
      if (up) {  // g[0,pos) c g[pos,n-1): c at pos
        std::move_backward(at(pos), g.end() - 1, g.end());
        g[pos] = gene;
      } else {  // g[1,pos) c g[pos,n): c at pos-1, g[pos] stays
        std::move(at(1), at(pos), g.begin());
        g[pos - 1] = gene;
      }
      break;
    case MutationKind::kDeletion:
      if (up) {  // c g[0,pos) g[pos+1,n)
        std::move_backward(g.begin(), at(pos), at(pos + 1));
        g[0] = gene;
      } else {  // g[0,pos) g[pos+1,n) c
        std::move(at(pos + 1), g.end(), at(pos));
        g[n - 1] = gene;
      }
      break;
    case MutationKind::kRotation:
      if (up) {
        std::rotate(g.begin(), g.end() - 1, g.end());  // g[n-1] g[0,n-1)
      } else {
        std::rotate(g.begin(), g.begin() + 1, g.end());  // g[1,n) g[0]
      }
      break;
    case MutationKind::kReplacement:
      g[pos] = gene;
      break;
  }
}

int mutate(Genome& g, double rate, GaRng& rng) {
  if (g.size() <= 1) return 0;  // ga_lib returns such a genome untouched, drawing nothing
  int mutated = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (rng.uniform() >= rate) continue;
    const char gene = kGaGeneChars[rng.below(kGaNumGenes)];
    const double x = rng.uniform();
    if (x < kInsertionBelow && !at_an_end(i, g.size())) {
      apply_mutation(g, i, MutationKind::kInsertion, /*up=*/rng.uniform() < kFirstBranchBelow, gene);
    } else if (x < kDeletionBelow) {
      apply_mutation(g, i, MutationKind::kDeletion, /*up=*/!(rng.uniform() < kFirstBranchBelow), gene);
    } else if (x < kRotationBelow) {
      apply_mutation(g, i, MutationKind::kRotation, /*up=*/!(rng.uniform() < kFirstBranchBelow), gene);
    } else {
      apply_mutation(g, i, MutationKind::kReplacement, /*up=*/false, gene);
    }
    ++mutated;
  }
  return mutated;
}

void crossover_at(Genome& a, Genome& b, std::size_t point) {
  std::swap_ranges(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(point), b.begin());
}

bool maybe_crossover(Genome& a, Genome& b, double rate, GaRng& rng) {
  if (rng.uniform() >= rate || a.empty()) return false;
  crossover_at(a, b, rng.below(a.size()));
  return true;
}

void vary(std::vector<Genome>& offspring, double crossover_rate, double mutation_rate, GaRng& rng) {
  for (std::size_t i = 0; i + 1 < offspring.size(); i += 2) {
    maybe_crossover(offspring[i], offspring[i + 1], crossover_rate, rng);
    mutate(offspring[i], mutation_rate, rng);
    mutate(offspring[i + 1], mutation_rate, rng);
  }
}

double roulette_weight(double reward) noexcept { return reward > 0 ? reward + kRouletteFloor : kRouletteFloor; }

std::vector<std::size_t> roulette_select(const std::vector<double>& rewards, std::size_t k, GaRng& rng) {
  std::vector<double> cumulative(rewards.size());
  double total = 0;
  for (std::size_t m = 0; m < rewards.size(); ++m) cumulative[m] = total += roulette_weight(rewards[m]);
  std::vector<std::size_t> picked(k);
  for (std::size_t j = 0; j < k; ++j) {
    const double u = rng.uniform() * total;
    const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
    picked[j] = std::min(static_cast<std::size_t>(it - cumulative.begin()), rewards.size() - 1);
  }
  return picked;
}

namespace {

/// heapq's order of the hall of fame's entries: the reward alone.
bool reward_less(const HallOfFame::Entry& a, const HallOfFame::Entry& b) {
  return a.fitness.reward < b.fitness.reward;
}

}  // namespace

bool HallOfFame::offer(const Genome& genome, const Fitness& fitness) {
  if (capacity_ == 0) return false;
  for (const Entry& e : heap_)
    if (e.genome == genome) return false;
  Entry entry{genome, fitness};
  if (heap_.size() >= capacity_) {
    if (!py_heappushpop(heap_, entry, reward_less)) return false;
  } else {
    py_heappush(heap_, std::move(entry), reward_less);
  }
  sort_entries();
  return true;
}

void HallOfFame::sort_entries() {
  entries_.clear();
  for (std::size_t i : py_nlargest_order(heap_, reward_less)) entries_.push_back(heap_[i]);
}

void HallOfFame::clear() noexcept {
  heap_.clear();
  entries_.clear();
}

void HallOfFame::save(ByteWriter& w) const {
  w.put<std::uint64_t>(heap_.size());
  for (const Entry& e : heap_) {
    w.put_string(e.genome);
    w.put(e.fitness.reward);
    w.put<std::uint8_t>(e.fitness.correct ? 1 : 0);
  }
}

void HallOfFame::load(ByteReader& r, std::size_t genome_length) {
  const auto n = r.get<std::uint64_t>();
  if (n > capacity_) r.fail("hall of fame of " + std::to_string(n) + " entries, at most " + std::to_string(capacity_));
  std::vector<Entry> heap;
  for (std::uint64_t i = 0; i < n; ++i) {
    Entry e;
    e.genome = r.get_string(kMaxGenomeBytes);
    if (e.genome.size() != genome_length)
      r.fail("hall of fame genome of " + std::to_string(e.genome.size()) + " genes, expected " +
             std::to_string(genome_length));
    e.fitness.reward = r.get<double>();
    e.fitness.correct = r.get<std::uint8_t>() != 0;
    for (const Entry& h : heap)
      if (h.genome == e.genome) r.fail("hall of fame repeats a genome (entry " + std::to_string(i) + ")");
    py_heappush(heap, std::move(e), reward_less);  // a saved heap array comes back as it was
  }
  heap_ = std::move(heap);
  sort_entries();
}

const Fitness* FitnessCache::find(const Genome& genome) {
  if (capacity_ == 0) return nullptr;
  if (auto it = young_.find(genome); it != young_.end()) {
    ++hits_;
    return &it->second;
  }
  if (auto it = old_.find(genome); it != old_.end()) {
    ++hits_;
    const Fitness f = it->second;
    insert(genome, f);
    return &young_.find(genome)->second;
  }
  return nullptr;
}

void FitnessCache::insert(const Genome& genome, const Fitness& fitness) {
  if (capacity_ == 0) return;
  if (young_.size() >= std::max<std::size_t>(1, capacity_ / 2)) {
    old_ = std::move(young_);
    young_.clear();
  }
  young_[genome] = fitness;
}

void FitnessCache::clear() noexcept {
  young_.clear();
  old_.clear();
  hits_ = 0;
}

}  // namespace ringrl::ga
