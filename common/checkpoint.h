// Checkpoint files: one file per run holding an algorithm's whole state in named sections.
//
// Contract:
// * CheckpointWriter streams sections into `<path>.tmp` and commit() makes them `path` at
//   once: fsync of the file, rename over `path`, fsync of the directory. A crash, an
//   exception or a writer destroyed without commit() leaves `path` as it was (old file or
//   none) and removes the temp file. Nothing holds more than one I/O buffer (kCheckpointIoBytes)
//   of a section, so a several-hundred-MB replay buffer is never assembled in memory.
// * CheckpointReader checks the whole file in its constructor, in one streaming pass, before
//   any state is decoded: magic, format version, end record, checksum, section table,
//   algorithm. Every problem is a CorruptData (a runtime failure: the CLI prints it as one
//   line and exits 1) whose message is "checkpoint <path>: <what is wrong>", e.g.
//     checkpoint runs/a/checkpoint.bin: truncated: 4096 bytes, its end record is missing
//     checkpoint runs/a/checkpoint.bin: format version 2 (from a newer build); this build reads version 1
//     checkpoint runs/a/checkpoint.bin: checksum mismatch (stored 0x..., computed 0x...): the file is damaged
//     checkpoint runs/a/checkpoint.bin: written by algorithm 'hiro', expected 'pqt'
//   Section readers fail the same way with "checkpoint <path>, section <name>: ...".
//   OS failures (a missing file included) are std::system_error with errno.
// * One thread uses an instance. Section writers and readers are borrowed from their
//   checkpoint object and valid until its next section() (or commit()) call.
//
// On-disk layout, format version 1 (host byte order: little-endian on every machine ringrl
// runs on; u64 strings are a u64 length then the bytes):
//
//   offset        bytes  field
//   0             8      magic "RINGRLCK"
//   8             4      u32 format version (kCheckpointFormatVersion)
//   12            8+n    algorithm name, u64 string (1..kCheckpointMaxNameBytes bytes)
//   H             ...    section payloads, back to back, in the order they were written
//   T             ...    section table: u64 count, then per section a u64 string name and its
//                        u64 payload bytes (payload offsets follow: H, H + len0, ...)
//   end - 32      8      u64 T, the offset of the section table
//   end - 24      8      u64 file bytes, this end record included
//   end - 16      8      u64 checksum: FNV-1a 64 of every byte before it, [0, end - 16)
//   end - 8       8      end magic "RINGRLEN"
//
// The table and end record come last so the writer only appends. An interrupted or cut file
// lacks the end record (or disagrees with its byte count) and reads as truncated; any other
// damage changes the FNV-1a 64 checksum (a single changed byte always does).
// docs/checkpoints.md describes the format for users.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/byte_codec.h"

namespace ringrl {

/// The layout above. Bumped whenever it changes; readers refuse every other version.
inline constexpr std::uint32_t kCheckpointFormatVersion = 1;
/// Longest algorithm or section name, in bytes.
inline constexpr std::size_t kCheckpointMaxNameBytes = 255;
/// Bytes a checkpoint writer or reader buffers between the file and its coder.
inline constexpr std::size_t kCheckpointIoBytes = std::size_t{1} << 20;

/// Writes one checkpoint file (see the contract above).
class CheckpointWriter {
 public:
  /// Creates `path` + ".tmp" next to `path` and writes the header (std::system_error on I/O
  /// failure). `algorithm` is 1..kCheckpointMaxNameBytes bytes (std::invalid_argument).
  CheckpointWriter(std::filesystem::path path, std::string algorithm);
  /// Removes the temp file unless commit() ran; `path` keeps its old contents.
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  /// Ends the open section (if any) and starts section `name` (1..kCheckpointMaxNameBytes
  /// bytes, unique per file; std::invalid_argument otherwise); the returned writer streams
  /// into the file and stays valid until the next section() or commit().
  ByteWriter& section(const std::string& name);

  /// Ends the last section, writes the section table and the checksum, fsyncs, renames the
  /// temp file over `path`, fsyncs the directory. After commit() the file is complete or
  /// absent. section() or commit() after commit() throw std::logic_error.
  void commit();

  const std::filesystem::path& path() const;
  /// `path` + ".tmp".
  const std::filesystem::path& temp_path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Reads and verifies one checkpoint file (see the contract above).
class CheckpointReader {
 public:
  /// Opens `path` and verifies magic, format version, end record, checksum and section table
  /// (reading the file once, streaming); `expected_algorithm` empty = accept any. Throws
  /// CorruptData "checkpoint <path>: <what is wrong>" (truncated, checksum mismatch, not a
  /// ringrl checkpoint, a checkpoint of an older build, format version N (this build reads 1),
  /// written by algorithm 'x', expected 'y'). A missing file is std::system_error (ENOENT):
  /// callers check existence first.
  CheckpointReader(std::filesystem::path path, const std::string& expected_algorithm);
  ~CheckpointReader();
  CheckpointReader(const CheckpointReader&) = delete;
  CheckpointReader& operator=(const CheckpointReader&) = delete;

  const std::filesystem::path& path() const;
  const std::string& algorithm() const;
  std::uint32_t format_version() const;
  /// Section names in file order.
  std::vector<std::string> section_names() const;
  bool has_section(const std::string& name) const;
  /// Payload bytes of section `name`; CorruptData if the section is missing.
  std::uint64_t section_bytes(const std::string& name) const;

  /// A streaming reader over section `name`, bounded to its length (reads from the file,
  /// never loads the section whole); CorruptData if the section is missing. Its errors read
  /// "checkpoint <path>, section <name>: ...". Valid until the next call.
  ByteReader& section(const std::string& name);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringrl
