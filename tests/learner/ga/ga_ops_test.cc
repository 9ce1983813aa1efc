// The GA's operators (learner/ga/ga_ops.h), held to ga_lib's: each mutation kind, the draws of
// mutate_single, crossover points, mutate_and_crossover, roulette probabilities, the hall of
// fame (a heapq queue) and the reward cache.
#include "learner/ga/ga_ops.h"

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

using namespace ringrl::ga;

bool only_ops(const Genome& g) { return g.find_first_not_of(ringrl::kGaGeneChars) == std::string::npos; }

TEST(GaMutation, EachKindDoesWhatItSaysAndKeepsTheLength) {
  const Genome g = "><+-[].,";  // 8 distinct genes, so every move is visible
  struct Case {
    MutationKind kind;
    bool up;
    std::size_t pos;
    const char* want;
  };
  const Case cases[] = {
      {MutationKind::kInsertion, true, 3, "><+X-[]."},    // room made to the right, last falls off
      {MutationKind::kInsertion, false, 3, "<+X-[].,"},   // g[1,3) X g[3,8): X before g[3], first falls off
      {MutationKind::kInsertion, false, 1, "X<+-[].,"},   // g[1,1) X g[1,8)
      {MutationKind::kInsertion, true, 6, "><+-[]X."},    // g[0,6) X g[6,7)
      {MutationKind::kInsertion, true, 0, "X<+-[].,"},    // at the front: the deletion (up)
      {MutationKind::kInsertion, false, 0, "<+-[].,X"},   // at the front: the deletion (down)
      {MutationKind::kInsertion, false, 7, "><+-[].X"},   // at the back: the deletion (down)
      {MutationKind::kInsertion, true, 7, "X><+-[]."},    // at the back: the deletion (up)
      {MutationKind::kDeletion, false, 3, "><+[].,X"},    // g[3] out, tail moves left, X appended
      {MutationKind::kDeletion, true, 3, "X><+[].,"},     // g[3] out, head moves right, X prepended
      {MutationKind::kDeletion, false, 7, "><+-[].X"},    // the last gene out
      {MutationKind::kRotation, false, 5, "<+-[].,>"},    // left by one; position unused
      {MutationKind::kRotation, true, 5, ",><+-[]."},     // right by one
      {MutationKind::kReplacement, true, 6, "><+-[]X,"},  // one gene replaced
  };
  for (const Case& c : cases) {
    Genome h = g;
    apply_mutation(h, c.pos, c.kind, c.up, 'X');
    EXPECT_EQ(h, c.want) << "kind " << static_cast<int>(c.kind) << " up " << c.up << " pos " << c.pos;
    EXPECT_EQ(h.size(), g.size());
  }
  Genome one = "+";  // length 1: every kind stays length 1
  for (int k = 0; k < 4; ++k)
    for (bool up : {false, true}) {
      Genome h = one;
      apply_mutation(h, 0, static_cast<MutationKind>(k), up, '-');
      EXPECT_EQ(h.size(), 1u);
    }
}

// ga_lib's mutate_single restated with its own list slicing: the draws (rate, gene, kind x,
// then the direction except for a replacement), the kind thresholds, insertion at an end
// falling through to deletion, and which branch "random() < 0.5" picks.
Genome ga_lib_mutate(Genome cs, double rate, GaRng& rng) {
  if (cs.size() <= 1) return cs;
  const std::size_t n = cs.size();
  for (std::size_t pos = 0; pos < n; ++pos) {
    if (!(rng.uniform() < rate)) continue;
    const std::string c(1, ringrl::kGaGeneChars[rng.below(ringrl::kGaNumGenes)]);
    const double x = rng.uniform();
    if (x < 0.25 && pos != 0 && pos != n - 1) {
      if (rng.uniform() < 0.5) {
        cs = cs.substr(0, pos) + c + cs.substr(pos, n - 1 - pos);  // cs[:pos] + [c] + cs[pos:-1]
      } else {
        cs = cs.substr(1, pos - 1) + c + cs.substr(pos);  // cs[1:pos] + [c] + cs[pos:]
      }
    } else if (x < 0.5) {
      if (rng.uniform() < 0.5) {
        cs = cs.substr(0, pos) + cs.substr(pos + 1) + c;  // cs[:pos] + cs[pos+1:] + [c]
      } else {
        cs = c + cs.substr(0, pos) + cs.substr(pos + 1);  // [c] + cs[:pos] + cs[pos+1:]
      }
    } else if (x < 0.75) {
      if (rng.uniform() < 0.5) {
        cs = cs.substr(1) + cs[0];  // cs[1:] + [cs[0]]
      } else {
        cs = cs.back() + cs.substr(0, n - 1);  // [cs[-1]] + cs[:-1]
      }
    } else {
      cs = cs.substr(0, pos) + c + cs.substr(pos + 1);  // cs[:pos] + [c] + cs[pos+1:]
    }
  }
  return cs;
}

TEST(GaMutation, MutateIsGaLibsMutateSingleDrawForDraw) {
  for (const double rate : {0.15, 0.5, 1.0}) {
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
      GaRng rng(seed), twin(seed);
      for (const int length : {1, 2, 3, 8, 100}) {
        Genome g = random_genome(length, rng);
        const Genome want = ga_lib_mutate(random_genome(length, twin), rate, twin);
        mutate(g, rate, rng);
        ASSERT_EQ(g, want) << "rate " << rate << " seed " << seed << " length " << length;
        ASSERT_TRUE(rng == twin) << "the same number of draws";
      }
    }
  }
}

TEST(GaMutation, RateZeroChangesNothingRateOneMutatesEveryPosition) {
  GaRng rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    Genome g = random_genome(100, rng);
    const Genome before = g;
    EXPECT_EQ(mutate(g, 0.0, rng), 0);
    EXPECT_EQ(g, before);
    EXPECT_EQ(mutate(g, 1.0, rng), 100);
    EXPECT_EQ(g.size(), 100u);
    EXPECT_TRUE(only_ops(g));
  }
}

TEST(GaMutation, PerGeneRateMatchesItsProbability) {
  GaRng rng(11);
  constexpr int kGenomes = 2000, kLength = 100;
  constexpr double kRate = 0.15;
  long total = 0;
  for (int i = 0; i < kGenomes; ++i) {
    Genome g = random_genome(kLength, rng);
    total += mutate(g, kRate, rng);
  }
  const double n = double{kGenomes} * kLength;
  const double sigma = std::sqrt(n * kRate * (1 - kRate));
  EXPECT_NEAR(static_cast<double>(total), n * kRate, 5 * sigma);
}

TEST(GaCrossover, ExchangesTheHeadsBeforeThePointAsGaLib) {
  // ga_lib's crossover(p1, p2) of equal lengths returns (p2[:pos] + p1[pos:], p1[:pos] + p2[pos:]).
  Genome a = "++++++", b = "------";
  crossover_at(a, b, 2);
  EXPECT_EQ(a, "--++++");
  EXPECT_EQ(b, "++----");
  // Random points lie in [0, n) (randrange(len)): p = 0 leaves both parents as they were.
  GaRng rng(3);
  std::set<std::size_t> points;
  for (int i = 0; i < 2000; ++i) {
    Genome x = "++++++", y = "------";
    ASSERT_TRUE(maybe_crossover(x, y, 1.0, rng));
    const std::size_t p = x.find('+');
    ASSERT_NE(p, std::string::npos) << "the last gene always stays";
    EXPECT_EQ(x, std::string(p, '-') + std::string(6 - p, '+'));
    EXPECT_EQ(y, std::string(p, '+') + std::string(6 - p, '-'));
    points.insert(p);
  }
  EXPECT_EQ(points, (std::set<std::size_t>{0, 1, 2, 3, 4, 5}));
  Genome x = "++", y = "--";
  EXPECT_FALSE(maybe_crossover(x, y, 0.0, rng));
  EXPECT_EQ(x, "++");
}

TEST(GaVary, PairsAreCrossedThenMutatedAndAnOddLastGenomeIsLeftAlone) {
  // ga_lib's mutate_and_crossover: per pair, the crossover draw (and point), then mutate_single
  // of each child; children[-1] = population[-1] when the count is odd.
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    GaRng rng(seed), twin(seed);
    std::vector<Genome> pop;
    for (int m = 0; m < 5; ++m) pop.push_back(random_genome(30, rng));
    for (int m = 0; m < 5; ++m) random_genome(30, twin);
    std::vector<Genome> want = pop;
    for (std::size_t i = 0; i + 1 < want.size(); i += 2) {
      if (twin.uniform() < 0.9) {
        const std::size_t p = twin.below(30);
        const Genome c1 = want[i + 1].substr(0, p) + want[i].substr(p);
        const Genome c2 = want[i].substr(0, p) + want[i + 1].substr(p);
        want[i] = c1;
        want[i + 1] = c2;
      }
      want[i] = ga_lib_mutate(want[i], 0.2, twin);
      want[i + 1] = ga_lib_mutate(want[i + 1], 0.2, twin);
    }
    const Genome last = pop.back();
    vary(pop, 0.9, 0.2, rng);
    EXPECT_EQ(pop, want) << "seed " << seed;
    EXPECT_EQ(pop.back(), last);
    EXPECT_TRUE(rng == twin);
  }
}

TEST(GaRoulette, WeightsAndFrequenciesMatchTheMappedFitness) {
  EXPECT_DOUBLE_EQ(roulette_weight(-0.5), kRouletteFloor);
  EXPECT_DOUBLE_EQ(roulette_weight(0.0), kRouletteFloor);
  EXPECT_DOUBLE_EQ(roulette_weight(0.45), 0.5);
  const std::vector<double> rewards = {-1.0, 0.0, 0.45, 0.95};  // weights 0.05 0.05 0.5 1.0
  const double total = 1.6;
  GaRng rng(5);
  constexpr std::size_t kDraws = 200000;
  const std::vector<std::size_t> picks = roulette_select(rewards, kDraws, rng);
  ASSERT_EQ(picks.size(), kDraws);
  std::vector<double> count(rewards.size(), 0);
  for (std::size_t p : picks) {
    ASSERT_LT(p, rewards.size());
    count[p] += 1;
  }
  for (std::size_t m = 0; m < rewards.size(); ++m) {
    const double p = roulette_weight(rewards[m]) / total;
    const double sigma = std::sqrt(kDraws * p * (1 - p));
    EXPECT_NEAR(count[m], kDraws * p, 5 * sigma) << "individual " << m;
  }
}

TEST(GaHallOfFame, KeepsTheBestDistinctGenomesBestFirst) {
  HallOfFame hof(2);
  EXPECT_TRUE(hof.offer("a", {0.1, false}));
  EXPECT_FALSE(hof.offer("a", {0.9, false})) << "a genome already in the hall never enters twice";
  EXPECT_TRUE(hof.offer("b", {0.5, false}));
  ASSERT_EQ(hof.entries().size(), 2u);
  EXPECT_EQ(hof.best().genome, "b");
  EXPECT_FALSE(hof.offer("c", {0.1, false})) << "a tie with the worst does not displace it";
  EXPECT_TRUE(hof.offer("d", {0.3, false}));
  EXPECT_EQ(hof.entries()[0].genome, "b");
  EXPECT_EQ(hof.entries()[1].genome, "d");
  EXPECT_TRUE(hof.offer("e", {0.5, true}));
  EXPECT_EQ(hof.entries()[0].genome, "b") << "the older of equal rewards stays first";
  EXPECT_EQ(hof.entries()[1].genome, "e");
}

TEST(GaHallOfFame, OfTiedWorstEntriesTheHeapRootLeaves) {
  // MaxUniquePriorityQueue(2) ordered by reward alone: a and b tie, a is the heap's root, and a
  // better genome displaces it (keeping the older entry first would drop b instead).
  HallOfFame hof(2);
  hof.offer("a", {0.5, false});
  hof.offer("b", {0.5, false});
  EXPECT_TRUE(hof.offer("c", {0.7, false}));
  ASSERT_EQ(hof.entries().size(), 2u);
  EXPECT_EQ(hof.entries()[0].genome, "c");
  EXPECT_EQ(hof.entries()[1].genome, "b");
  // Again with the tie at the top: x is the root and leaves first, y stays.
  HallOfFame top(2);
  top.offer("x", {0.7, false});
  top.offer("y", {0.7, false});
  EXPECT_EQ(top.best().genome, "x") << "get_max: the first of the heap array";
  EXPECT_TRUE(top.offer("z", {0.9, false}));
  EXPECT_EQ(top.entries()[0].genome, "z");
  EXPECT_EQ(top.entries()[1].genome, "y");
}

TEST(GaCache, HitsSkipWorkAndTheSizeStaysBounded) {
  FitnessCache cache(4);
  EXPECT_EQ(cache.find("a"), nullptr);
  cache.insert("a", {0.25, false});
  ASSERT_NE(cache.find("a"), nullptr);
  EXPECT_DOUBLE_EQ(cache.find("a")->reward, 0.25);
  EXPECT_EQ(cache.hits(), 2u);
  for (const char* g : {"b", "c", "d", "e", "f", "g"}) cache.insert(g, {0.0, false});
  EXPECT_LE(cache.size(), 4u);
  ASSERT_NE(cache.find("g"), nullptr) << "the newest entries stay";
  FitnessCache off(0);
  off.insert("a", {1.0, true});
  EXPECT_EQ(off.find("a"), nullptr);
}

TEST(GaRng, SameSeedSameStreamAndBelowStaysInRange) {
  GaRng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next();
    EXPECT_EQ(x, b.next());
    (void)c.next();
  }
  EXPECT_FALSE(a == c);
  for (int i = 0; i < 10000; ++i) {
    EXPECT_LT(a.below(7), 7u);
    const double u = a.uniform();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

}  // namespace
