#include "bench/pqt/kernel_bench.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>

#include "learner/pqt/policy_kernels.h"

namespace ringrl::learner {
namespace {

// The arrays of one update: per layer the forward's outputs and the backward's inputs, and the
// head's logits. Filled once with small random values; the kernels do not care what they hold.
struct Arrays {
  struct Layer {
    LstmLayerDims d;
    std::vector<float> pre, kh, bias, acts, cs, tcs, hs, dh, dg, dbias, fscratch, bscratch;
  };
  std::vector<Layer> layers;
  std::vector<float> z, z0, lp, alp, ent, ca, ce, dz;
  std::vector<int> actions;
  int positions = 0, vocab = 0;
};

Arrays make_arrays(const PolicyShape& shape, int batch, int steps) {
  std::mt19937 gen(7);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  auto filled = [&](std::size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = normal(gen);
    return v;
  };
  Arrays a;
  const std::size_t rows = static_cast<std::size_t>(batch) * steps;
  for (int h : shape.lstm_sizes) {
    Arrays::Layer l;
    l.d = {steps, batch, h};
    const std::size_t g = 4 * static_cast<std::size_t>(h);
    l.pre = filled(rows * g);
    l.kh = filled(h * g);
    l.bias = filled(g);
    l.dh = filled(rows * h);
    l.acts.resize(rows * g);
    l.dg.resize(rows * g);
    l.cs.resize(rows * h);
    l.tcs.resize(rows * h);
    l.hs.resize(rows * h);
    l.dbias.resize(g);
    l.fscratch.resize(lstm_forward_scratch(h));
    l.bscratch.resize(lstm_backward_scratch(batch, h));
    a.layers.push_back(std::move(l));
  }
  a.positions = static_cast<int>(rows);
  a.vocab = shape.vocab;
  a.z0 = filled(rows * shape.vocab);
  a.z.resize(a.z0.size());
  a.lp.resize(a.z0.size());
  a.dz.resize(a.z0.size());
  a.alp.resize(rows);
  a.ent.resize(rows);
  a.ca = filled(rows);
  a.ce = filled(rows);
  a.actions.resize(rows);
  for (int& t : a.actions) t = 1 + static_cast<int>(gen() % (shape.vocab - 1));
  return a;
}

void one_update(const PolicyKernels& k, Arrays& a) {
  constexpr float kForgetBias = 1.0f, kMaskedLogit = -1e9f, kEntropyFloor = -100.0f;
  for (auto& l : a.layers) {
    k.forward(l.d, 0, l.d.batch, l.pre.data(), l.kh.data(), l.bias.data(), kForgetBias, l.acts.data(), l.cs.data(),
              l.tcs.data(), l.hs.data(), l.fscratch.data());
  }
  std::copy(a.z0.begin(), a.z0.end(), a.z.begin());  // head_forward masks row 0 in place
  k.head_forward(a.positions, a.vocab, true, kMaskedLogit, kEntropyFloor, a.z.data(), a.actions.data(), a.lp.data(),
                 a.alp.data(), a.ent.data());
  k.head_backward(a.positions, a.vocab, true, kEntropyFloor, a.lp.data(), a.actions.data(), a.ca.data(), a.ce.data(),
                  a.ent.data(), a.dz.data());
  for (auto it = a.layers.rbegin(); it != a.layers.rend(); ++it) {
    k.backward(it->d, 0, it->d.batch, it->kh.data(), it->acts.data(), it->cs.data(), it->tcs.data(), it->dh.data(),
               it->dg.data(), it->dbias.data(), it->bscratch.data());
  }
}

}  // namespace

std::vector<PolicyKernelTiming> bench_policy_kernels(const PolicyShape& shape, int batch, int steps, double seconds,
                                                     int rounds) {
  shape.validate();
  Arrays arrays = make_arrays(shape, batch, steps);
  const auto sets = available_policy_kernels();
  std::vector<PolicyKernelTiming> out;
  for (const PolicyKernels* k : sets) {
    out.push_back({k->isa, std::numeric_limits<double>::infinity(), k == &policy_kernels()});
    one_update(*k, arrays);  // warm the caches
  }
  using clock = std::chrono::steady_clock;
  const int round_count = std::max(rounds, 1);
  const double slice = seconds / (round_count * static_cast<double>(sets.size()));
  for (int r = 0; r < round_count; ++r) {
    for (std::size_t i = 0; i < sets.size(); ++i) {
      const auto t0 = clock::now();
      long n = 0;
      double elapsed = 0.0;
      do {
        one_update(*sets[i], arrays);
        ++n;
        elapsed = std::chrono::duration<double>(clock::now() - t0).count();
      } while (elapsed < slice);
      out[i].ms_per_update = std::min(out[i].ms_per_update, 1e3 * elapsed / n);
    }
  }
  return out;
}

}  // namespace ringrl::learner
