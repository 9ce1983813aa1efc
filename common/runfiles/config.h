// Run configuration as nlohmann::json: load, strict overrides, presets, typed getters.
//
// Contract:
// * load_config(file) parses a JSON file whose top level is an object; a missing file or a
//   parse error is a UsageError naming the file (and the parse position).
// * Keys are dotted paths into nested objects (`optimizer.lr`).
// * Overrides are strict: every key must already exist, and the new value must keep the
//   type of the old one. Allowed: integer → float slot (stored as float); a float with an
//   integral value → integer slot (`max_npe=2e7`); any list into a list slot whose elements
//   keep the old elements' type (an empty list is fine); an object into an object slot is
//   merged key by key under the same rules; any value into a null slot. For string slots
//   the raw text is the value unless it is a quoted JSON string. Anything else, and any
//   unknown key, is a UsageError of one line naming the key, the value and what was
//   expected, e.g. `--set batch_size=abc: expected an integer (default 64)`.
// * `--set key=value`: value is parsed as JSON if it parses, else taken as a string.
// * Unsigned settings: a caller may name its unsigned integer keys and their ranges
//   (UnsignedKey). An override of one of them must be a whole number in the range (an
//   integral float such as `2e7` counts), and get_unsigned() / check_unsigned() accept only a
//   JSON integer in the range. Anything else (-1, 1.5, 1e30, "abc", 2^64) is a UsageError of
//   one line from common/parse_number.h, naming the key, the value and the range:
//   `--set max_npe '-5': expected a whole number from 0 to 18446744073709551615`, or
//   `config key max_npe '-5': ...` for a value found in a config file or preset.
// * Presets: `"presets": {"name": {"key": value, ...}}`; apply_preset() applies one set of
//   overrides with the same strict rules; an unknown preset lists the available ones.
//   Typical order: load, apply_preset, then the --set overrides.
// * write_resolved(cfg, run_dir) writes `<run_dir>/config.json` atomically (pretty-printed).
// * get<T>(cfg, key): T in {bool, int, int64_t, uint64_t, double, float, std::string,
//   std::vector<int|int64_t|double|std::string>, nlohmann::json}. A missing key or a value
//   of another type is a UsageError naming the key; integers are accepted for float T,
//   floats are never accepted for integer T, out-of-range integers are rejected (for an
//   unsigned T with the message of get_unsigned()).
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/parse_number.h"
#include "common/runfiles/run_files.h"

namespace ringrl::runfiles {

using Config = nlohmann::json;

/// Top-level key that holds named presets.
inline constexpr const char* kPresetsKey = "presets";

Config load_config(const std::filesystem::path& file);

/// Parses a `--set` value: JSON if it parses, else the raw text as a string.
nlohmann::json parse_override_value(std::string_view text);

/// An unsigned integer setting and the whole numbers it accepts (both ends included).
struct UnsignedKey {
  std::string_view key;  // dotted; names text that outlives the key (a string literal)
  std::uint64_t min = 0;
  std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
};
using UnsignedKeys = std::vector<UnsignedKey>;

/// Applies one `key=value` assignment strictly. `origin` prefixes error messages
/// (default "--set", giving "--set key=value: ..."). A key listed in `unsigned_keys` takes
/// only a whole number in its range (see the contract).
void apply_override(Config& cfg, std::string_view assignment, std::string_view origin = "--set",
                    const UnsignedKeys& unsigned_keys = {});

/// Applies a list of `key=value` assignments in order; on error `cfg` is unchanged.
void apply_overrides(Config& cfg, const std::vector<std::string>& assignments, const UnsignedKeys& unsigned_keys = {});

/// Strictly sets `key` (dotted) to an already-typed `value` (no string-from-text leniency);
/// `origin` prefixes error messages. On error `cfg` is unchanged.
void set_strict(Config& cfg, std::string_view key, const nlohmann::json& value, std::string_view origin);

/// Names of the presets in `cfg` (sorted), empty if there are none.
std::vector<std::string> preset_names(const Config& cfg);

/// Applies preset `name` from cfg["presets"]. Unknown name: UsageError listing the presets.
void apply_preset(Config& cfg, std::string_view name);

/// Writes `<run_dir>/config.json` atomically; returns its path.
std::filesystem::path write_resolved(const Config& cfg, const std::filesystem::path& run_dir);

/// Whether the dotted key exists.
bool has(const Config& cfg, std::string_view key);

/// The value at a dotted key; UsageError if absent.
const nlohmann::json& at(const Config& cfg, std::string_view key);

/// Human description of what a slot holding `value` expects ("an integer", "a list of
/// numbers", ...).
std::string expected_kind(const nlohmann::json& value);

/// The whole number at `key.key`: a JSON integer in [key.min, key.max]. Missing: UsageError;
/// any other value: the UsageError `config key <key> '<value>': expected a whole number ...`.
std::uint64_t get_unsigned(const Config& cfg, const UnsignedKey& key);

/// get_unsigned() into T; the range is also cut to what T holds.
template <class T>
T get_unsigned(const Config& cfg, UnsignedKey key) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "get_unsigned: integral T only");
  key.max = std::min<std::uint64_t>(key.max, static_cast<std::uint64_t>(std::numeric_limits<T>::max()));
  return static_cast<T>(get_unsigned(cfg, key));
}

/// get_unsigned<T>() of the entry of `keys` named `key`. A key missing from the table is a
/// programming error: std::logic_error naming `table` (e.g. "pqt config").
template <class T>
T get_listed_unsigned(const Config& cfg, const UnsignedKeys& keys, std::string_view key, std::string_view table) {
  for (const UnsignedKey& k : keys)
    if (k.key == key) return get_unsigned<T>(cfg, k);
  throw std::logic_error(std::string(table) + ": '" + std::string(key) + "' is not in the table of unsigned settings");
}

/// Checks, as get_unsigned() does, every key of `unsigned_keys` that `cfg` has.
void check_unsigned(const Config& cfg, const UnsignedKeys& unsigned_keys);

namespace config_detail {

[[noreturn]] void type_error(std::string_view key, const nlohmann::json& value, std::string_view expected);

/// A JSON integer in [min, max], else the get_unsigned() UsageError for `key`.
std::uint64_t unsigned_value(std::string_view key, const nlohmann::json& value, std::uint64_t min, std::uint64_t max);

template <class T>
struct is_vector : std::false_type {};
template <class U>
struct is_vector<std::vector<U>> : std::true_type {};

template <class T>
T convert(std::string_view key, const nlohmann::json& v) {
  if constexpr (std::is_same_v<T, nlohmann::json>) {
    return v;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) type_error(key, v, "a boolean");
    return v.get<bool>();
  } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
    return static_cast<T>(unsigned_value(key, v, 0, std::numeric_limits<T>::max()));
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer()) type_error(key, v, "an integer");
    if (v.is_number_unsigned()) {
      auto u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
        type_error(key, v, "an integer that fits the setting's range");
      }
      return static_cast<T>(u);
    }
    auto i = v.get<int64_t>();
    if (i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        i > static_cast<int64_t>(std::numeric_limits<T>::max())) {
      type_error(key, v, "an integer that fits the setting's range");
    }
    return static_cast<T>(i);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) type_error(key, v, "a number");
    return v.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) type_error(key, v, "a string");
    return v.get<std::string>();
  } else if constexpr (is_vector<T>::value) {
    if (!v.is_array()) type_error(key, v, "a list");
    T out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      out.push_back(convert<typename T::value_type>(std::string(key) + "[" + std::to_string(i) + "]", v[i]));
    }
    return out;
  } else {
    static_assert(sizeof(T) == 0, "get<T>: unsupported type");
  }
}

}  // namespace config_detail

/// Typed getter; see the contract for the conversions.
template <class T>
T get(const Config& cfg, std::string_view key) {
  return config_detail::convert<T>(key, at(cfg, key));
}

}  // namespace ringrl::runfiles
