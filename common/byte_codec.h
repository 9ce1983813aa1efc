// The one byte codec for state that leaves a process: checkpoints, saved models, test fixtures.
//
// Contract:
// * ByteWriter appends plain values to a ByteSink; ByteReader reads them back, in the same
//   order, from a ByteSource. Values are trivially copyable types in host byte order (every
//   machine ringrl runs on is little-endian x86-64 or AArch64); strings and vectors carry a
//   u64 length prefix.
// * Sinks and sources stream: nothing here holds more than the value being coded, so a
//   several-hundred-MB replay buffer goes to a file without being assembled in memory.
// * A reader never reads past its source's end and never allocates more than the bytes that
//   remain: a length prefix larger than what is left is reported, not trusted. Every failure
//   throws CorruptData whose message starts with the reader's `what` (e.g. the file and the
//   section), so callers can print it as one line.
// * One thread uses an instance. Sinks and sources are borrowed; they outlive the coder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/errors.h"

namespace ringrl {

/// Where a ByteWriter's bytes go.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  /// Appends `n` bytes. Throws (std::system_error for I/O) on failure.
  virtual void write(const void* data, std::size_t n) = 0;
};

/// Where a ByteReader's bytes come from.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// Bytes left to read.
  virtual std::uint64_t remaining() const = 0;
  /// Copies the next `n` bytes into `dst`; the caller has checked n <= remaining().
  virtual void read(void* dst, std::size_t n) = 0;
};

/// A sink that appends to a string (small states, tests).
class StringSink final : public ByteSink {
 public:
  explicit StringSink(std::string* out) noexcept : out_(out) {}
  void write(const void* data, std::size_t n) override { out_->append(static_cast<const char*>(data), n); }

 private:
  std::string* out_;
};

/// A source over borrowed memory.
class MemorySource final : public ByteSource {
 public:
  MemorySource(const void* data, std::size_t size) noexcept : p_(static_cast<const char*>(data)), left_(size) {}
  explicit MemorySource(std::string_view bytes) noexcept : MemorySource(bytes.data(), bytes.size()) {}
  std::uint64_t remaining() const override { return left_; }
  void read(void* dst, std::size_t n) override {
    std::memcpy(dst, p_, n);
    p_ += n;
    left_ -= n;
  }

 private:
  const char* p_;
  std::size_t left_;
};

class ByteWriter {
 public:
  explicit ByteWriter(ByteSink& sink) noexcept : sink_(&sink) {}

  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>, "put() codes plain values only");
    put_bytes(&v, sizeof v);
  }
  void put_bytes(const void* data, std::size_t n) {
    sink_->write(data, n);
    written_ += n;
  }
  /// u64 length, then the characters.
  void put_string(std::string_view s) {
    put<std::uint64_t>(s.size());
    put_bytes(s.data(), s.size());
  }
  /// u64 count, then the elements.
  template <class T>
  void put_vector(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>, "put_vector() codes plain values only");
    put<std::uint64_t>(v.size());
    put_bytes(v.data(), v.size() * sizeof(T));
  }
  /// Bytes written through this writer.
  std::uint64_t bytes_written() const noexcept { return written_; }

 private:
  ByteSink* sink_;
  std::uint64_t written_ = 0;
};

class ByteReader {
 public:
  /// `what` names the state for error messages, e.g. "checkpoint runs/x/checkpoint.bin, section pqt".
  ByteReader(ByteSource& source, std::string what) : src_(&source), what_(std::move(what)) {}

  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>, "get() decodes plain values only");
    T v;
    get_bytes(&v, sizeof v);
    return v;
  }
  void get_bytes(void* dst, std::size_t n) {
    if (n > src_->remaining())
      fail("truncated: " + std::to_string(n) + " bytes wanted, " + std::to_string(src_->remaining()) + " left");
    src_->read(dst, n);
  }
  /// Reads past `n` bytes (in bounded pieces: a file source is read, not mapped).
  void skip(std::uint64_t n) {
    if (n > src_->remaining())
      fail("truncated: " + std::to_string(n) + " bytes to skip, " + std::to_string(src_->remaining()) + " left");
    char chunk[1 << 16];
    while (n > 0) {
      const std::size_t k = n < sizeof chunk ? static_cast<std::size_t>(n) : sizeof chunk;
      src_->read(chunk, k);
      n -= k;
    }
  }
  /// A length-prefixed string of at most `max_len` characters.
  std::string get_string(std::uint64_t max_len = UINT64_MAX) {
    const auto n = get_length(1, max_len, "string");
    std::string s(n, '\0');
    get_bytes(s.data(), n);
    return s;
  }
  /// A count-prefixed vector of at most `max_count` elements.
  template <class T>
  std::vector<T> get_vector(std::uint64_t max_count = UINT64_MAX) {
    std::vector<T> v;
    get_vector_into(v, max_count);
    return v;
  }
  template <class T>
  void get_vector_into(std::vector<T>& v, std::uint64_t max_count = UINT64_MAX) {
    static_assert(std::is_trivially_copyable_v<T>, "get_vector() decodes plain values only");
    const auto n = get_length(sizeof(T), max_count, "vector");
    v.resize(n);
    get_bytes(v.data(), n * sizeof(T));
  }
  /// Reads a value and checks it equals `expected` (magics, versions, shapes).
  template <class T>
  void expect(const T& expected, const char* name) {
    const T got = get<T>();
    if (std::memcmp(&got, &expected, sizeof(T)) != 0) fail(std::string(name) + " does not match");
  }
  std::uint64_t remaining() const { return src_->remaining(); }
  /// Fails unless every byte was read.
  void expect_end() const {
    if (src_->remaining() != 0) fail(std::to_string(src_->remaining()) + " unread bytes at the end");
  }
  const std::string& what() const noexcept { return what_; }
  /// Throws CorruptData("<what>: <why>").
  [[noreturn]] void fail(const std::string& why) const { throw CorruptData(what_ + ": " + why); }

 private:
  std::size_t get_length(std::size_t elem_bytes, std::uint64_t max_count, const char* kind) {
    const auto n = get<std::uint64_t>();
    if (n > max_count)
      fail(std::string(kind) + " of " + std::to_string(n) + " elements, at most " + std::to_string(max_count) +
           " expected");
    if (elem_bytes != 0 && n > src_->remaining() / elem_bytes)
      fail(std::string(kind) + " of " + std::to_string(n) + " elements is longer than the " +
           std::to_string(src_->remaining()) + " bytes left");
    return static_cast<std::size_t>(n);
  }

  ByteSource* src_;
  std::string what_;
};

}  // namespace ringrl
