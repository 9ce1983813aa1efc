// Append-only JSON-lines files (results.jsonl, solutions.txt) and reading them back.
//
// Contract:
// * append_json_line(file, record) writes `record.dump()` + "\n" with one write() to a file
//   opened O_APPEND, then fsyncs it (and the directory when the file is new). The file and
//   its parent directories are created as needed. If the file ends in a torn line (no
//   trailing newline, e.g. after a crash), that line is completed with "\n" when it parses
//   as JSON and cut off when it does not, before the new record is appended.
// * read_json_lines(file): every line parsed as JSON, in order; a missing file gives an
//   empty list; blank lines are skipped; an unparsable final line without a trailing
//   newline (a torn write) is ignored; any other unparsable line is a UsageError naming
//   file:line.
// * Resume helpers: completed_values() collects the integer values of one key (e.g. the
//   repetition index) so a driver can skip repetitions already present;
//   check_consistent() rejects records whose settings differ from the current run's.
// * solutions.txt: append_solution() appends {"code", "reward", "npe"} as one JSON line.
// * OS failures throw std::system_error naming the file. Concurrent appenders in several
//   processes are safe for records below the pipe-buffer size (one write each).
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/runfiles/run_files.h"

namespace ringrl::runfiles {

inline constexpr const char* kRepetitionKey = "global_rep";

void append_json_line(const std::filesystem::path& file, const nlohmann::json& record);

std::vector<nlohmann::json> read_json_lines(const std::filesystem::path& file);

/// The integer values of `key` over all records that have it (e.g. repetitions done).
std::set<int64_t> completed_values(const std::vector<nlohmann::json>& records, std::string_view key = kRepetitionKey);

/// For each key of `expected` (an object): every record that has the key must hold the same
/// value, else a UsageError naming `file`, the record's line, the key and both values
/// (e.g. a resumed run with a different max_npe).
void check_consistent(const std::vector<nlohmann::json>& records, const nlohmann::json& expected,
                      const std::filesystem::path& file);

/// Appends {"code": code, "reward": reward, "npe": npe} to a solutions file.
void append_solution(const std::filesystem::path& file, std::string_view code, double reward, int64_t npe);

}  // namespace ringrl::runfiles
