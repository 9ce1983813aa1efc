// Tests for common/blob_layout.h and common/actor_launch.h.
#include "common/blob_layout.h"

#include <gtest/gtest.h>

#include "common/actor_launch.h"
#include "common/errors.h"

namespace ringrl {
namespace {

BlobLayout two_tensors(std::uint32_t version = 1, int cols = 3) {
  BlobLayout l(version);
  l.add("w", 2, cols);
  l.add("b", 1, 5);
  return l;
}

TEST(BlobLayout, OffsetsAreAlignedAndSizesCountPadding) {
  const BlobLayout l = two_tensors();
  ASSERT_EQ(l.tensors().size(), 2u);
  EXPECT_EQ(l.tensor(0).offset, 0u);
  EXPECT_EQ(l.tensor(1).offset, kBlobAlignFloats);  // 6 floats, then padding to 16
  EXPECT_EQ(l.num_floats(), 2 * kBlobAlignFloats);
  EXPECT_EQ(l.num_bytes(), 2 * kBlobAlignFloats * sizeof(float));
  EXPECT_EQ(l.num_parameters(), 11u);
  ASSERT_NE(l.find("b"), nullptr);
  EXPECT_EQ(l.find("b")->cols, 5);
  EXPECT_EQ(l.find("nope"), nullptr);
}

TEST(BlobLayout, FingerprintChangesWithVersionNameAndShape) {
  const std::uint64_t f = two_tensors().fingerprint();
  EXPECT_EQ(f, two_tensors().fingerprint());
  EXPECT_NE(f, two_tensors(2).fingerprint());
  EXPECT_NE(f, two_tensors(1, 4).fingerprint());
  BlobLayout renamed(1);
  renamed.add("v", 2, 3);
  renamed.add("b", 1, 5);
  EXPECT_NE(f, renamed.fingerprint());
}

TEST(BlobLayout, PayloadIsReturnedOnlyForTheExpectedLayout) {
  const BlobLayout l = two_tensors();
  std::vector<std::byte> blob(channel_blob_bytes(l));
  write_blob_header(blob.data(), l);
  std::string error;
  const float* p = blob_payload(blob, l, &error);
  ASSERT_NE(p, nullptr) << error;
  EXPECT_EQ(reinterpret_cast<const std::byte*>(p), blob.data() + sizeof(BlobHeader));

  EXPECT_EQ(blob_payload(blob, two_tensors(1, 4), &error), nullptr);
  EXPECT_NE(error.find("fingerprint"), std::string::npos) << error;
  std::vector<std::byte> shorter(blob.begin(), blob.end() - 4);
  EXPECT_EQ(blob_payload(shorter, l, &error), nullptr);
  EXPECT_NE(error.find("expected"), std::string::npos) << error;
  std::vector<std::byte> raw(blob.size());  // a headerless blob (all zero)
  EXPECT_EQ(blob_payload(raw, l, &error), nullptr);
  EXPECT_NE(error.find("magic"), std::string::npos) << error;
  EXPECT_EQ(blob_payload(std::vector<std::byte>(8), l, &error), nullptr);
}

TEST(ActorLaunch, ArgumentsRoundTrip) {
  ActorLaunch l;
  l.kind = "pqt";
  l.segment = "ringrl-0-x";
  l.slot = 7;
  l.seed = 18446744073709551615ULL;
  l.config_path = "/tmp/c.json";
  l.params = {{"a", "1"}, {"b", "x=y"}};
  std::vector<std::string> args = l.to_args();
  ASSERT_EQ(args.front(), "actor");
  args.erase(args.begin());
  const ActorLaunch back = ActorLaunch::parse(args);
  EXPECT_EQ(back.kind, l.kind);
  EXPECT_EQ(back.segment, l.segment);
  EXPECT_EQ(back.slot, l.slot);
  EXPECT_EQ(back.seed, l.seed);
  EXPECT_EQ(back.config_path, l.config_path);
  EXPECT_EQ(back.params, l.params);
  EXPECT_EQ(back.param("b"), "x=y");
  EXPECT_THROW(back.param("c"), UsageError);
}

TEST(ActorLaunch, BadArgumentsAreUsageErrors) {
  const std::vector<std::vector<std::string>> bad = {
      {"--kind", "pqt", "--segment", "s"},                                  // no slot
      {"--kind", "pqt", "--segment", "s", "--slot", "-1"},                  // negative
      {"--kind", "pqt", "--segment", "s", "--slot", "4294967296"},          // past u32
      {"--kind", "pqt", "--segment", "s", "--slot", "1", "--seed", "1.5"},  // fraction
      {"--kind", "pqt", "--segment", "s", "--slot", "1", "--param", "=v"},  // no key
      {"--kind", "pqt", "--segment", "s", "--slot", "1", "--bogus", "v"},   // unknown flag
      {"--kind", "pqt", "--segment", "s", "--slot"},                        // missing value
  };
  for (const auto& a : bad) EXPECT_THROW(ActorLaunch::parse(a), UsageError) << a.size();
}

}  // namespace
}  // namespace ringrl
