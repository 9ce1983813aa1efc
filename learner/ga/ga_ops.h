// The genetic algorithm's parts (spec brain_coder §6.5), each a pure function or a small value
// type, so that each is tested on its own: the generator, genomes, the four mutations, single-
// point crossover, roulette selection, the hall of fame and the reward cache. ga_algorithm.h
// puts them together into generations; docs/train.md tells the whole loop.
//
// Genomes are strings of exactly T characters over the 8 BF ops "><+-[].," (no EOS); every
// operator keeps the length. Definitions (g a genome of length n, i a position, c a new gene
// drawn uniformly from the 8 ops):
//
// * Mutation (mutate, ga_lib's mutate_single): a genome of length <= 1 is left as it is.
//   Otherwise, for i = 0, 1, ..., n-1 in order, with probability mutation_rate the genome as
//   it is now (earlier mutations included) is changed at i. The draws for one mutated position
//   are, in order: c; x uniform in [0, 1), which picks the kind: insertion if x < 0.25 and i is
//   not an end (0 < i < n-1), else deletion if x < 0.5 (so an insertion drawn at an end is a
//   deletion, as in ga_lib), rotation if x < 0.75, else replacement; then, except for a
//   replacement, u uniform, whose "u < 0.5" branch is the first one ga_lib lists (insertion:
//   up; deletion and rotation: down). The kinds (apply_mutation):
//   - insertion:   c enters and the genome makes room. Up: g[0,i) c g[i,n-1), c at index i, the
//                  genes from i on move one place right and g[n-1] falls off. Down:
//                  g[1,i) c g[i,n), c at index i-1, the genes before it move one place left
//                  and g[0] falls off; g[i] stays where it is. At an end (i = 0 or n-1)
//                  apply_mutation makes it the deletion with the same direction.
//   - deletion:    g[i] leaves and c fills the freed end. Down: g[0,i) g[i+1,n) c (the tail
//                  moves left, c appended). Up: c g[0,i) g[i+1,n) (the head moves right, c
//                  prepended).
//   - rotation:    the whole genome rotates by one place, i and c unused. Down (left):
//                  g[1,n) g[0]. Up (right): g[n-1] g[0,n-1).
//   - replacement: g[i] = c (c may equal the old gene; no direction is drawn).
// * Crossover (crossover_at, ga_lib's crossover): children of a and b at point p in [0, n)
//   are b[0,p) a[p,n) (in a's place) and a[0,p) b[p,n) (in b's): the heads are exchanged.
//   p = 0 leaves both as they were. maybe_crossover draws u, and when u < crossover_rate
//   draws p uniformly from [0, n).
// * Variation (vary, ga_lib's mutate_and_crossover): for the pairs (0, 1), (2, 3), ... in
//   order: maybe_crossover of the pair, then mutate the first, then the second. An odd last
//   genome is neither crossed nor mutated: it goes on as it was selected.
// * Roulette (roulette_select): k independent draws with replacement; individual m is picked
//   with probability w_m / sum(w), w = roulette_weight(reward) = reward + 0.05 when reward > 0,
//   else 0.05, so every individual keeps a chance.
// * Hall of fame (HallOfFame, ga_train's MaxUniquePriorityQueue(2)): at most `capacity`
//   distinct genomes with the highest rewards seen, kept as that queue's heapq array ordered
//   by reward alone (common/py_heapq.h). A candidate enters when no entry holds the same
//   genome and the hall has room (heappush) or its reward is strictly greater than the root's
//   (heappushpop: the root, one of the lowest, leaves; which one of equal lowest rewards is
//   the root is heapq's doing). entries() is iter_in_order: best first, equal rewards in heap
//   order; best() is its first, as get_max.
// * Reward cache (FitnessCache): genome -> (reward, correct) for at most `capacity` genomes,
//   in two generations of at most capacity/2 each: inserts go to the young table; a hit in the
//   old table is copied to the young one; when the young table is full it becomes the old one
//   and the previous old one is dropped. Scoring is deterministic, so the cache changes only
//   how many programs are executed, never a result. capacity 0 turns it off.
//
// Thread safety: values and pure functions; one thread per object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/byte_codec.h"
#include "common/ga/request_layout.h"

namespace ringrl::ga {

/// The roulette weight of an individual with no positive reward, and the offset added to a
/// positive one (spec §6.5).
inline constexpr double kRouletteFloor = 0.05;

using Genome = std::string;

/// xoshiro256** seeded through SplitMix64: small, fast, and its whole state (4 words) goes
/// into a checkpoint.
class GaRng {
 public:
  explicit GaRng(std::uint64_t seed = 0);
  std::uint64_t next() noexcept;
  /// Uniform in [0, 1), 53 bits.
  double uniform() noexcept;
  /// Uniform in [0, n), unbiased (rejection); n >= 1.
  std::uint64_t below(std::uint64_t n) noexcept;
  void save(ByteWriter& w) const;
  void load(ByteReader& r);
  bool operator==(const GaRng& o) const noexcept;

 private:
  std::uint64_t s_[4];
};

/// A genome of `length` genes drawn uniformly (gene by gene, first to last).
Genome random_genome(int length, GaRng& rng);

enum class MutationKind : std::uint8_t { kInsertion, kDeletion, kRotation, kReplacement };

/// Applies one mutation at position `pos` (< g.size()) with new gene `gene`, direction `up`
/// (see the file comment; an insertion at an end is the deletion). Keeps the length.
void apply_mutation(Genome& g, std::size_t pos, MutationKind kind, bool up, char gene);

/// Per-gene mutation with probability `rate` (see the file comment); returns how many
/// positions were mutated.
int mutate(Genome& g, double rate, GaRng& rng);

/// Exchanges the heads of `a` and `b` (equal lengths) before `point` (<= size).
void crossover_at(Genome& a, Genome& b, std::size_t point);

/// With probability `rate` crosses `a` and `b` at a uniform point in [0, n); returns whether
/// it drew one (p = 0 changes nothing).
bool maybe_crossover(Genome& a, Genome& b, double rate, GaRng& rng);

/// Crossover and mutation of the selected parents, in place (see the file comment).
void vary(std::vector<Genome>& offspring, double crossover_rate, double mutation_rate, GaRng& rng);

/// reward + kRouletteFloor when reward > 0, else kRouletteFloor.
double roulette_weight(double reward) noexcept;

/// `k` indices into `rewards` drawn by roulette (see the file comment). rewards non-empty.
std::vector<std::size_t> roulette_select(const std::vector<double>& rewards, std::size_t k, GaRng& rng);

/// What a genome scored.
struct Fitness {
  double reward = 0;
  bool correct = false;
};

class HallOfFame {
 public:
  struct Entry {
    Genome genome;
    Fitness fitness;
  };

  explicit HallOfFame(std::size_t capacity) : capacity_(capacity) {}
  /// Offers one scored genome (see the file comment); returns whether it entered.
  bool offer(const Genome& genome, const Fitness& fitness);
  /// Best first (equal rewards in heap order).
  const std::vector<Entry>& entries() const noexcept { return entries_; }
  bool empty() const noexcept { return entries_.empty(); }
  const Entry& best() const { return entries_.front(); }
  void clear() noexcept;
  /// Writes the heap array.
  void save(ByteWriter& w) const;
  /// Reads what save() wrote, pushing the entries in order (a heap array comes back as it
  /// was; an older best-first list becomes a valid heap); genomes must have `genome_length`
  /// genes and be distinct (CorruptData otherwise).
  void load(ByteReader& r, std::size_t genome_length);

 private:
  void sort_entries();

  std::size_t capacity_;
  std::vector<Entry> heap_;     // heapq's array, by reward
  std::vector<Entry> entries_;  // heap_ best first
};

class FitnessCache {
 public:
  explicit FitnessCache(std::size_t capacity) : capacity_(capacity) {}
  /// The cached fitness of `genome`, or nullptr; counts a hit or a miss.
  const Fitness* find(const Genome& genome);
  void insert(const Genome& genome, const Fitness& fitness);
  std::size_t size() const noexcept { return young_.size() + old_.size(); }
  std::uint64_t hits() const noexcept { return hits_; }
  void clear() noexcept;

 private:
  std::size_t capacity_;
  std::unordered_map<Genome, Fitness> young_, old_;
  std::uint64_t hits_ = 0;
};

}  // namespace ringrl::ga
