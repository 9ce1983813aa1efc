// The Transition / MetaTransition records (spec hiro.md §8): round trips, layout and the
// decoders' refusals of malformed bytes.
#include "common/hiro/transition_record.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ringrl::hiro {
namespace {

constexpr TransitionDims kLow{30, 8, 15};
constexpr MetaTransitionDims kMeta{30, 8, 15, 2, 10};

std::vector<float> iota(int n, float start) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

struct LowRecord {
  std::vector<float> s = iota(30, 0), a = iota(8, 100), s_next = iota(30, 200), g = iota(15, 300),
                     g_next = iota(15, 400);
  std::vector<std::byte> bytes;
  LowRecord() {
    bytes.resize(transition_bytes(kLow));
    TransitionHeader h{};
    h.obs_dim = 30;
    h.action_dim = 8;
    h.goal_dim = 15;
    h.flags = kTransitionEpisodeEnd;
    h.t = 499;
    h.episode = 7;
    encode_transition(bytes.data(), h, {s.data(), a.data(), s_next.data(), g.data(), g_next.data(), -0.5f, 1.0f});
  }
  std::uint32_t size() const { return static_cast<std::uint32_t>(bytes.size()); }
};

struct MetaRecord {
  std::vector<float> s = iota(30, 0), g = iota(15, 100), s_next = iota(30, 200), ctx = {16, 0}, ctx_next = {16, 0},
                     states = iota(300, 1000), actions = iota(80, 2000);
  std::vector<std::byte> bytes;
  MetaRecord() {
    bytes.resize(meta_transition_bytes(kMeta));
    MetaTransitionHeader h{};
    h.obs_dim = 30;
    h.action_dim = 8;
    h.goal_dim = 15;
    h.context_dim = 2;
    h.steps = 10;
    h.t = 10;
    h.episode = 3;
    encode_meta_transition(
        bytes.data(), h,
        {s.data(), g.data(), s_next.data(), ctx.data(), ctx_next.data(), -4.5f, 1.0f, states.data(), actions.data()});
  }
  std::uint32_t size() const { return static_cast<std::uint32_t>(bytes.size()); }
};

TEST(TransitionRecord, SizesMatchTheSpec) {
  EXPECT_EQ(TransitionLayout(kLow).floats(), 100);       // §8: Ant, hiro_orig: 100 floats
  EXPECT_EQ(MetaTransitionLayout(kMeta).floats(), 461);  // §8: about 461 floats
  EXPECT_EQ(transition_bytes(kLow), 24u + 400u);
  EXPECT_EQ(meta_transition_bytes(kMeta), 24u + 461u * 4u);
}

TEST(TransitionRecord, RoundTrip) {
  LowRecord r;
  TransitionView v;
  std::string error;
  ASSERT_TRUE(decode_transition(r.bytes.data(), r.size(), kLow, &v, &error)) << error;
  EXPECT_EQ(v.header.t, 499u);
  EXPECT_EQ(v.header.episode, 7u);
  EXPECT_EQ(v.header.flags, kTransitionEpisodeEnd);
  const TransitionLayout L(kLow);
  std::vector<float> row(static_cast<std::size_t>(v.count));
  v.copy_floats(row.data());
  for (int j = 0; j < 30; ++j) {
    EXPECT_EQ(row[L.s() + j], r.s[j]);
    EXPECT_EQ(row[L.s_next() + j], r.s_next[j]);
  }
  for (int j = 0; j < 8; ++j) EXPECT_EQ(row[L.a() + j], r.a[j]);
  for (int j = 0; j < 15; ++j) {
    EXPECT_EQ(row[L.g() + j], r.g[j]);
    EXPECT_EQ(row[L.g_next() + j], r.g_next[j]);
  }
  EXPECT_EQ(v.value(L.r_env()), -0.5f);
  EXPECT_EQ(v.value(L.discount()), 1.0f);
}

TEST(MetaTransitionRecord, RoundTripKeepsStateActionAlignment) {
  MetaRecord r;
  MetaTransitionView v;
  std::string error;
  ASSERT_TRUE(decode_meta_transition(r.bytes.data(), r.size(), kMeta, &v, &error)) << error;
  const MetaTransitionLayout L(kMeta);
  EXPECT_EQ(v.value(L.s() + 29), 29.0f);
  EXPECT_EQ(v.value(L.g() + 14), 114.0f);
  EXPECT_EQ(v.value(L.s_next()), 200.0f);
  EXPECT_EQ(v.value(L.context()), 16.0f);
  EXPECT_EQ(v.value(L.context_next() + 1), 0.0f);
  EXPECT_EQ(v.value(L.reward()), -4.5f);
  EXPECT_EQ(v.value(L.discount()), 1.0f);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(v.value(L.low_states() + i * 30), 1000.0f + i * 30) << i;         // states[i][0]
    EXPECT_EQ(v.value(L.low_actions() + i * 8 + 7), 2000.0f + i * 8 + 7) << i;  // actions[i][7]
  }
}

TEST(TransitionRecord, RefusesMalformedBytes) {
  LowRecord r;
  TransitionView v;
  std::string error;
  // Truncated: shorter than the header, and one float short.
  EXPECT_FALSE(decode_transition(r.bytes.data(), 10, kLow, &v, &error));
  EXPECT_NE(error.find("shorter than its header"), std::string::npos) << error;
  EXPECT_FALSE(decode_transition(r.bytes.data(), r.size() - 4, kLow, &v, &error));
  EXPECT_NE(error.find("bytes, expected"), std::string::npos) << error;
  // Longer than its dims say.
  r.bytes.resize(r.bytes.size() + 4);
  EXPECT_FALSE(decode_transition(r.bytes.data(), r.size(), kLow, &v, &error));
  r.bytes.resize(r.bytes.size() - 4);
  // Dims that differ from the learner's.
  EXPECT_FALSE(decode_transition(r.bytes.data(), r.size(), TransitionDims{30, 8, 2}, &v, &error));
  EXPECT_NE(error.find("goal_dim 15, expected 2"), std::string::npos) << error;
  EXPECT_FALSE(decode_transition(r.bytes.data(), r.size(), TransitionDims{29, 8, 15}, &v, &error));
  EXPECT_NE(error.find("obs_dim"), std::string::npos) << error;
  // Unknown flags.
  {
    LowRecord f;
    f.bytes[offsetof(TransitionHeader, flags)] = std::byte{0x80};
    EXPECT_FALSE(decode_transition(f.bytes.data(), f.size(), kLow, &v, &error));
    EXPECT_NE(error.find("flags"), std::string::npos) << error;
  }
  // NaN and infinity anywhere in the block; the reason names the field.
  const TransitionLayout L(kLow);
  for (int i : {L.s(), L.a() + 3, L.g_next() + 14, L.discount()}) {
    LowRecord f;
    const float bad = i % 2 == 0 ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    std::memcpy(f.bytes.data() + sizeof(TransitionHeader) + 4 * static_cast<std::size_t>(i), &bad, 4);
    EXPECT_FALSE(decode_transition(f.bytes.data(), f.size(), kLow, &v, &error)) << i;
    EXPECT_NE(error.find("not finite"), std::string::npos) << error;
  }
  LowRecord f;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(f.bytes.data() + sizeof(TransitionHeader) + 4 * static_cast<std::size_t>(L.a() + 3), &nan, 4);
  EXPECT_FALSE(decode_transition(f.bytes.data(), f.size(), kLow, &v, &error));
  EXPECT_NE(error.find("at a (float 33)"), std::string::npos) << error;
}

TEST(MetaTransitionRecord, RefusesMalformedBytes) {
  MetaRecord r;
  MetaTransitionView v;
  std::string error;
  EXPECT_FALSE(decode_meta_transition(r.bytes.data(), 0, kMeta, &v, &error));
  EXPECT_FALSE(decode_meta_transition(r.bytes.data(), r.size() - 1, kMeta, &v, &error));
  MetaTransitionDims other = kMeta;
  other.steps = 9;
  EXPECT_FALSE(decode_meta_transition(r.bytes.data(), r.size(), other, &v, &error));
  EXPECT_NE(error.find("steps 10, expected 9"), std::string::npos) << error;
  other = kMeta;
  other.context_dim = 3;
  EXPECT_FALSE(decode_meta_transition(r.bytes.data(), r.size(), other, &v, &error));
  EXPECT_NE(error.find("context_dim"), std::string::npos) << error;
  // A header that claims fewer steps with a matching size is still refused (dims first).
  {
    MetaTransitionDims nine = kMeta;
    nine.steps = 9;
    MetaRecord f;
    std::uint16_t steps = 9;
    std::memcpy(f.bytes.data() + offsetof(MetaTransitionHeader, steps), &steps, 2);
    EXPECT_FALSE(decode_meta_transition(f.bytes.data(), f.size(), kMeta, &v, &error));
    EXPECT_FALSE(decode_meta_transition(f.bytes.data(), f.size(), nine, &v, &error));  // size of 10 steps
    EXPECT_NE(error.find("bytes, expected"), std::string::npos) << error;
  }
  const MetaTransitionLayout L(kMeta);
  MetaRecord f;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(f.bytes.data() + sizeof(MetaTransitionHeader) + 4 * static_cast<std::size_t>(L.low_actions() + 5), &nan,
              4);
  EXPECT_FALSE(decode_meta_transition(f.bytes.data(), f.size(), kMeta, &v, &error));
  EXPECT_NE(error.find("low_actions"), std::string::npos) << error;
}

}  // namespace
}  // namespace ringrl::hiro
