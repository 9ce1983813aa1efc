// decode_program_episode (common/pqt/program_record.h) against malformed bytes.
//
// Every input is decoded from a heap block of exactly its size, so a read past the end is a
// heap-buffer-overflow under AddressSanitizer. The fuzz loops are seeded and deterministic.
#include "common/pqt/program_record.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ringrl {
namespace {

constexpr std::uint32_t kMaxLen = 100;    // a program length limit of the size the configs use
constexpr int kRandomInputs = 20000;      // random byte strings per fuzz test
constexpr int kMutationsPerRecord = 200;  // bit-flip / overwrite mutants of each valid record
constexpr int kRecordsToMutate = 60;      // valid records the mutation fuzz starts from
constexpr std::uint64_t kSeed = 0x5eed'2024;

struct Episode {
  ProgramEpisodeHeader header{};
  std::vector<std::int32_t> tokens;
  std::vector<float> log_probs;
};

Episode random_episode(std::mt19937_64& rng, std::uint32_t length) {
  Episode e;
  e.header.length = length;
  e.header.correct = static_cast<std::uint8_t>(rng() & 1);
  e.header.reason = static_cast<std::uint8_t>(rng() % 8);
  e.header.reward = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  e.header.actor_batch = rng();
  for (std::uint32_t t = 0; t < length; ++t) {
    e.tokens.push_back(static_cast<std::int32_t>(rng() % kProgramVocab));
    // Any bit pattern, NaNs included: the record carries floats bit-exactly.
    const auto bits = static_cast<std::uint32_t>(rng());
    float f;
    std::memcpy(&f, &bits, sizeof f);
    e.log_probs.push_back(f);
  }
  return e;
}

std::vector<std::byte> encode(const Episode& e) {
  std::vector<std::byte> bytes(program_episode_bytes(e.header.length));
  encode_program_episode(bytes.data(), e.header, e.tokens.data(), e.log_probs.data());
  return bytes;
}

// A copy of some bytes in a heap block of exactly their size (nothing readable past the end).
class ExactBuffer {
 public:
  ExactBuffer(const std::byte* data, std::size_t n) : bytes_(std::make_unique<std::byte[]>(n)), n_(n) {
    if (n != 0) std::memcpy(bytes_.get(), data, n);
  }
  explicit ExactBuffer(const std::vector<std::byte>& v) : ExactBuffer(v.data(), v.size()) {}

  bool decode(std::uint32_t max_len, ProgramEpisodeView* view, std::string* error) const {
    return decode_program_episode(bytes_.get(), static_cast<std::uint32_t>(n_), max_len, view, error);
  }

 private:
  std::unique_ptr<std::byte[]> bytes_;
  std::size_t n_;
};

// What every accepted record must satisfy, whatever bytes it came from.
void expect_sane(const ProgramEpisodeView& v, std::size_t bytes, std::uint32_t max_len) {
  const std::uint32_t n = v.header.length;
  ASSERT_GE(n, 1u);
  ASSERT_LE(n, max_len);
  ASSERT_EQ(bytes, program_episode_bytes(n));
  for (std::uint32_t t = 0; t < n; ++t) {
    ASSERT_GE(v.tokens[t], 0);
    ASSERT_LT(v.tokens[t], kProgramVocab);
  }
  // Touch the last log-prob byte: inside the exact buffer by construction.
  volatile std::byte last = v.log_probs[n * sizeof(float) - 1];
  (void)last;
}

void expect_equal(const ProgramEpisodeView& v, const Episode& e) {
  EXPECT_EQ(v.header.length, e.header.length);
  EXPECT_EQ(v.header.correct, e.header.correct);
  EXPECT_EQ(v.header.reason, e.header.reason);
  EXPECT_EQ(v.header.reward, e.header.reward);
  EXPECT_EQ(v.header.actor_batch, e.header.actor_batch);
  for (std::uint32_t t = 0; t < e.header.length; ++t) ASSERT_EQ(v.tokens[t], e.tokens[t]) << "token " << t;
  EXPECT_EQ(std::memcmp(v.log_probs, e.log_probs.data(), e.log_probs.size() * sizeof(float)), 0);
}

TEST(ProgramRecord, SizesAndPaddingFollowTheLayout) {
  EXPECT_EQ(program_tokens_padded(1), 4u);
  EXPECT_EQ(program_tokens_padded(4), 4u);
  EXPECT_EQ(program_tokens_padded(5), 8u);
  EXPECT_EQ(program_episode_bytes(1), 24u + 4u + 4u);
  EXPECT_EQ(program_episode_bytes(5), 24u + 8u + 20u);
  std::mt19937_64 rng(kSeed);
  const auto bytes = encode(random_episode(rng, 5));
  for (std::size_t i = sizeof(ProgramEpisodeHeader) + 5; i < sizeof(ProgramEpisodeHeader) + 8; ++i)
    EXPECT_EQ(bytes[i], std::byte{0}) << "token padding byte " << i;
}

TEST(ProgramRecord, ValidRecordsRoundTripAtEveryLength) {
  std::mt19937_64 rng(kSeed);
  for (std::uint32_t n = 1; n <= kMaxLen; ++n) {
    const Episode e = random_episode(rng, n);
    const ExactBuffer buf(encode(e));
    ProgramEpisodeView v;
    std::string error;
    ASSERT_TRUE(buf.decode(kMaxLen, &v, &error)) << "length " << n << ": " << error;
    expect_equal(v, e);
    // The limit is inclusive: a record exactly at max_len is accepted, one above is not.
    ASSERT_TRUE(buf.decode(n, &v, &error)) << error;
    if (n > 1) {
      ASSERT_FALSE(buf.decode(n - 1, &v, &error));
    }
  }
}

TEST(ProgramRecord, EachMalformationIsNamed) {
  std::mt19937_64 rng(kSeed);
  const Episode e = random_episode(rng, 7);
  const auto good = encode(e);
  ProgramEpisodeView v;
  std::string error;

  EXPECT_FALSE(ExactBuffer(good.data(), 10).decode(kMaxLen, &v, &error));
  EXPECT_NE(error.find("shorter than its header"), std::string::npos) << error;

  auto zero_length = good;
  const std::uint32_t zero = 0;
  std::memcpy(zero_length.data(), &zero, sizeof zero);
  EXPECT_FALSE(ExactBuffer(zero_length).decode(kMaxLen, &v, &error));
  EXPECT_NE(error.find("length 0 is outside [1, 100]"), std::string::npos) << error;

  EXPECT_FALSE(ExactBuffer(good.data(), good.size() - 1).decode(kMaxLen, &v, &error));
  EXPECT_NE(error.find("expected " + std::to_string(good.size()) + " for 7 tokens"), std::string::npos) << error;

  auto longer = good;
  longer.push_back(std::byte{0});
  EXPECT_FALSE(ExactBuffer(longer).decode(kMaxLen, &v, &error));

  for (std::int8_t bad : {std::int8_t{-1}, std::int8_t{kProgramVocab}, std::int8_t{127}}) {
    auto bad_token = good;
    bad_token[sizeof(ProgramEpisodeHeader) + 3] = static_cast<std::byte>(bad);
    EXPECT_FALSE(ExactBuffer(bad_token).decode(kMaxLen, &v, &error));
    EXPECT_NE(error.find("token " + std::to_string(bad) + " at 3"), std::string::npos) << error;
  }
}

// Random byte strings of every size up to a little past the largest legal record. Half get a
// plausible length field so that the size check passes and the token scan runs.
TEST(ProgramRecordFuzz, RandomBytesNeverOverreadAndAcceptedOnesAreSane) {
  std::mt19937_64 rng(kSeed + 1);
  const std::uint32_t max_bytes = program_episode_bytes(kMaxLen) + 64;
  int accepted = 0;
  for (int i = 0; i < kRandomInputs; ++i) {
    const bool plausible = (i & 1) != 0;
    std::uint32_t n = static_cast<std::uint32_t>(rng() % (max_bytes + 1));
    std::uint32_t length = 0;
    if (plausible) {
      length = 1 + static_cast<std::uint32_t>(rng() % kMaxLen);
      n = program_episode_bytes(length);
    }
    std::vector<std::byte> bytes(n);
    for (auto& b : bytes) b = static_cast<std::byte>(rng());
    if (plausible) {
      std::memcpy(bytes.data(), &length, sizeof length);
      // Mostly in-vocabulary tokens, so some inputs get through and the rest fail late.
      for (std::uint32_t t = 0; t < length; ++t)
        if (rng() % 64 != 0) bytes[sizeof(ProgramEpisodeHeader) + t] = static_cast<std::byte>(rng() % kProgramVocab);
    }
    const ExactBuffer buf(bytes);
    ProgramEpisodeView v;
    std::string error;
    if (buf.decode(kMaxLen, &v, &error)) {
      ++accepted;
      expect_sane(v, n, kMaxLen);
    } else {
      EXPECT_FALSE(error.empty());
    }
  }
  EXPECT_GT(accepted, 0) << "the fuzz never reached a fully decoded record";
}

// Bit flips, byte overwrites, truncations and extensions of valid records.
TEST(ProgramRecordFuzz, MutatedRecordsNeverOverreadAndAcceptedOnesAreSane) {
  std::mt19937_64 rng(kSeed + 2);
  for (int r = 0; r < kRecordsToMutate; ++r) {
    const std::uint32_t length = 1 + static_cast<std::uint32_t>(rng() % kMaxLen);
    const Episode e = random_episode(rng, length);
    const auto good = encode(e);
    ProgramEpisodeView v;
    std::string error;
    ASSERT_TRUE(ExactBuffer(good).decode(kMaxLen, &v, &error)) << error;

    // Every truncation, and extensions by 1 to 8 bytes.
    for (std::size_t n = 0; n < good.size(); ++n)
      EXPECT_FALSE(ExactBuffer(good.data(), n).decode(kMaxLen, &v, &error)) << "truncated to " << n;
    for (int extra = 1; extra <= 8; ++extra) {
      auto longer = good;
      for (int k = 0; k < extra; ++k) longer.push_back(static_cast<std::byte>(rng()));
      EXPECT_FALSE(ExactBuffer(longer).decode(kMaxLen, &v, &error));
    }

    for (int m = 0; m < kMutationsPerRecord; ++m) {
      auto bytes = good;
      const int flips = 1 + static_cast<int>(rng() % 8);
      for (int f = 0; f < flips; ++f) {
        const std::size_t at = rng() % bytes.size();
        if (rng() % 2 == 0) {
          bytes[at] ^= static_cast<std::byte>(1u << (rng() % 8));
        } else {
          bytes[at] = static_cast<std::byte>(rng());
        }
      }
      const ExactBuffer buf(bytes);
      if (buf.decode(kMaxLen, &v, &error)) {
        expect_sane(v, bytes.size(), kMaxLen);
        // Accepted means the length survived; only the bytes that were changed may differ.
        EXPECT_EQ(v.header.length, length);
      }
    }
  }
}

// The length field alone, swept over values a corrupt header could hold, with records whose
// size is the one that length implies for small lengths and 1 KiB otherwise.
TEST(ProgramRecordFuzz, LengthFieldExtremesAreRejectedWithinTheBuffer) {
  std::mt19937_64 rng(kSeed + 3);
  const std::uint32_t lengths[] = {0, 1, kMaxLen, kMaxLen + 1, 1u << 16, 1u << 24, 1u << 30, UINT32_MAX};
  for (std::uint32_t length : lengths) {
    const std::uint32_t n = length <= kMaxLen ? program_episode_bytes(std::max(length, 1u)) : 1024;
    std::vector<std::byte> bytes(n, std::byte{1});
    std::memcpy(bytes.data(), &length, sizeof length);
    ProgramEpisodeView v;
    std::string error;
    const ExactBuffer buf(bytes);
    const bool ok = buf.decode(kMaxLen, &v, &error);
    EXPECT_EQ(ok, length >= 1 && length <= kMaxLen) << "length " << length << ": " << error;
    if (ok) expect_sane(v, n, kMaxLen);
  }
}

}  // namespace
}  // namespace ringrl
