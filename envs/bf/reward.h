// The list-distance reward of the BF tasks (spec §3.1) and the code-length factor (§3.2).
//
// Pure functions on int lists, no state; safe from any thread. The arithmetic follows the
// original's float operations in the same order, so results agree to the last bit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringrl::bf {

/// absolute_distance(pred, target, base): sum of |pred[i] - target[i]| over target's indices
/// (base for each index past the end of pred), plus base for each extra element of pred.
std::int64_t absolute_distance(const std::int64_t* pred, std::size_t pred_size, const std::int64_t* target,
                               std::size_t target_size, std::int64_t base) noexcept;

/// (U - distance) / U with U = base * len(target) (U = base when target is empty).
double absolute_distance_reward(const std::int64_t* pred, std::size_t pred_size, const std::int64_t* target,
                                std::size_t target_size, std::int64_t base) noexcept;

/// Factor f applied to code_length_bonus for a correct case: 1 when min == max, otherwise
/// clip(1 - time_penalty * (length - min), 0, 1) with time_penalty = 1 / (max - min)
/// (0 when max < min).
double code_length_factor(std::size_t code_length, std::int64_t min_code_length, std::int64_t max_code_length) noexcept;

}  // namespace ringrl::bf
