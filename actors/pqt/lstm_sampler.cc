#include "actors/pqt/lstm_sampler.h"

#include <string>
#include <vector>

#include "actors/pqt/lstm_kernel.h"
#include "common/cpu_features.h"
#include "common/errors.h"

namespace ringrl::actors {

namespace {

detail::SamplerKernel* make_kernel(SamplerIsa isa, const detail::KernelConfig& config) {
  switch (isa) {
#if defined(RINGRL_SAMPLER_HAVE_AVX512)
    case SamplerIsa::kAvx512:
      return detail::make_kernel_avx512(config);
#endif
#if defined(RINGRL_SAMPLER_HAVE_AVX2)
    case SamplerIsa::kAvx2:
      return detail::make_kernel_avx2(config);
#endif
    default:
      return detail::make_kernel_generic(config);
  }
}

}  // namespace

const char* sampler_isa_name(SamplerIsa isa) {
  switch (isa) {
    case SamplerIsa::kAuto:
      return "auto";
    case SamplerIsa::kGeneric:
      return "generic";
    case SamplerIsa::kAvx2:
      return "avx2";
    case SamplerIsa::kAvx512:
      return "avx512";
    case SamplerIsa::kNative:
      return "native";
  }
  return "?";
}

std::vector<SamplerIsa> available_sampler_isas() {
#if defined(RINGRL_SAMPLER_NATIVE)
  return {SamplerIsa::kNative};
#else
  std::vector<SamplerIsa> isas;
#if defined(RINGRL_SAMPLER_HAVE_AVX512)
  if (cpu_has_avx512()) isas.push_back(SamplerIsa::kAvx512);
#endif
#if defined(RINGRL_SAMPLER_HAVE_AVX2)
  if (cpu_has_avx2()) isas.push_back(SamplerIsa::kAvx2);
#endif
  isas.push_back(SamplerIsa::kGeneric);
  return isas;
#endif
}

struct LstmSampler::Kernel {
  PolicyLayout layout;
  SamplerOptions options;
  SamplerIsa isa;
  std::unique_ptr<detail::SamplerKernel> impl;
  bool has_weights = false;
};

LstmSampler::LstmSampler(const PolicyShape& shape, const SamplerOptions& options, SamplerIsa isa) {
  PolicyLayout layout(shape);
  if (options.batch_size < 1 || options.max_len < 1) {
    throw UsageError("sampler batch_size and max_len must be >= 1, got B=" + std::to_string(options.batch_size) +
                     " T=" + std::to_string(options.max_len));
  }
  if (!(options.softmax_tr > 0.0f)) {
    throw UsageError("sampler softmax_tr must be > 0, got " + std::to_string(options.softmax_tr));
  }
  if (shape.num_layers() > detail::kMaxKernelLayers) {
    throw UsageError("sampler supports at most " + std::to_string(detail::kMaxKernelLayers) + " LSTM layers, got " +
                     std::to_string(shape.num_layers()));
  }
  const std::vector<SamplerIsa> isas = available_sampler_isas();
  if (isa == SamplerIsa::kAuto) {
    isa = isas.front();
  } else {
    bool ok = false;
    for (SamplerIsa a : isas) ok = ok || a == isa;
    if (!ok) {
      throw UsageError(std::string("sampler kernel '") + sampler_isa_name(isa) +
                       "' is not available in this build on this CPU");
    }
  }

  detail::KernelConfig config;
  config.vocab = shape.vocab;
  config.embedding = shape.embedding;
  config.num_layers = shape.num_layers();
  for (int l = 0; l < shape.num_layers(); ++l) {
    config.lstm_sizes[l] = shape.lstm_sizes[l];
    config.kernel_offset[l] = layout.lstm_kernel(l).offset;
    config.bias_offset[l] = layout.lstm_bias(l).offset;
  }
  config.embedding_offset = layout.embedding().offset;
  config.output_offset = layout.output().offset;
  config.batch_size = options.batch_size;
  config.max_len = options.max_len;
  config.eos_token = options.eos_token;
  config.softmax_tr = options.softmax_tr;
  config.eos_masked_logit = kPolicyEosMaskedLogit;
  config.forget_bias = kPolicyForgetBias;

  kernel_ = std::make_unique<Kernel>();
  kernel_->layout = std::move(layout);
  kernel_->options = options;
  kernel_->isa = isa;
  kernel_->impl.reset(make_kernel(isa, config));
}

LstmSampler::~LstmSampler() = default;

void LstmSampler::set_weights(const float* blob, std::size_t num_floats) {
  if (num_floats != kernel_->layout.num_floats()) {
    throw UsageError("policy blob has " + std::to_string(num_floats) + " floats, layout needs " +
                     std::to_string(kernel_->layout.num_floats()));
  }
  kernel_->impl->set_weights(blob);
  kernel_->has_weights = true;
}

void LstmSampler::sample(std::uint64_t seed, SampledBatch* out) {
  const SamplerOptions& o = kernel_->options;
  if (!kernel_->has_weights) throw UsageError("LstmSampler::sample before set_weights");
  if (out->batch_size != o.batch_size || out->max_len != o.max_len ||
      out->tokens.size() != static_cast<std::size_t>(o.batch_size) * o.max_len ||
      out->log_probs.size() != out->tokens.size() || out->lengths.size() != static_cast<std::size_t>(o.batch_size)) {
    out->resize(o.batch_size, o.max_len);  // first use only; later calls allocate nothing
  }
  kernel_->impl->sample(seed, out->tokens.data(), out->lengths.data(), out->log_probs.data());
}

void LstmSampler::teacher_forced_logits(const std::int32_t* tokens, int b, int t, float* out) {
  const SamplerOptions& o = kernel_->options;
  if (!kernel_->has_weights) throw UsageError("teacher_forced_logits before set_weights");
  if (b < 1 || b > o.batch_size || t < 1 || t > o.max_len) {
    throw UsageError("teacher_forced_logits shape [" + std::to_string(b) + ", " + std::to_string(t) +
                     "] exceeds the sampler's [" + std::to_string(o.batch_size) + ", " + std::to_string(o.max_len) +
                     "]");
  }
  kernel_->impl->teacher_forced_logits(tokens, b, t, out);
}

const PolicyLayout& LstmSampler::layout() const { return kernel_->layout; }
const SamplerOptions& LstmSampler::options() const { return kernel_->options; }
SamplerIsa LstmSampler::isa() const { return kernel_->isa; }

}  // namespace ringrl::actors
