// The HIRO evaluation record (kRecordHiroEval): what the evaluator actor (kind "hiro-eval",
// spec hiro.md §10.6) sends back to the learner after one evaluation: the training env steps
// it evaluated at, the episodes run, the success rate (final-step distance < threshold) and
// the mean final distance. Eval steps are not env steps and never enter replay.
//
// Payload: one 32-byte POD, host order. Writers encode into a reserved ring frame of
// sizeof(HiroEvalRecord) bytes; readers treat the bytes as untrusted (decode_hiro_eval checks
// the size, the counts and that the numbers are finite). Pure functions; any thread.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace ringrl::hiro {

struct HiroEvalRecord {
  std::uint64_t env_steps;        // the learner's env-step count the evaluation was triggered at
  std::uint32_t episodes;         // episodes run (> 0)
  std::uint32_t successes;        // episodes whose final distance was below the threshold
  double mean_final_distance;     // over the episodes
  std::uint64_t weights_version;  // channel version of the weights evaluated
};
static_assert(std::is_trivially_copyable_v<HiroEvalRecord> && std::is_standard_layout_v<HiroEvalRecord>);
static_assert(sizeof(HiroEvalRecord) == 32);

/// Validates and copies one eval record; false + *error naming the field otherwise.
inline bool decode_hiro_eval(const std::byte* data, std::uint32_t bytes, HiroEvalRecord* out, std::string* error) {
  if (bytes != sizeof(HiroEvalRecord)) {
    *error = "eval record of " + std::to_string(bytes) + " bytes, expected " + std::to_string(sizeof(HiroEvalRecord));
    return false;
  }
  std::memcpy(out, data, sizeof *out);
  if (out->episodes == 0 || out->successes > out->episodes) {
    *error = "eval record with " + std::to_string(out->successes) + " successes in " + std::to_string(out->episodes) +
             " episodes";
    return false;
  }
  if (!std::isfinite(out->mean_final_distance)) {
    *error = "eval record mean_final_distance is not finite";
    return false;
  }
  return true;
}

}  // namespace ringrl::hiro
