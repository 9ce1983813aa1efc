#include "learner/ga/ga_ops.h"

#include <algorithm>

#include "common/seeds.h"

namespace ringrl::ga {
namespace {

constexpr double kTwoPow53 = 9007199254740992.0;  // uniform(): 53 random bits / 2^53
constexpr int kNumMutationKinds = 4;
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

void apply_mutation(Genome& g, std::size_t pos, MutationKind kind, bool up, char gene) {
  const std::size_t n = g.size();
  switch (kind) {
    case MutationKind::kInsertion:
      if (up) {  // g[0,pos) c g[pos,n-1)
        std::move_backward(g.begin() + static_cast<std::ptrdiff_t>(pos), g.end() - 1, g.end());
      } else {  // g[1,pos+1) c g[pos+1,n)
        std::move(g.begin() + 1, g.begin() + static_cast<std::ptrdiff_t>(pos) + 1, g.begin());
      }
      g[pos] = gene;
      break;
    case MutationKind::kDeletion:
      if (up) {  // c g[0,pos) g[pos+1,n)
        std::move_backward(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(pos),
                           g.begin() + static_cast<std::ptrdiff_t>(pos) + 1);
        g[0] = gene;
      } else {  // g[0,pos) g[pos+1,n) c
        std::move(g.begin() + static_cast<std::ptrdiff_t>(pos) + 1, g.end(),
                  g.begin() + static_cast<std::ptrdiff_t>(pos));
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
  int mutated = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (rng.uniform() >= rate) continue;
    const char gene = kGaGeneChars[rng.below(kGaNumGenes)];
    const auto kind = static_cast<MutationKind>(rng.below(kNumMutationKinds));
    const bool up = rng.below(2) == 1;
    apply_mutation(g, i, kind, up, gene);
    ++mutated;
  }
  return mutated;
}

void crossover_at(Genome& a, Genome& b, std::size_t point) {
  std::swap_ranges(a.begin() + static_cast<std::ptrdiff_t>(point), a.end(),
                   b.begin() + static_cast<std::ptrdiff_t>(point));
}

bool maybe_crossover(Genome& a, Genome& b, double rate, GaRng& rng) {
  if (rng.uniform() >= rate || a.size() < 2) return false;
  crossover_at(a, b, 1 + rng.below(a.size() - 1));
  return true;
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

bool HallOfFame::offer(const Genome& genome, const Fitness& fitness) {
  if (capacity_ == 0) return false;
  if (entries_.size() >= capacity_ && !(fitness.reward > entries_.back().fitness.reward)) return false;
  for (const Entry& e : entries_)
    if (e.genome == genome) return false;
  if (entries_.size() >= capacity_) entries_.pop_back();
  auto at =
      std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.fitness.reward < fitness.reward; });
  entries_.insert(at, Entry{genome, fitness});
  return true;
}

void HallOfFame::save(ByteWriter& w) const {
  w.put<std::uint64_t>(entries_.size());
  for (const Entry& e : entries_) {
    w.put_string(e.genome);
    w.put(e.fitness.reward);
    w.put<std::uint8_t>(e.fitness.correct ? 1 : 0);
  }
}

void HallOfFame::load(ByteReader& r, std::size_t genome_length) {
  const auto n = r.get<std::uint64_t>();
  if (n > capacity_) r.fail("hall of fame of " + std::to_string(n) + " entries, at most " + std::to_string(capacity_));
  entries_.clear();
  for (std::uint64_t i = 0; i < n; ++i) {
    Entry e;
    e.genome = r.get_string(kMaxGenomeBytes);
    if (e.genome.size() != genome_length)
      r.fail("hall of fame genome of " + std::to_string(e.genome.size()) + " genes, expected " +
             std::to_string(genome_length));
    e.fitness.reward = r.get<double>();
    e.fitness.correct = r.get<std::uint8_t>() != 0;
    entries_.push_back(std::move(e));
  }
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
