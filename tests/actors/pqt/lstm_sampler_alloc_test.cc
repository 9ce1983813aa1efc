// LstmSampler::sample and teacher_forced_logits allocate nothing once constructed: counts
// global operator new (any library) and malloc calls from the statically linked objects
// (Eigen's aligned_malloc goes to malloc; the binary links with -Wl,--wrap=malloc).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>

#include "actors/pqt/lstm_sampler.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocs{0};
}  // namespace

extern "C" void* __real_malloc(std::size_t size);
extern "C" void* __wrap_malloc(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __real_malloc(size);
}

void* operator new(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace ringrl::actors {
namespace {

TEST(LstmSamplerAlloc, SampleAllocatesNothing) {
  const PolicyShape shape;
  const PolicyLayout layout(shape);
  std::vector<float> blob(layout.num_floats());
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-0.3f, 0.3f);
  for (auto& x : blob) x = u(rng);
  SamplerOptions o;  // B=64, T=100
  std::vector<float> logits(static_cast<std::size_t>(o.batch_size) * o.max_len * shape.vocab);
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(o.batch_size) * o.max_len, 1);
  for (SamplerIsa isa : available_sampler_isas()) {
    LstmSampler s(shape, o, isa);
    s.set_weights(blob.data(), blob.size());
    SampledBatch out;
    out.resize(o.batch_size, o.max_len);
    s.sample(1, &out);  // warm
    g_allocs = 0;
    g_counting = true;
    for (int k = 0; k < 3; ++k) s.sample(2 + k, &out);
    s.teacher_forced_logits(tokens.data(), o.batch_size, o.max_len, logits.data());
    g_counting = false;
    EXPECT_EQ(g_allocs.load(), 0) << sampler_isa_name(isa);
    // The counter works: a vector allocates.
    g_counting = true;
    std::vector<int> probe(10);
    g_counting = false;
    EXPECT_GT(g_allocs.load(), 0);
  }
}

}  // namespace
}  // namespace ringrl::actors
