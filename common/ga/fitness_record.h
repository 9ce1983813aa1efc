// The GaFitness record (record type kRecordGaFitness): the score of one genome of the GA's
// current request (common/ga/request_layout.h), as it travels from an evaluator actor to the
// learner.
//
// Layout: one GaFitnessRecord, 24 bytes, host byte order. The record's ring version is the
// weights version of the request it answers. Writers memcpy the struct into a reserved frame;
// the reader validates with decode_ga_fitness(), which never reads past `bytes`. The learner
// also checks genome_hash against the genome it asked for, so a record can never be credited
// to another genome.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace ringrl {

struct GaFitnessRecord {
  std::uint32_t request_index;  // row of the request blob the genome came from
  std::uint8_t correct;         // 1 when every test case printed its target exactly
  std::uint8_t reason;          // bf::ScoreReason as a number
  std::uint16_t reserved;       // 0
  double reward;                // total reward r = R / best_reward (spec §3)
  std::uint64_t genome_hash;    // ga_genome_hash() of the scored genome
};
static_assert(std::is_trivially_copyable_v<GaFitnessRecord> && std::is_standard_layout_v<GaFitnessRecord>);
static_assert(sizeof(GaFitnessRecord) == 24 && alignof(GaFitnessRecord) == 8);

/// FNV-1a 64 of a genome's characters: what a GaFitnessRecord names its genome by.
inline std::uint64_t ga_genome_hash(const char* genes, std::size_t n) noexcept {
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(genes[i]);
    h *= 1099511628211ULL;
  }
  return h;
}

/// Validates and decodes one record answering a request of `request_count` genomes; on
/// failure returns false and says why in `*error`.
inline bool decode_ga_fitness(const std::byte* data, std::uint32_t bytes, std::uint32_t request_count,
                              GaFitnessRecord* out, std::string* error) {
  if (bytes != sizeof(GaFitnessRecord)) {
    *error =
        "GA fitness record of " + std::to_string(bytes) + " bytes, expected " + std::to_string(sizeof(GaFitnessRecord));
    return false;
  }
  std::memcpy(out, data, sizeof *out);
  if (out->request_index >= request_count) {
    *error = "GA fitness record for request row " + std::to_string(out->request_index) + ", the request has " +
             std::to_string(request_count) + " rows";
    return false;
  }
  if (out->correct > 1 || out->reserved != 0) {
    *error = "GA fitness record has correct=" + std::to_string(out->correct) +
             " reserved=" + std::to_string(out->reserved) + ", expected 0/1 and 0";
    return false;
  }
  if (!std::isfinite(out->reward)) {
    *error = "GA fitness record has a non-finite reward";
    return false;
  }
  return true;
}

}  // namespace ringrl
