// The GA's weight blob: the request of genomes the actors are to score (spec brain_coder §6.5).
//
// The GA has no weights; what the learner broadcasts each generation is the list of genomes
// of the new population that missed its reward cache. On the weight channel that list is a
// generic blob (common/blob_layout.h): BlobHeader, then two tensors
//   meta     [1 x kGaRequestMetaFloats]  {count, genome_length, population, 0}
//   genomes  [population x genome_length] gene g of row j as its op index 0..7 (exact floats)
// Rows [0, count) hold the request; the rest are zero. The layout's fingerprint covers the
// population and the genome length, so an actor built for other settings refuses the blob.
// An actor scores the rows j with j % actors == its slot and answers each with a
// GaFitnessRecord (common/ga/fitness_record.h) naming j.
//
// Pure functions over caller-owned memory; no shared state.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/blob_layout.h"

namespace ringrl {

/// The 8 BF ops a genome is made of (no EOS); gene value k is kGaGeneChars[k].
inline constexpr char kGaGeneChars[] = "><+-[].,";
inline constexpr int kGaNumGenes = 8;
/// Version of the request blob layout; bump when it changes.
inline constexpr std::uint32_t kGaRequestLayoutVersion = 1;
inline constexpr int kGaRequestMetaFloats = 4;

/// The request layout for `population` genomes of `genome_length` genes.
inline BlobLayout ga_request_layout(int population, int genome_length) {
  BlobLayout layout(kGaRequestLayoutVersion);
  layout.add("meta", 1, kGaRequestMetaFloats);
  layout.add("genomes", population, genome_length);
  return layout;
}

/// Op index of a BF op character, or -1.
inline int ga_gene_index(char c) noexcept {
  for (int k = 0; k < kGaNumGenes; ++k)
    if (kGaGeneChars[k] == c) return k;
  return -1;
}

/// Writes the payload (layout.num_floats() floats at `payload`) for `genomes`, each
/// genome_length characters of kGaGeneChars; genomes.size() <= population.
inline void write_ga_request(float* payload, const BlobLayout& layout, const std::vector<std::string>& genomes) {
  const BlobTensor& meta = layout.tensor(0);
  const BlobTensor& rows = layout.tensor(1);
  std::fill(payload, payload + layout.num_floats(), 0.f);
  payload[meta.offset + 0] = static_cast<float>(genomes.size());
  payload[meta.offset + 1] = static_cast<float>(rows.cols);
  payload[meta.offset + 2] = static_cast<float>(rows.rows);
  for (std::size_t j = 0; j < genomes.size(); ++j) {
    float* row = payload + rows.offset + j * static_cast<std::size_t>(rows.cols);
    for (int t = 0; t < rows.cols; ++t)
      row[t] = static_cast<float>(ga_gene_index(genomes[j][static_cast<std::size_t>(t)]));
  }
}

/// Reads the request of a payload checked with blob_payload(): the genomes as BF strings.
/// Returns false with the reason in `*error` for a count or gene out of range.
inline bool read_ga_request(const float* payload, const BlobLayout& layout, std::vector<std::string>* genomes,
                            std::string* error) {
  const BlobTensor& meta = layout.tensor(0);
  const BlobTensor& rows = layout.tensor(1);
  const float count = payload[meta.offset];
  if (!(count >= 0) || count > static_cast<float>(rows.rows) || count != static_cast<float>(static_cast<int>(count)) ||
      payload[meta.offset + 1] != static_cast<float>(rows.cols)) {
    *error = "GA request meta {" + std::to_string(count) + ", " + std::to_string(payload[meta.offset + 1]) +
             "}: expected a whole count <= " + std::to_string(rows.rows) + " and genome length " +
             std::to_string(rows.cols);
    return false;
  }
  const auto n = static_cast<std::size_t>(count);
  genomes->resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    std::string& g = (*genomes)[j];
    g.resize(static_cast<std::size_t>(rows.cols));
    const float* row = payload + rows.offset + j * static_cast<std::size_t>(rows.cols);
    for (int t = 0; t < rows.cols; ++t) {
      const float v = row[t];
      if (!(v >= 0) || v >= kGaNumGenes || v != static_cast<float>(static_cast<int>(v))) {
        *error = "GA request row " + std::to_string(j) + " gene " + std::to_string(t) + " is " + std::to_string(v) +
                 ", expected an op index 0.." + std::to_string(kGaNumGenes - 1);
        return false;
      }
      g[static_cast<std::size_t>(t)] = kGaGeneChars[static_cast<int>(v)];
    }
  }
  return true;
}

}  // namespace ringrl
