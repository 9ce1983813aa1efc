// The GA's operators (learner/ga/ga_ops.h): each mutation kind, crossover points, roulette
// probabilities, the hall of fame and the reward cache.
#include "learner/ga/ga_ops.h"

#include <cmath>
#include <set>
#include <string>

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
      {MutationKind::kInsertion, false, 3, "<+-X[].,"},   // room made to the left, first falls off
      {MutationKind::kInsertion, true, 0, "X><+-[]."},    // at the front
      {MutationKind::kInsertion, false, 7, "<+-[].,X"},   // at the back
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

TEST(GaCrossover, ExchangesTheTailsFromThePoint) {
  Genome a = "++++++", b = "------";
  crossover_at(a, b, 2);
  EXPECT_EQ(a, "++----");
  EXPECT_EQ(b, "--++++");
  // Random points lie in [1, n-1]: both children always take genes from both parents.
  GaRng rng(3);
  std::set<std::size_t> points;
  for (int i = 0; i < 2000; ++i) {
    Genome x = "++++++", y = "------";
    ASSERT_TRUE(maybe_crossover(x, y, 1.0, rng));
    const std::size_t p = x.find('-');
    ASSERT_NE(p, std::string::npos);
    EXPECT_EQ(x.substr(p), std::string(6 - p, '-'));
    EXPECT_EQ(y, std::string(p, '-') + std::string(6 - p, '+'));
    points.insert(p);
  }
  EXPECT_EQ(points, (std::set<std::size_t>{1, 2, 3, 4, 5}));
  Genome x = "++", y = "--";
  EXPECT_FALSE(maybe_crossover(x, y, 0.0, rng));
  EXPECT_EQ(x, "++");
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
