#include "learner/td3/fifo_replay.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/errors.h"
#include "common/hiro/state_format.h"

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
  out.put(hiro_format::kReplayMagic);
  out.put(hiro_format::kReplayVersion);
  out.put<std::uint64_t>(capacity_);
  out.put<std::int32_t>(row_floats_);
  out.put<std::uint64_t>(size_);
  out.put<std::uint64_t>(added_);
  out.put_bytes(data_.data(), data_.size() * sizeof(float));
}

void FifoReplay::load(ByteReader& in) {
  in.expect(hiro_format::kReplayMagic, "replay magic");
  in.expect(hiro_format::kReplayVersion, "replay version");
  const auto capacity = in.get<std::uint64_t>();
  const auto width = in.get<std::int32_t>();
  if (capacity != capacity_ || width != row_floats_)
    in.fail("replay of capacity " + std::to_string(capacity) + " x " + std::to_string(width) + " floats, expected " +
            std::to_string(capacity_) + " x " + std::to_string(row_floats_));
  const auto size = in.get<std::uint64_t>();
  const auto added = in.get<std::uint64_t>();
  if (size > capacity_ || size != std::min<std::uint64_t>(added, capacity_))
    in.fail("replay holds " + std::to_string(size) + " rows after " + std::to_string(added) + " adds");
  const std::uint64_t bytes = size * static_cast<std::uint64_t>(width) * sizeof(float);
  if (bytes > in.remaining())
    in.fail("replay rows need " + std::to_string(bytes) + " bytes, " + std::to_string(in.remaining()) + " left");
  std::vector<float> data(static_cast<std::size_t>(size) * static_cast<std::size_t>(width));
  in.get_bytes(data.data(), static_cast<std::size_t>(bytes));
  data_ = std::move(data);
  size_ = static_cast<std::size_t>(size);
  added_ = added;
}

}  // namespace ringrl::td3
