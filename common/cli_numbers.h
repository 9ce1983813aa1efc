// Numeric command-line options that refuse a bad value before CLI11 converts it.
//
// CLI11 stores "-5" in an unsigned option as 2^64 - 5 and reads "010" as octal. Every count,
// size, seed and duration of every `ringrl` command (app/ and the commands bench/ registers)
// is declared through add_unsigned() or add_real() instead of add_option(): each value first
// goes through common/parse_number.h. Header-only; the including target links CLI11.
//
// Contract:
// * A bad value (a sign, a fraction, an exponent, a word, a value past the range or past
//   2^64 - 1 for add_unsigned; a word, inf, nan or a value out of range for add_real) throws
//   ringrl::UsageError "<option> '<value>': expected a whole number from MIN to MAX" (or "a
//   number ...") while the command line is parsed, before any command callback runs; main()
//   prints it as one line and exits with status 2.
// * A good whole number is handed to CLI11 as plain decimal, so the target gets exactly the
//   value parse_unsigned() read.
// * Targets: an arithmetic type, std::optional of one, or std::vector of one (each element
//   is checked, also after ->delimiter(',')). The range is inclusive and must fit the type;
//   add_unsigned's defaults to [0, max of the type]. A range that does not fit throws
//   std::logic_error when the option is declared (a programming error, not a user's).
// * Both return the CLI11 option, for ->capture_default_str(), ->required() and the like.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/parse_number.h"

namespace ringrl {
namespace cli_numbers_detail {

template <class T>
struct Element {
  using type = T;
};
template <class T>
struct Element<std::optional<T>> {
  using type = T;
};
template <class T>
struct Element<std::vector<T>> {
  using type = T;
};
/// The number type stored by a target of type T.
template <class T>
using ElementT = typename Element<T>::type;

/// The range as --help shows it: "in [min - max]".
template <class N>
std::string range_text(N min, N max) {
  std::ostringstream out;
  out << "in [" << min << " - " << max << "]";
  return out.str();
}

}  // namespace cli_numbers_detail

/// Adds option `name` storing a whole number in [min, max] into `target` (see the contract).
template <class T>
CLI::Option* add_unsigned(
    CLI::App& app, const std::string& name, T& target, const std::string& help, std::uint64_t min = 0,
    std::uint64_t max = static_cast<std::uint64_t>(std::numeric_limits<cli_numbers_detail::ElementT<T>>::max())) {
  using N = cli_numbers_detail::ElementT<T>;
  static_assert(std::is_integral_v<N> && !std::is_same_v<N, bool>, "add_unsigned: integral targets only");
  if (min > max || max > static_cast<std::uint64_t>(std::numeric_limits<N>::max())) {
    throw std::logic_error("add_unsigned " + name + ": range does not fit the option's type");
  }
  CLI::Option* option = app.add_option(name, target, help);
  const std::string shown = option->get_name();
  option->transform(CLI::Validator(
      [shown, min, max](std::string& value) {
        value = std::to_string(parse_unsigned(value, shown, min, max));
        return std::string();
      },
      cli_numbers_detail::range_text(min, max)));
  return option;
}

/// Adds option `name` storing a finite number in [min, max] into `target` (see the contract).
template <class T>
CLI::Option* add_real(CLI::App& app, const std::string& name, T& target, const std::string& help, double min,
                      double max = std::numeric_limits<double>::infinity()) {
  using N = cli_numbers_detail::ElementT<T>;
  static_assert(std::is_floating_point_v<N>, "add_real: floating-point targets only");
  if (!(min <= max)) throw std::logic_error("add_real " + name + ": empty range");
  CLI::Option* option = app.add_option(name, target, help);
  const std::string shown = option->get_name();
  option->check(CLI::Validator(
      [shown, min, max](std::string& value) {
        (void)parse_real(value, shown, min, max);
        return std::string();
      },
      cli_numbers_detail::range_text(min, max)));
  return option;
}

}  // namespace ringrl
