// Tests of envs/bf/py_random.h against values produced by CPython 2.7 and numpy (spec §4.3).
#include "envs/bf/py_random.h"

#include <gtest/gtest.h>

#include <vector>

#include "envs/bf/tasks.h"

namespace ringrl::bf {
namespace {

TEST(BfPyRandom, SeedKeyIsTheMagnitudeIn32BitWords) {
  EXPECT_EQ(Py2Random::seed_key(kTaskSeed), (std::vector<std::uint32_t>{3097539410U, 1594U}));
  EXPECT_EQ(Py2Random::seed_key(-kTaskSeed), Py2Random::seed_key(kTaskSeed));
  EXPECT_EQ(Py2Random::seed_key(0), std::vector<std::uint32_t>{0});
}

TEST(BfPyRandom, InitByArrayStream) {
  Mt19937 mt;
  mt.init_by_array(Py2Random::seed_key(kTaskSeed));
  EXPECT_EQ(mt.next_u32(), 2896193079U);
  EXPECT_EQ(mt.next_u32(), 2462589050U);
  EXPECT_EQ(mt.next_u32(), 831883580U);
}

TEST(BfPyRandom, RandomFloats) {
  Py2Random rng(kTaskSeed);
  EXPECT_EQ(rng.random(), 0.6743224976462586);
  EXPECT_EQ(rng.random(), 0.19368798867089754);
  EXPECT_EQ(rng.random(), 0.6859650134513176);
}

TEST(BfPyRandom, RandrangeIsPython2) {
  Py2Random rng(kTaskSeed);
  std::vector<std::int64_t> draws;
  for (int k = 0; k < 5; ++k) draws.push_back(rng.randrange(1, 7));
  EXPECT_EQ(draws, (std::vector<std::int64_t>{5, 2, 5, 6, 3}));  // Python 3: 6, 5, 2, 6, 5
  Py2Random again(kTaskSeed);
  EXPECT_EQ(again.randrange(1), 0);  // still consumes a draw
  EXPECT_EQ(again.randrange(1, 7), 2);
}

TEST(BfPyRandom, ShuffleIsPython2) {
  Py2Random rng(kTaskSeed);
  std::vector<int> x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  rng.shuffle(x);
  EXPECT_EQ(x, (std::vector<int>{4, 3, 8, 7, 0, 2, 9, 5, 1, 6}));
}

TEST(BfPyRandom, NumpyLegacyRandomState) {
  NumpyRandomState a(kEchoNumpySeed);
  EXPECT_EQ(a.next_u32(), 2657703298U);
  NumpyRandomState b(kEchoNumpySeed);
  std::vector<std::int64_t> draws;
  for (int k = 0; k < 4; ++k) draws.push_back(b.randint(1, 7));
  EXPECT_EQ(draws, (std::vector<std::int64_t>{3, 5, 4, 2}));
  NumpyRandomState c(7);
  draws.clear();
  for (int k = 0; k < 5; ++k) draws.push_back(c.randint(0, 1000));
  EXPECT_EQ(draws, (std::vector<std::int64_t>{175, 196, 537, 502, 579}));
  NumpyRandomState d(42);
  EXPECT_EQ(d.choice_without_replacement(6, 4), (std::vector<std::int64_t>{0, 1, 5, 2}));
  NumpyRandomState e(3);
  EXPECT_EQ(e.randint(5, 6), 5);  // a single value draws nothing
  EXPECT_EQ(e.next_u32(), NumpyRandomState(3).next_u32());
}

TEST(BfPyRandom, Python2SetOrder) {
  using V = std::vector<std::int64_t>;
  EXPECT_EQ(py2_set_order(V{1, 2, 4, 8}), (V{8, 1, 2, 4}));
  EXPECT_EQ(py2_set_order(V{1, 3, 7, 9}), (V{1, 3, 9, 7}));  // 9 probes past slots 1 and 7
  EXPECT_EQ(py2_set_order(V{1, 2, 3, 4, 5, 6, 8, 10, 12, 15}),
            (V{1, 2, 3, 4, 5, 6, 8, 10, 12, 15}));  // grown to 32 slots
  EXPECT_EQ(py2_set_order(V{}), V{});
  EXPECT_EQ(py2_set_order(V{5}), V{5});
}

}  // namespace
}  // namespace ringrl::bf
