// SampledBatch: B programs sampled by a policy, as the actors hand them to scoring/rings.
//
// Row-major [B, T] arrays. Row i holds tokens[i*T .. i*T + lengths[i]) (EOS included when it
// was drawn); the rest of the row is 0. log_probs[i*T + t] = log mu(a_it) under the sampling
// distribution (logits * softmax_tr); 0 in the padding. Torch-free value type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ringrl::actors {

struct SampledBatch {
  int batch_size = 0;                 // B
  int max_len = 0;                    // T
  std::vector<std::int32_t> tokens;   // [B, T]
  std::vector<std::int32_t> lengths;  // [B]
  std::vector<float> log_probs;       // [B, T]

  void resize(int b, int t) {
    batch_size = b;
    max_len = t;
    const auto bt = static_cast<std::size_t>(b) * static_cast<std::size_t>(t);
    tokens.assign(bt, 0);
    lengths.assign(static_cast<std::size_t>(b), 0);
    log_probs.assign(bt, 0.0f);
  }
  const std::int32_t* row(int i) const { return tokens.data() + static_cast<std::size_t>(i) * max_len; }
};

/// Options shared by the samplers.
struct SamplerOptions {
  int batch_size = 64;      // B
  int max_len = 100;        // T
  bool eos_token = false;   // false: EOS is never drawn (logit -2.4e38)
  float softmax_tr = 1.0f;  // inverse temperature applied to the logits when sampling
};

}  // namespace ringrl::actors
