// The TD3 / HIRO learner defaults of spec hiro.md §3-§4, as named constants. Torch-free, so
// option structs in torch-free headers (learner/hiro/hiro_learner.h) and torch ones (td3.h)
// share them.
#pragma once

#include <cstddef>

namespace ringrl::td3 {

inline constexpr int kDefaultHidden = 300;         // §4: 300-300
inline constexpr double kOutputInitRange = 0.003;  // §4: last layers U(+-0.003)
inline constexpr double kDefaultActorLr = 1e-4;    // §3
inline constexpr double kDefaultCriticLr = 1e-3;   // §3
inline constexpr double kAdamBeta1 = 0.9;          // §3 (TF defaults)
inline constexpr double kAdamBeta2 = 0.999;
inline constexpr double kAdamEpsilon = 1e-8;
inline constexpr double kDefaultTau = 0.005;        // §3 soft-update rate
inline constexpr double kDefaultGamma = 0.99;       // §3, both levels (high: per meta transition)
inline constexpr int kDefaultBatchSize = 100;       // §3, each level
inline constexpr int kDefaultUpdatePeriod = 2;      // §3 actor and target period
inline constexpr double kDefaultTargetNoise = 0.2;  // §3 smoothing sigma (absolute units)
inline constexpr double kDefaultTargetNoiseClip = 0.5;
inline constexpr double kHuberDelta = 1.0;                     // §3 critic loss
inline constexpr std::size_t kDefaultReplayCapacity = 200000;  // §3: per buffer

}  // namespace ringrl::td3
