// Bit-exact emulation of the random streams the BF task generators depend on.
//
// The original test cases were drawn with CPython 2.7's `random.Random` (MT19937 seeded by
// init_by_array, float-based randrange and shuffle) and, for two tasks, numpy's legacy
// `RandomState` (init_genrand seeding, masked-rejection bounded integers). This header
// reproduces both streams draw for draw, plus the iteration order of a small CPython 2.7
// `set` of small non-negative ints (the multiply task lists divisors through a set).
// Spec: shared/spec/brain_coder.md §4.3, §4.4.
//
// Thread contract: plain value types, no shared state. One generator per task instance;
// any thread may own one. Not thread-safe for concurrent use of the same object.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace ringrl::bf {

/// The MT19937 core (32-bit Mersenne Twister) with both reference seedings.
class Mt19937 {
 public:
  static constexpr int kStateSize = 624;  // words of state (N)

  /// Reference `init_genrand(seed)`: numpy RandomState(seed) for a 32-bit seed.
  void init_genrand(std::uint32_t seed) noexcept;
  /// Reference `init_by_array(key)`: what CPython 2.7 `random.seed(int)` does.
  void init_by_array(const std::vector<std::uint32_t>& key) noexcept;
  /// Next tempered 32-bit output (genrand_int32).
  std::uint32_t next_u32() noexcept;

 private:
  void twist() noexcept;

  std::array<std::uint32_t, kStateSize> mt_{};
  int index_ = kStateSize + 1;  // > kStateSize: not seeded
};

/// CPython 2.7 `random.Random(seed)` restricted to what the task generators call.
class Py2Random {
 public:
  /// Seeds like `random.Random(seed)` with an int: key = 32-bit chunks of |seed|.
  explicit Py2Random(std::int64_t seed);

  /// `random()`: 53-bit float in [0, 1) from two 32-bit draws.
  double random() noexcept;
  /// Python 2 `randrange(n)` = int(random() * n); requires n >= 1 (one draw even for n == 1).
  std::int64_t randrange(std::int64_t n) noexcept;
  /// Python 2 `randrange(lo, hi)` = lo + int(random() * (hi - lo)); requires hi > lo.
  std::int64_t randrange(std::int64_t lo, std::int64_t hi) noexcept;
  /// Python 2 `shuffle(x)`: i from len-1 down to 1, j = int(random() * (i + 1)), swap.
  template <class T>
  void shuffle(std::vector<T>& x) noexcept {
    for (std::size_t i = x.size(); i-- > 1;) {
      const auto j = static_cast<std::size_t>(random() * static_cast<double>(i + 1));
      std::swap(x[i], x[j]);
    }
  }

  /// The init_by_array key CPython 2.7 derives from an int seed.
  static std::vector<std::uint32_t> seed_key(std::int64_t seed);

 private:
  Mt19937 mt_;
};

/// numpy's legacy `RandomState(seed)` (32-bit seed), the calls the task generators use.
class NumpyRandomState {
 public:
  explicit NumpyRandomState(std::uint32_t seed) noexcept;

  std::uint32_t next_u32() noexcept { return mt_.next_u32(); }
  /// `randint(lo, hi)` for hi > lo: masked rejection on 32-bit draws (no draw if hi-lo == 1).
  std::int64_t randint(std::int64_t lo, std::int64_t hi) noexcept;
  /// `choice(m, k, replace=False)`: first k entries of a permutation of 0..m-1.
  std::vector<std::int64_t> choice_without_replacement(std::int64_t m, std::int64_t k) noexcept;

 private:
  /// Uniform in [0, range] by masked rejection (range < 2^32).
  std::uint32_t bounded(std::uint32_t range) noexcept;

  Mt19937 mt_;
};

/// Iteration order of a CPython 2.7 `set` built by adding `keys` in order.
/// Keys must be distinct, non-negative and below 2^31 (their hash is the value itself).
/// Models the open-addressing table: 8 slots, grown x4 (rounded up to a power of two) once
/// fill * 3 >= slots * 2, probing i <- 5i + perturb + 1 with perturb >>= 5.
std::vector<std::int64_t> py2_set_order(const std::vector<std::int64_t>& keys);

}  // namespace ringrl::bf
