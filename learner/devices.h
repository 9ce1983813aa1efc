// How many CUDA devices this process can use, without exposing torch to the caller.
//
// Contract: cuda_device_count() returns torch::cuda::device_count() when the LibTorch build
// has CUDA and a driver with at least one device is present, else 0. It never throws; the
// first call may take a moment (it loads the CUDA runtime). Thread-safe.
#pragma once

namespace ringrl::learner {

int cuda_device_count();

}  // namespace ringrl::learner
