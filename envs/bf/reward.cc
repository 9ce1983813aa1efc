#include "envs/bf/reward.h"

#include <algorithm>

namespace ringrl::bf {

std::int64_t absolute_distance(const std::int64_t* pred, std::size_t pred_size, const std::int64_t* target,
                               std::size_t target_size, std::int64_t base) noexcept {
  std::int64_t distance = 0;
  for (std::size_t i = 0; i < target_size; ++i) {
    if (i < pred_size) {
      const std::int64_t diff = pred[i] - target[i];
      distance += diff < 0 ? -diff : diff;
    } else {
      distance += base;
    }
  }
  if (pred_size > target_size) {
    distance += base * static_cast<std::int64_t>(pred_size - target_size);
  }
  return distance;
}

double absolute_distance_reward(const std::int64_t* pred, std::size_t pred_size, const std::int64_t* target,
                                std::size_t target_size, std::int64_t base) noexcept {
  double unit = static_cast<double>(base * static_cast<std::int64_t>(target_size));
  if (unit == 0) unit = static_cast<double>(base);
  const double distance = static_cast<double>(absolute_distance(pred, pred_size, target, target_size, base));
  return (unit - distance) / unit;
}

double code_length_factor(std::size_t code_length, std::int64_t min_code_length,
                          std::int64_t max_code_length) noexcept {
  if (min_code_length == max_code_length) return 1.0;
  const double time_penalty =
      max_code_length > min_code_length ? 1.0 / static_cast<double>(max_code_length - min_code_length) : 0.0;
  const double excess = static_cast<double>(static_cast<std::int64_t>(code_length) - min_code_length);
  return std::clamp(1.0 - time_penalty * excess, 0.0, 1.0);
}

}  // namespace ringrl::bf
