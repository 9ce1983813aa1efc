// TensorBoard event-file writer (scalars only), written from the public file format.
//
// Contract:
// * TbWriter(dir) creates `dir` if needed and a new file
//   `events.out.tfevents.<unix_seconds>.<hostname>` in it (a `.<n>` suffix is added if that
//   name is taken, so two writers never share a file). The first record is the
//   `file_version: "brain.Event:2"` event.
// * Records use the TFRecord framing:
//     uint64 length (LE) | uint32 masked_crc32c(length bytes) | data | uint32 masked_crc32c(data)
//   with masked(c) = ((c >> 15) | (c << 17)) + 0xa282ead8 (mod 2^32).
// * add_scalar() encodes Event{wall_time=1 (double), step=2 (int64),
//   summary=5 {value=1 {tag=1 (string), simple_value=2 (float)}}} and buffers it; flush()
//   pushes buffered records to the OS (readers see them after flush). The destructor
//   flushes and never throws.
// * OS failures throw std::system_error naming the file; an empty tag is a UsageError.
// * Not thread-safe: one writer per thread, or lock around it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ringrl::runfiles {

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78). `crc` continues a previous result:
/// crc32c(ab) == crc32c(b, crc32c(a)).
uint32_t crc32c(std::string_view data, uint32_t crc = 0);

/// The TFRecord masking of a CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t mask_crc(uint32_t crc);

/// masked CRC-32C of `data`.
inline uint32_t masked_crc32c(std::string_view data) { return mask_crc(crc32c(data)); }

/// One TFRecord frame around `data` (length, masked CRCs).
std::string tf_record(std::string_view data);

/// Protobuf encodings of the two event kinds this writer emits (exposed for tests).
std::string encode_file_version_event(double wall_time);
std::string encode_scalar_event(std::string_view tag, int64_t step, float value, double wall_time);

/// Seconds since the Unix epoch, with sub-second precision.
double unix_time_now();

class TbWriter {
 public:
  explicit TbWriter(const std::filesystem::path& dir);
  ~TbWriter();

  TbWriter(const TbWriter&) = delete;
  TbWriter& operator=(const TbWriter&) = delete;

  /// Buffers one scalar; wall_time defaults to unix_time_now().
  void add_scalar(std::string_view tag, int64_t step, float value, std::optional<double> wall_time = std::nullopt);

  /// Writes buffered records to the OS (not fsync).
  void flush();

  const std::filesystem::path& file_path() const { return path_; }

 private:
  void write_record(std::string_view data);

  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

}  // namespace ringrl::runfiles
