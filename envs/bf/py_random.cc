#include "envs/bf/py_random.h"

#include <cstdlib>

namespace ringrl::bf {
namespace {

// MT19937 parameters (Matsumoto & Nishimura reference implementation).
constexpr int kShiftPeriod = 397;                  // M
constexpr std::uint32_t kMatrixA = 0x9908b0dfU;    // twist matrix constant
constexpr std::uint32_t kUpperMask = 0x80000000U;  // most significant bit
constexpr std::uint32_t kLowerMask = 0x7fffffffU;  // the other 31 bits
constexpr std::uint32_t kInitMultiplier = 1812433253U;
constexpr std::uint32_t kArrayMixA = 1664525U;
constexpr std::uint32_t kArrayMixB = 1566083941U;
constexpr std::uint32_t kArraySeed = 19650218U;  // init_genrand seed used by init_by_array
constexpr std::uint32_t kTemperB = 0x9d2c5680U;
constexpr std::uint32_t kTemperC = 0xefc60000U;

// random(): (a * 2^26 + b) / 2^53 with a = u32 >> 5 (27 bits) and b = u32 >> 6 (26 bits).
constexpr int kHighShift = 5;
constexpr int kLowShift = 6;
constexpr double kTwoPow26 = 67108864.0;
constexpr double kTwoPowMinus53 = 1.0 / 9007199254740992.0;

// CPython 2.7 set table.
constexpr std::size_t kSetMinSize = 8;    // PySet_MINSIZE
constexpr int kPerturbShift = 5;          // PERTURB_SHIFT
constexpr std::size_t kGrowthFactor = 4;  // resize to used * 4 (small sets)
constexpr std::uint64_t kEmptySlot = ~std::uint64_t{0};

constexpr int kBitsPerKeyWord = 32;

}  // namespace

void Mt19937::init_genrand(std::uint32_t seed) noexcept {
  mt_[0] = seed;
  for (int i = 1; i < kStateSize; ++i) {
    mt_[i] = kInitMultiplier * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
  }
  index_ = kStateSize;
}

void Mt19937::init_by_array(const std::vector<std::uint32_t>& key) noexcept {
  init_genrand(kArraySeed);
  const int key_length = static_cast<int>(key.size());
  int i = 1;
  int j = 0;
  for (int k = (kStateSize > key_length ? kStateSize : key_length); k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * kArrayMixA)) + key[j] + static_cast<std::uint32_t>(j);
    ++i;
    ++j;
    if (i >= kStateSize) {
      mt_[0] = mt_[kStateSize - 1];
      i = 1;
    }
    if (j >= key_length) j = 0;
  }
  for (int k = kStateSize - 1; k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * kArrayMixB)) - static_cast<std::uint32_t>(i);
    ++i;
    if (i >= kStateSize) {
      mt_[0] = mt_[kStateSize - 1];
      i = 1;
    }
  }
  mt_[0] = kUpperMask;  // non-zero initial state is assured
  index_ = kStateSize;
}

void Mt19937::twist() noexcept {
  for (int k = 0; k < kStateSize; ++k) {
    const std::uint32_t y = (mt_[k] & kUpperMask) | (mt_[(k + 1) % kStateSize] & kLowerMask);
    mt_[k] = mt_[(k + kShiftPeriod) % kStateSize] ^ (y >> 1) ^ ((y & 1U) ? kMatrixA : 0U);
  }
  index_ = 0;
}

std::uint32_t Mt19937::next_u32() noexcept {
  if (index_ >= kStateSize) twist();
  std::uint32_t y = mt_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & kTemperB;
  y ^= (y << 15) & kTemperC;
  y ^= y >> 18;
  return y;
}

std::vector<std::uint32_t> Py2Random::seed_key(std::int64_t seed) {
  // |seed| split into 32-bit words, least significant first; 0 gives the key [0].
  std::uint64_t magnitude = seed < 0 ? 0 - static_cast<std::uint64_t>(seed) : static_cast<std::uint64_t>(seed);
  std::vector<std::uint32_t> key;
  do {
    key.push_back(static_cast<std::uint32_t>(magnitude));
    magnitude >>= kBitsPerKeyWord;
  } while (magnitude != 0);
  return key;
}

Py2Random::Py2Random(std::int64_t seed) { mt_.init_by_array(seed_key(seed)); }

double Py2Random::random() noexcept {
  const double a = static_cast<double>(mt_.next_u32() >> kHighShift);
  const double b = static_cast<double>(mt_.next_u32() >> kLowShift);
  return (a * kTwoPow26 + b) * kTwoPowMinus53;
}

std::int64_t Py2Random::randrange(std::int64_t n) noexcept {
  return static_cast<std::int64_t>(random() * static_cast<double>(n));
}

std::int64_t Py2Random::randrange(std::int64_t lo, std::int64_t hi) noexcept {
  return lo + static_cast<std::int64_t>(random() * static_cast<double>(hi - lo));
}

NumpyRandomState::NumpyRandomState(std::uint32_t seed) noexcept { mt_.init_genrand(seed); }

std::uint32_t NumpyRandomState::bounded(std::uint32_t range) noexcept {
  if (range == 0) return 0;
  std::uint32_t mask = range;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  std::uint32_t value = 0;
  do {
    value = mt_.next_u32() & mask;
  } while (value > range);
  return value;
}

std::int64_t NumpyRandomState::randint(std::int64_t lo, std::int64_t hi) noexcept {
  return lo + static_cast<std::int64_t>(bounded(static_cast<std::uint32_t>(hi - lo - 1)));
}

std::vector<std::int64_t> NumpyRandomState::choice_without_replacement(std::int64_t m, std::int64_t k) noexcept {
  std::vector<std::int64_t> perm(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i) perm[static_cast<std::size_t>(i)] = i;
  for (std::int64_t i = m - 1; i > 0; --i) {
    const auto j = static_cast<std::int64_t>(bounded(static_cast<std::uint32_t>(i)));
    std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(j)]);
  }
  perm.resize(static_cast<std::size_t>(k));
  return perm;
}

namespace {

// Places `key` into `table` (open addressing, no deletions) with CPython 2.7's probe order.
void set_insert(std::vector<std::uint64_t>& table, std::uint64_t key) {
  const std::size_t mask = table.size() - 1;
  std::size_t i = static_cast<std::size_t>(key) & mask;
  std::size_t perturb = static_cast<std::size_t>(key);
  while (table[i & mask] != kEmptySlot) {
    i = (i << 2) + i + perturb + 1;
    perturb >>= kPerturbShift;
  }
  table[i & mask] = key;
}

}  // namespace

std::vector<std::int64_t> py2_set_order(const std::vector<std::int64_t>& keys) {
  std::vector<std::uint64_t> table(kSetMinSize, kEmptySlot);
  std::size_t used = 0;
  for (const std::int64_t key : keys) {
    set_insert(table, static_cast<std::uint64_t>(key));
    ++used;
    if (used * 3 >= table.size() * 2) {
      // Resize to the smallest power of two above used * 4, re-adding in slot order.
      std::size_t new_size = kSetMinSize;
      while (new_size <= used * kGrowthFactor) new_size <<= 1;
      std::vector<std::uint64_t> grown(new_size, kEmptySlot);
      for (const std::uint64_t old : table) {
        if (old != kEmptySlot) set_insert(grown, old);
      }
      table.swap(grown);
    }
  }
  std::vector<std::int64_t> order;
  order.reserve(used);
  for (const std::uint64_t slot : table) {
    if (slot != kEmptySlot) order.push_back(static_cast<std::int64_t>(slot));
  }
  return order;
}

}  // namespace ringrl::bf
