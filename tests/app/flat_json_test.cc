// Tests for app/flat_json.h: what the fast reader accepts, and that a full JSON parser reads
// every accepted text as the same object.
#include "app/flat_json.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace ringrl::app {
namespace {

using Json = nlohmann::ordered_json;

// Expects the full parser to read `text` as exactly `members` (same keys, order, values).
void expect_same_object(const std::string& text, const std::vector<FlatMember>& members) {
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(j.is_object()) << text;
  ASSERT_EQ(j.size(), members.size()) << text;
  std::size_t k = 0;
  for (auto it = j.begin(); it != j.end(); ++it, ++k) {
    EXPECT_EQ(it.key(), members[k].key) << text;
    if (members[k].is_null) {
      EXPECT_TRUE(it.value().is_null()) << text;
    } else {
      ASSERT_TRUE(it.value().is_string()) << text;
      EXPECT_EQ(it.value().get<std::string>(), members[k].value) << text;
    }
  }
}

TEST(FlatJson, AcceptsFlatObjectsOfPlainStrings) {
  std::vector<FlatMember> m;
  ASSERT_TRUE(parse_flat_object(R"({"task":"reverse","code":"+[>,]<[.<]"})", &m));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].key, "task");
  EXPECT_EQ(m[0].value, "reverse");
  EXPECT_EQ(m[1].value, "+[>,]<[.<]");
  ASSERT_NE(find_member(m, "code"), nullptr);
  EXPECT_EQ(find_member(m, "variant"), nullptr);

  ASSERT_TRUE(parse_flat_object(" {\t\"variant\" : null ,\"code\":\"\"}\r", &m));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_TRUE(m[0].is_null);
  EXPECT_FALSE(m[1].is_null);
  EXPECT_EQ(m[1].value, "");

  ASSERT_TRUE(parse_flat_object("{}", &m));
  EXPECT_TRUE(m.empty());
}

TEST(FlatJson, LeavesEverythingElseToTheFullParser) {
  std::vector<FlatMember> m;
  for (const std::string_view text : {
           "",
           "[1]",
           "{",
           R"({"a":"b")",
           R"({"a":"b",})",
           R"({"a":"b"}x)",
           R"({"a":"b"} {})",
           R"({"a":1})",
           R"({"a":true})",
           R"({"a":["b"]})",
           R"({"a":{"b":"c"}})",
           R"({"a":nul})",
           R"({"a":nullx})",
           R"({"a\"":"b"})",
           R"({"a":"b\u002e"})",
           R"({"a":"b","a":"c"})",
           "{\"a\":\"b\tc\"}",
           "{\"a\":\"\xc3\xa9\"}",
           "{\"a\":\"\x7f\"}",
           R"({a:"b"})",
           R"({"a" "b"})",
       }) {
    EXPECT_FALSE(parse_flat_object(text, &m)) << text;
  }
}

// Random requests (any member order, spacing and value kind), each also mutated by a few
// random byte edits: whatever the fast reader accepts, the full parser reads as the same
// object.
TEST(FlatJson, EveryAcceptedTextMeansTheSameToTheFullParser) {
  const std::vector<std::string> keys = {"task", "code", "variant", "id", "a\\\"b", ""};
  const std::vector<std::string> values = {"\"reverse\"", "\"+[>,]<[.<]\"", "null", "\"\"",        "\"simplify\"",
                                           "1",           "true",           "[]",   "\"\\u0041\"", "{}"};
  const std::vector<std::string> spaces = {"", " ", "\t", "\r", "  "};
  const std::string edits = "{}[]:,\" \\\tnul1ae\x01\x7f\xc3";
  std::mt19937_64 rng(7);
  auto pick = [&](const std::vector<std::string>& v) -> const std::string& { return v[rng() % v.size()]; };
  std::vector<FlatMember> m;
  int accepted = 0, accepted_edited = 0;
  constexpr int kTexts = 100000;
  for (int k = 0; k < kTexts; ++k) {
    std::string text = pick(spaces) + "{";
    const std::size_t n = rng() % 5;
    for (std::size_t p = 0; p < n; ++p) {
      if (p > 0) text += "," + pick(spaces);
      text += "\"" + pick(keys) + "\"" + pick(spaces) + ":" + pick(spaces) + pick(values);
    }
    text += pick(spaces) + "}" + pick(spaces);
    const std::size_t num_edits = rng() % 3;
    for (std::size_t e = 0; e < num_edits; ++e) {
      const std::size_t at = rng() % (text.size() + 1);
      const char c = edits[rng() % edits.size()];
      switch (rng() % 3) {
        case 0:
          text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        case 1:
          if (at < text.size()) text.erase(at, 1);
          break;
        default:
          if (at < text.size()) text[at] = c;
          break;
      }
    }
    if (!parse_flat_object(text, &m)) continue;
    ++accepted;
    accepted_edited += num_edits > 0 ? 1 : 0;
    expect_same_object(text, m);
  }
  // Both sides of the boundary are exercised.
  EXPECT_GT(accepted, kTexts / 20);
  EXPECT_LT(accepted, kTexts / 2);
  EXPECT_GT(accepted_edited, 100);
}

}  // namespace
}  // namespace ringrl::app
