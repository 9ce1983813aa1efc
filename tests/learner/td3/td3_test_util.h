// Helpers of the tests that compare TD3 agents (td3_fused_test.cc, td3_cuda_test.cc,
// tests/learner/hiro/hiro_test.cc).
#pragma once

#include <algorithm>
#include <vector>

#include <torch/torch.h>

#include "learner/td3/td3.h"

namespace ringrl::td3::testing_util {

/// Every parameter of the actor, both critics and their targets, in that order (the live
/// tensors).
inline std::vector<torch::Tensor> agent_params(Td3Agent& a) {
  std::vector<torch::Tensor> out;
  for (torch::nn::Module* m :
       {static_cast<torch::nn::Module*>(a.actor().get()), static_cast<torch::nn::Module*>(a.critic1().get()),
        static_cast<torch::nn::Module*>(a.critic2().get()), static_cast<torch::nn::Module*>(a.actor_target().get()),
        static_cast<torch::nn::Module*>(a.critic1_target().get()),
        static_cast<torch::nn::Module*>(a.critic2_target().get())})
    for (const auto& p : m->parameters()) out.push_back(p);
  return out;
}

/// Copies of agent_params(), on the host.
inline std::vector<torch::Tensor> all_tensors(Td3Agent& a) {
  std::vector<torch::Tensor> out;
  for (const auto& p : agent_params(a)) out.push_back(p.detach().to(torch::kCPU).clone());
  return out;
}

/// Largest |a - b| / (1e-3 + |b|) over every tensor of both agents.
inline double max_rel_diff(Td3Agent& a, Td3Agent& b) {
  const auto ta = all_tensors(a), tb = all_tensors(b);
  double worst = 0.0;
  for (std::size_t i = 0; i < ta.size(); ++i)
    worst = std::max(worst, ((ta[i] - tb[i]).abs() / (tb[i].abs() + 1e-3)).max().item<double>());
  return worst;
}

}  // namespace ringrl::td3::testing_util
