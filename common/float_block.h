// A block of float32 values as the learners' checkpoint states hold a tensor: u64 count, then
// the values (native byte order, as every section of a checkpoint). The writers (PQT's
// learner, TD3's agents and Adam moments) and every reader (the learners' loads, Python's
// ringrl.checkpoint) use these two, so the block has one definition.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/byte_codec.h"

namespace ringrl {

inline void put_floats(ByteWriter& w, const float* values, std::size_t n) {
  w.put<std::uint64_t>(n);
  w.put_bytes(values, n * sizeof(float));
}

/// Reads a block that must hold exactly `n` values into `dst`; fails naming `what` otherwise.
inline void get_floats(ByteReader& r, float* dst, std::size_t n, const std::string& what) {
  const auto count = r.get<std::uint64_t>();
  if (count != n) r.fail(what + ": " + std::to_string(count) + " values, expected " + std::to_string(n));
  r.get_bytes(dst, n * sizeof(float));
}

/// Skips a block of any length (bounded by what is left); returns its count.
inline std::uint64_t skip_floats(ByteReader& r, const std::string& what) {
  const auto count = r.get<std::uint64_t>();
  if (count > r.remaining() / sizeof(float)) r.fail(what + ": " + std::to_string(count) + " values, past the end");
  r.skip(count * sizeof(float));
  return count;
}

}  // namespace ringrl
