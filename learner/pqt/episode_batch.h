// EpisodeBatch: the host-side, torch-free input of one learner step.
//
// Contract:
// * B episodes padded to a common max length T (row-major [B, T] arrays). Row i holds
//   tokens[i*T .. i*T + lengths[i]) of episode i; the padding is ignored by the learner.
// * lengths[i] in [1, T] (EOS included when it was sampled); rewards[i] is the episode's
//   total reward; behaviour_log_probs[i*T + t] is log mu(a_it) of the policy that sampled it
//   (actors/pqt/lstm_sampler.h fills it); policy_versions[i] is that policy's version.
// * The driver owns and refills one batch per step (resize() keeps the capacity), so a
//   steady-state step allocates nothing here. validate() checks the invariants once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/errors.h"

namespace ringrl::learner {

struct EpisodeBatch {
  int batch_size = 0;                          // B
  int max_len = 0;                             // T
  std::vector<std::int32_t> tokens;            // [B, T]
  std::vector<std::int32_t> lengths;           // [B]
  std::vector<float> rewards;                  // [B]
  std::vector<float> behaviour_log_probs;      // [B, T]
  std::vector<std::uint64_t> policy_versions;  // [B]

  /// Sets the shape; contents are unspecified afterwards (zero on growth).
  void resize(int b, int t) {
    batch_size = b;
    max_len = t;
    const auto bt = static_cast<std::size_t>(b) * static_cast<std::size_t>(t);
    tokens.resize(bt);
    lengths.resize(static_cast<std::size_t>(b));
    rewards.resize(static_cast<std::size_t>(b));
    behaviour_log_probs.resize(bt);
    policy_versions.resize(static_cast<std::size_t>(b));
  }

  /// Throws UsageError if the shape or any length/token is out of range.
  void validate(int vocab) const {
    if (batch_size < 1 || max_len < 1) {
      throw UsageError("episode batch shape must be positive, got B=" + std::to_string(batch_size) +
                       " T=" + std::to_string(max_len));
    }
    const auto bt = static_cast<std::size_t>(batch_size) * static_cast<std::size_t>(max_len);
    if (tokens.size() != bt || behaviour_log_probs.size() != bt ||
        lengths.size() != static_cast<std::size_t>(batch_size) ||
        rewards.size() != static_cast<std::size_t>(batch_size) ||
        policy_versions.size() != static_cast<std::size_t>(batch_size)) {
      throw UsageError("episode batch arrays do not match B=" + std::to_string(batch_size) +
                       " T=" + std::to_string(max_len) + " (call resize())");
    }
    for (int i = 0; i < batch_size; ++i) {
      const int len = lengths[static_cast<std::size_t>(i)];
      if (len < 1 || len > max_len) {
        throw UsageError("episode " + std::to_string(i) + " length " + std::to_string(len) + " is outside [1, " +
                         std::to_string(max_len) + "]");
      }
      for (int t = 0; t < len; ++t) {
        const int tok = tokens[static_cast<std::size_t>(i) * max_len + t];
        if (tok < 0 || tok >= vocab) {
          throw UsageError("episode " + std::to_string(i) + " token " + std::to_string(tok) +
                           " at t=" + std::to_string(t) + " is outside [0, " + std::to_string(vocab) + ")");
        }
      }
    }
  }
};

}  // namespace ringrl::learner
