// A fast reader for the common shape of a `--jsonl` request line: one JSON object whose keys
// are plain strings and whose values are plain strings or null, e.g.
//   {"task":"reverse","code":"+[>,]<[.<]"}
//
// Contract:
// * parse_flat_object(text, members) accepts exactly the texts that are such an object with
//   every key and string value made of printable ASCII other than `"` and `\` (no escapes),
//   JSON whitespace (space, tab, CR, LF) around tokens, and no key twice. It then fills
//   `members` with views into `text`, in order, and returns true.
// * For any other text (not JSON, other value types, escapes, control or non-ASCII bytes,
//   a repeated key) it returns false and the caller parses the line with a full JSON parser.
//   A full parser reads every accepted text as the same object, so the fast path never
//   changes what a line means; it only skips building a DOM.
// * Torch-free and allocation-free once `members` has grown. Any thread; no shared state.
#pragma once

#include <string_view>
#include <vector>

namespace ringrl::app {

/// One member of a flat object: its key and its value (a string, or null).
struct FlatMember {
  std::string_view key;
  std::string_view value;  // the string's characters, quotes removed; empty when null
  bool is_null = false;
};

namespace flat_json_detail {

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

inline void skip_space(std::string_view text, std::size_t* at) {
  while (*at < text.size() && is_space(text[*at])) ++*at;
}

// A string token at `*at` (the opening quote) of plain printable ASCII; false otherwise.
inline bool read_plain_string(std::string_view text, std::size_t* at, std::string_view* out) {
  if (*at >= text.size() || text[*at] != '"') return false;
  const std::size_t begin = *at + 1;
  for (std::size_t k = begin; k < text.size(); ++k) {
    const auto c = static_cast<unsigned char>(text[k]);
    if (c == '"') {
      *out = text.substr(begin, k - begin);
      *at = k + 1;
      return true;
    }
    if (c == '\\' || c < 0x20 || c >= 0x7f) return false;
  }
  return false;
}

}  // namespace flat_json_detail

/// See the contract. On false, `members` holds unspecified members.
inline bool parse_flat_object(std::string_view text, std::vector<FlatMember>* members) {
  using namespace flat_json_detail;
  constexpr std::string_view kNull = "null";
  members->clear();
  std::size_t at = 0;
  skip_space(text, &at);
  if (at >= text.size() || text[at] != '{') return false;
  ++at;
  skip_space(text, &at);
  if (at < text.size() && text[at] == '}') {
    ++at;
  } else {
    for (;;) {
      FlatMember m;
      if (!read_plain_string(text, &at, &m.key)) return false;
      for (const FlatMember& seen : *members) {
        if (seen.key == m.key) return false;
      }
      skip_space(text, &at);
      if (at >= text.size() || text[at] != ':') return false;
      ++at;
      skip_space(text, &at);
      if (text.substr(at, kNull.size()) == kNull) {
        m.is_null = true;
        at += kNull.size();
      } else if (!read_plain_string(text, &at, &m.value)) {
        return false;
      }
      members->push_back(m);
      skip_space(text, &at);
      if (at >= text.size()) return false;
      if (text[at] == '}') {
        ++at;
        break;
      }
      if (text[at] != ',') return false;
      ++at;
      skip_space(text, &at);
    }
  }
  skip_space(text, &at);
  return at == text.size();
}

/// The member named `key`, or nullptr.
inline const FlatMember* find_member(const std::vector<FlatMember>& members, std::string_view key) {
  for (const FlatMember& m : members) {
    if (m.key == key) return &m;
  }
  return nullptr;
}

}  // namespace ringrl::app
