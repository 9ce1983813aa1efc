#include "learner/td3/fifo_replay.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/errors.h"
#include "common/td3_state_format.h"

namespace ringrl::td3 {

namespace {
}  // namespace

FifoReplay::FifoReplay(std::size_t capacity, int row_floats) : capacity_(capacity), row_floats_(row_floats) {
  if (capacity < 1) throw UsageError("replay capacity must be >= 1, got " + std::to_string(capacity));
  if (row_floats < 1) throw UsageError("replay row width must be >= 1 float, got " + std::to_string(row_floats));
}

void FifoReplay::add(const float* row) {
  const auto width = static_cast<std::size_t>(row_floats_);
  const std::size_t slot = static_cast<std::size_t>(added_ % capacity_);
  if (slot == size_ && size_ < capacity_) {
    data_.insert(data_.end(), row, row + width);
    ++size_;
  } else {
    std::memcpy(data_.data() + slot * width, row, width * sizeof(float));
  }
  ++added_;
}

void FifoReplay::sample(Rng& rng, int n, std::int64_t* slots) const noexcept {
  for (int i = 0; i < n; ++i) slots[i] = static_cast<std::int64_t>(rng.below(size_));
}

void FifoReplay::gather(const std::int64_t* slots, int n, float* dst) const noexcept {
  const auto width = static_cast<std::size_t>(row_floats_);
  for (int i = 0; i < n; ++i)
    std::memcpy(dst + static_cast<std::size_t>(i) * width, row(static_cast<std::size_t>(slots[i])),
                width * sizeof(float));
}

void FifoReplay::save(ByteWriter& out) const {
  td3_format::write_replay_head(out, {capacity_, row_floats_, size_, added_});
  out.put_bytes(data_.data(), data_.size() * sizeof(float));
}

void FifoReplay::load(ByteReader& in) {
  const td3_format::ReplayHead h = td3_format::read_replay_head(in);
  if (h.capacity != capacity_ || h.width != row_floats_)
    in.fail("replay of capacity " + std::to_string(h.capacity) + " x " + std::to_string(h.width) +
            " floats, expected " + std::to_string(capacity_) + " x " + std::to_string(row_floats_));
  std::vector<float> data(static_cast<std::size_t>(h.size) * static_cast<std::size_t>(h.width));
  in.get_bytes(data.data(), static_cast<std::size_t>(h.row_bytes()));
  data_ = std::move(data);
  size_ = static_cast<std::size_t>(h.size);
  added_ = h.added;
}

}  // namespace ringrl::td3
