// FifoReplay: the TD3 replay buffer of spec hiro.md §3/§8: a FIFO ring of fixed-width float
// rows with uniform sampling, with replacement, over the filled part.
//
// Contract:
// * Rows are row_floats() floats each (the HIRO record float blocks are rows as they are).
//   add() writes slot added() % capacity(), overwriting the oldest row once full. Memory grows
//   with the rows held, up to capacity() x row_floats() floats.
// * sample() draws slots uniformly from [0, size()) with the caller's Rng; gather() copies
//   rows by slot into a caller buffer (e.g. pinned host staging for the device).
// * save()/load() code the rows, the write position and the add count with ByteWriter /
//   ByteReader, streaming. load() requires the same capacity and row width as this buffer
//   (a checkpoint of another configuration throws CorruptData) and replaces the contents.
// * Torch-free. One thread uses an instance. Bad construction arguments throw UsageError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/byte_codec.h"
#include "learner/td3/defaults.h"
#include "common/rng.h"

namespace ringrl::td3 {

class FifoReplay {
 public:
  /// capacity >= 1 and row_floats >= 1, else UsageError.
  FifoReplay(std::size_t capacity, int row_floats);

  /// Appends one row (row_floats() floats), overwriting the oldest when full.
  void add(const float* row);

  /// Rows held: min(added(), capacity()).
  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return capacity_; }
  int row_floats() const noexcept { return row_floats_; }
  /// Rows ever added.
  std::uint64_t added() const noexcept { return added_; }
  bool empty() const noexcept { return size_ == 0; }

  /// The row in `slot` (< size()); slot = (add index) mod capacity.
  const float* row(std::size_t slot) const noexcept {
    return data_.data() + slot * static_cast<std::size_t>(row_floats_);
  }

  /// Writes `n` slots drawn uniformly with replacement. Precondition: !empty().
  void sample(Rng& rng, int n, std::int64_t* slots) const noexcept;
  /// Copies the rows of `n` slots into `dst` (n x row_floats() floats, row-major).
  void gather(const std::int64_t* slots, int n, float* dst) const noexcept;

  void save(ByteWriter& out) const;
  void load(ByteReader& in);

 private:
  std::size_t capacity_;
  int row_floats_;
  std::size_t size_ = 0;
  std::uint64_t added_ = 0;
  std::vector<float> data_;  // size_ rows, slot-major
};

}  // namespace ringrl::td3
