// Numbers read from user text: command-line options, `--set key=value` values and config
// files. Every command reads its counts, sizes and seeds through here, so a bad value gets
// the same one-line error wherever it was typed.
//
// Contract:
// * parse_unsigned(text, name, min, max) accepts decimal digits only (at least one; leading
//   zeros are read as decimal, never octal) whose value lies in [min, max]. A sign, a
//   fraction, an exponent, a space, a hex prefix, an empty text, or a value past `max`
//   (including past 2^64 - 1) throws UsageError with whole_number_error()'s message:
//     "<name> '<text>': expected a whole number from <min> to <max>"
// * parse_real(text, name, min, max) accepts a finite decimal number in strtod's syntax
//   (sign, fraction, exponent; no spaces, hex, inf or nan) that lies in [min, max]; `max` may
//   be +infinity. Anything else throws UsageError with real_number_error()'s message.
// * The *_error() functions build those messages, for callers that hold a value that was
//   already parsed (a JSON number from a config file) and need to refuse it the same way.
// * Pure functions, no state: safe from any thread. Header-only and torch-free.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

#include "common/errors.h"

namespace ringrl {

/// The error line for a text that is not a whole number in [min, max].
inline std::string whole_number_error(std::string_view name, std::string_view text, std::uint64_t min,
                                      std::uint64_t max) {
  return std::string(name) + " '" + std::string(text) + "': expected a whole number from " + std::to_string(min) +
         " to " + std::to_string(max);
}

/// The error line for a text that is not a finite number in [min, max].
inline std::string real_number_error(std::string_view name, std::string_view text, double min, double max) {
  std::ostringstream out;
  out << name << " '" << text << "': expected a number ";
  if (std::isinf(max)) {
    out << "of at least " << min;
  } else {
    out << "from " << min << " to " << max;
  }
  return out.str();
}

/// The whole number `text` names, in [min, max]; UsageError otherwise (see the contract).
inline std::uint64_t parse_unsigned(std::string_view text, std::string_view name, std::uint64_t min,
                                    std::uint64_t max) {
  constexpr std::uint64_t kRadix = 10;
  constexpr std::uint64_t kLimit = std::numeric_limits<std::uint64_t>::max();
  bool ok = !text.empty();
  std::uint64_t value = 0;
  for (const char c : text) {
    if (!ok) break;
    if (c < '0' || c > '9') {
      ok = false;
      break;
    }
    const auto digit = static_cast<std::uint64_t>(c - '0');
    // value * 10 + digit would pass 2^64 - 1.
    if (value > (kLimit - digit) / kRadix) {
      ok = false;
      break;
    }
    value = value * kRadix + digit;
  }
  if (!ok || value < min || value > max) throw UsageError(whole_number_error(name, text, min, max));
  return value;
}

/// The finite number `text` names, in [min, max]; UsageError otherwise (see the contract).
inline double parse_real(std::string_view text, std::string_view name, double min, double max) {
  // Only the characters of a decimal number: this refuses spaces, hex, inf and nan, which
  // strtod would otherwise take.
  bool ok = !text.empty();
  for (const char c : text) {
    const bool allowed = (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
    if (!allowed) ok = false;
  }
  double value = 0.0;
  if (ok) {
    const std::string copy(text);  // strtod needs a terminated string
    char* end = nullptr;
    value = std::strtod(copy.c_str(), &end);
    ok = end == copy.c_str() + copy.size() && std::isfinite(value);
  }
  if (!ok || !(value >= min && value <= max)) throw UsageError(real_number_error(name, text, min, max));
  return value;
}

}  // namespace ringrl
