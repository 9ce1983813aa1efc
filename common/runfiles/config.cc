#include "common/runfiles/config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>

#include "common/runfiles/atomic_file.h"

namespace ringrl::runfiles {
namespace {

using nlohmann::json;

constexpr size_t kMaxSuggestionDistance = 2;
constexpr int kResolvedIndent = 2;
// Floats in [-2^63, 2^63) convert to int64 exactly when integral.
constexpr double kInt64Limit = 9223372036854775808.0;

std::vector<std::string> split_key(std::string_view key) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dot = key.find('.', start);
    parts.emplace_back(key.substr(start, dot == std::string_view::npos ? key.npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string>& parts, size_t n, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < n && i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

enum class Kind { kNull, kBool, kInt, kFloat, kString, kList, kGroup };

Kind kind_of(const json& v) {
  if (v.is_null()) return Kind::kNull;
  if (v.is_boolean()) return Kind::kBool;
  if (v.is_number_integer()) return Kind::kInt;
  if (v.is_number_float()) return Kind::kFloat;
  if (v.is_string()) return Kind::kString;
  if (v.is_array()) return Kind::kList;
  return Kind::kGroup;
}

std::string kind_plural(Kind k) {
  switch (k) {
    case Kind::kNull:
      return "nulls";
    case Kind::kBool:
      return "booleans";
    case Kind::kInt:
      return "integers";
    case Kind::kFloat:
      return "numbers";
    case Kind::kString:
      return "strings";
    case Kind::kList:
      return "lists";
    case Kind::kGroup:
      return "groups";
  }
  return "values";
}

// The element kind shared by every element of a non-empty list, if there is one.
std::optional<Kind> element_kind(const json& list) {
  if (!list.is_array() || list.empty()) return std::nullopt;
  Kind k = kind_of(list[0]);
  for (const json& e : list) {
    if (kind_of(e) != k) return std::nullopt;
  }
  return k;
}

// A scalar `value` converted for a slot of kind `k`, or nullopt if incompatible.
std::optional<json> coerce_scalar(Kind k, const json& value) {
  switch (k) {
    case Kind::kNull:
      return value;
    case Kind::kBool:
      if (value.is_boolean()) return value;
      return std::nullopt;
    case Kind::kInt:
      if (value.is_number_integer()) return value;
      if (value.is_number_float()) {
        double d = value.get<double>();
        if (std::isfinite(d) && std::floor(d) == d && d >= -kInt64Limit && d < kInt64Limit) {
          return json(static_cast<int64_t>(d));
        }
      }
      return std::nullopt;
    case Kind::kFloat:
      if (value.is_number()) return json(value.get<double>());
      return std::nullopt;
    case Kind::kString:
      if (value.is_string()) return value;
      return std::nullopt;
    case Kind::kList:
      if (value.is_array()) return value;
      return std::nullopt;
    case Kind::kGroup:
      if (value.is_object()) return value;
      return std::nullopt;
  }
  return std::nullopt;
}

// The whole number `v` holds: a non-negative JSON integer, or with `integral_floats` a float
// with an integral value that an integer slot can store (`max_npe=2e7`).
std::optional<std::uint64_t> whole_number(const json& v, bool integral_floats) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i >= 0) return static_cast<std::uint64_t>(i);
    return std::nullopt;
  }
  if (integral_floats && v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && std::floor(d) == d && d >= 0 && d < kInt64Limit) return static_cast<std::uint64_t>(d);
  }
  return std::nullopt;
}

const UnsignedKey* find_unsigned(const UnsignedKeys& keys, std::string_view key) {
  for (const UnsignedKey& k : keys) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

// Applies one value strictly. `raw_` is the text the user wrote for the top-level value
// (shown in errors, and taken verbatim for string slots when `from_text` is set).
class Setter {
 public:
  Setter(std::string_view origin, std::string_view raw, bool from_text)
      : origin_(origin), raw_(raw), from_text_(from_text) {}

  void set(json& root, const std::vector<std::string>& parts, const json& value) {
    set_at(root, {}, parts, value, true);
  }

 private:
  // Sets node[parts...] = value, where `above` holds the key parts leading to `node`.
  void set_at(json& node_in, const std::vector<std::string>& above, const std::vector<std::string>& parts,
              const json& value, bool top) {
    json* node = &node_in;
    std::vector<std::string> key = above;
    key.insert(key.end(), parts.begin(), parts.end());
    std::vector<std::string> walked = above;
    for (const std::string& part : parts) {
      if (part.empty()) fail(key, value, top, "empty key part (expected a dotted name like a.b)");
      if (!node->is_object()) {
        fail(key, value, top,
             "'" + join(walked, walked.size(), ".") + "' is not a group (it is " + expected_kind(*node) + ")");
      }
      auto it = node->find(part);
      if (it == node->end()) unknown_key(key, walked, part, *node, value, top);
      walked.push_back(part);
      node = &*it;
    }
    assign(*node, key, value, top);
  }

  void assign(json& slot, const std::vector<std::string>& key, const json& value, bool top) {
    Kind k = kind_of(slot);
    if (k == Kind::kGroup) {
      if (!value.is_object()) fail_expected(key, value, slot, top);
      for (const auto& [sub_key, sub_value] : value.items()) {
        set_at(slot, key, split_key(sub_key), sub_value, false);
      }
      return;
    }
    if (k == Kind::kString && top && from_text_ && !value.is_string()) {
      slot = std::string(raw_);
      return;
    }
    std::optional<json> converted = coerce_scalar(k, value);
    if (!converted) fail_expected(key, value, slot, top);
    if (k == Kind::kList) {
      std::optional<Kind> ek = element_kind(slot);
      if (ek) {
        json out = json::array();
        for (const json& e : value) {
          std::optional<json> ce = coerce_scalar(*ek, e);
          if (!ce) fail_expected(key, value, slot, top);
          out.push_back(*ce);
        }
        converted = std::move(out);
      }
    }
    slot = std::move(*converted);
  }

  std::string shown(const std::vector<std::string>& key, const json& value, bool top) const {
    std::string text = top ? std::string(raw_) : value.dump();
    return std::string(origin_) + " " + join(key, key.size(), ".") + "=" + text;
  }

  [[noreturn]] void fail_expected(const std::vector<std::string>& key, const json& value, const json& slot,
                                  bool top) const {
    throw UsageError(shown(key, value, top) + ": expected " + expected_kind(slot) + " (default " + slot.dump() + ")");
  }

  [[noreturn]] void fail(const std::vector<std::string>& key, const json& value, bool top,
                         const std::string& problem) const {
    throw UsageError(shown(key, value, top) + ": " + problem);
  }

  [[noreturn]] void unknown_key(const std::vector<std::string>& key, const std::vector<std::string>& walked,
                                const std::string& part, const json& node, const json& value, bool top) const {
    std::string best;
    size_t best_distance = kMaxSuggestionDistance + 1;
    std::vector<std::string> known;
    for (const auto& item : node.items()) {
      known.push_back(item.key());
      size_t d = edit_distance(part, item.key());
      if (d < best_distance) {
        best_distance = d;
        best = item.key();
      }
    }
    std::string hint;
    if (!best.empty()) {
      hint = "did you mean '" + best + "'?";
    } else if (known.empty()) {
      hint = "the group has no settings";
    } else {
      hint = "known keys" + (walked.empty() ? std::string() : " in '" + join(walked, walked.size(), ".") + "'") + ": " +
             join(known, known.size(), ", ");
    }
    std::vector<std::string> name = walked;
    name.push_back(part);
    throw UsageError(shown(key, value, top) + ": unknown key '" + join(name, name.size(), ".") + "' (" + hint + ")");
  }

  std::string_view origin_;
  std::string_view raw_;
  bool from_text_;
};

}  // namespace

std::string expected_kind(const nlohmann::json& value) {
  switch (kind_of(value)) {
    case Kind::kNull:
      return "any value";
    case Kind::kBool:
      return "a boolean";
    case Kind::kInt:
      return "an integer";
    case Kind::kFloat:
      return "a number";
    case Kind::kString:
      return "a string";
    case Kind::kGroup:
      return "a group of settings";
    case Kind::kList: {
      std::optional<Kind> ek = element_kind(value);
      return ek ? "a list of " + kind_plural(*ek) : "a list";
    }
  }
  return "a value";
}

Config load_config(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw UsageError("config file " + file.string() + ": cannot be opened (expected a JSON file)");
  Config cfg;
  try {
    cfg = Config::parse(in, nullptr, true, /*ignore_comments=*/false);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError("config file " + file.string() + ": " + e.what());
  }
  if (!cfg.is_object()) {
    throw UsageError("config file " + file.string() + ": expected a JSON object at the top level");
  }
  if (cfg.contains(kPresetsKey)) {
    const json& presets = cfg[kPresetsKey];
    if (!presets.is_object()) {
      throw UsageError("config file " + file.string() + ": '" + kPresetsKey + "' must be an object of named presets");
    }
    for (const auto& [name, preset] : presets.items()) {
      if (!preset.is_object()) {
        throw UsageError("config file " + file.string() + ": preset '" + name + "' must be an object of settings");
      }
    }
  }
  return cfg;
}

nlohmann::json parse_override_value(std::string_view text) {
  json parsed = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return json(std::string(text));
  return parsed;
}

void set_strict(Config& cfg, std::string_view key, const nlohmann::json& value, std::string_view origin) {
  std::string raw = value.dump();
  Setter setter(origin, raw, /*from_text=*/false);
  Config updated = cfg;
  setter.set(updated, split_key(key), value);
  cfg = std::move(updated);
}

void apply_override(Config& cfg, std::string_view assignment, std::string_view origin,
                    const UnsignedKeys& unsigned_keys) {
  size_t eq = assignment.find('=');
  std::string_view key = eq == std::string_view::npos ? assignment : assignment.substr(0, eq);
  while (!key.empty() && key.front() == ' ') key.remove_prefix(1);
  while (!key.empty() && key.back() == ' ') key.remove_suffix(1);
  if (eq == std::string_view::npos || key.empty()) {
    throw UsageError(std::string(origin) + " " + std::string(assignment) + ": expected key=value (e.g. batch_size=64)");
  }
  std::string_view text = assignment.substr(eq + 1);
  json value = parse_override_value(text);
  if (const UnsignedKey* u = find_unsigned(unsigned_keys, key)) {
    const std::optional<std::uint64_t> n = whole_number(value, /*integral_floats=*/true);
    if (!n || *n < u->min || *n > u->max) {
      throw UsageError(whole_number_error(std::string(origin) + " " + std::string(key), text, u->min, u->max));
    }
  }
  Setter setter(origin, text, /*from_text=*/true);
  Config updated = cfg;
  setter.set(updated, split_key(key), value);
  cfg = std::move(updated);
}

void apply_overrides(Config& cfg, const std::vector<std::string>& assignments, const UnsignedKeys& unsigned_keys) {
  Config updated = cfg;
  for (const std::string& a : assignments) apply_override(updated, a, "--set", unsigned_keys);
  cfg = std::move(updated);
}

std::vector<std::string> preset_names(const Config& cfg) {
  std::vector<std::string> names;
  auto it = cfg.find(kPresetsKey);
  if (it == cfg.end() || !it->is_object()) return names;
  for (const auto& [name, preset] : it->items()) {
    (void)preset;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void apply_preset(Config& cfg, std::string_view name) {
  auto presets = cfg.find(kPresetsKey);
  if (presets == cfg.end() || !presets->is_object() || !presets->contains(std::string(name))) {
    std::vector<std::string> names = preset_names(cfg);
    std::string available =
        names.empty() ? "this config defines no presets" : "available: " + join(names, names.size(), ", ");
    throw UsageError("unknown preset '" + std::string(name) + "' (" + available + ")");
  }
  const json preset = (*presets)[std::string(name)];
  if (!preset.is_object()) {
    throw UsageError("preset '" + std::string(name) + "' is not an object of settings");
  }
  std::string origin = "preset '" + std::string(name) + "':";
  Config updated = cfg;
  for (const auto& [key, value] : preset.items()) {
    std::string raw = value.dump();
    Setter setter(origin, raw, /*from_text=*/false);
    setter.set(updated, split_key(key), value);
  }
  cfg = std::move(updated);
}

std::filesystem::path write_resolved(const Config& cfg, const std::filesystem::path& run_dir) {
  std::error_code ec;
  std::filesystem::create_directories(run_dir, ec);
  if (ec) throw std::system_error(ec, "create directory " + run_dir.string());
  std::filesystem::path path = run_dir / kResolvedConfigName;
  write_file_atomic(path, cfg.dump(kResolvedIndent) + "\n");
  return path;
}

bool has(const Config& cfg, std::string_view key) {
  const json* node = &cfg;
  for (const std::string& part : split_key(key)) {
    if (!node->is_object()) return false;
    auto it = node->find(part);
    if (it == node->end()) return false;
    node = &*it;
  }
  return true;
}

const nlohmann::json& at(const Config& cfg, std::string_view key) {
  const json* node = &cfg;
  for (const std::string& part : split_key(key)) {
    auto it = node->is_object() ? node->find(part) : node->end();
    if (!node->is_object() || it == node->end()) {
      throw UsageError("config key '" + std::string(key) + "' is missing");
    }
    node = &*it;
  }
  return *node;
}

std::uint64_t get_unsigned(const Config& cfg, const UnsignedKey& key) {
  return config_detail::unsigned_value(key.key, at(cfg, key.key), key.min, key.max);
}

void check_unsigned(const Config& cfg, const UnsignedKeys& unsigned_keys) {
  for (const UnsignedKey& k : unsigned_keys) {
    if (has(cfg, k.key)) (void)get_unsigned(cfg, k);
  }
}

namespace config_detail {

std::uint64_t unsigned_value(std::string_view key, const nlohmann::json& value, std::uint64_t min, std::uint64_t max) {
  const std::optional<std::uint64_t> n = whole_number(value, /*integral_floats=*/false);
  if (!n || *n < min || *n > max) {
    throw UsageError(whole_number_error("config key " + std::string(key), value.dump(), min, max));
  }
  return *n;
}

void type_error(std::string_view key, const nlohmann::json& value, std::string_view expected) {
  throw UsageError("config key '" + std::string(key) + "': expected " + std::string(expected) + ", got " +
                   value.dump());
}

}  // namespace config_detail

}  // namespace ringrl::runfiles
