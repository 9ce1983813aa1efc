// Record batches: how a node bridge forwards its actors' records to the learner's rank in one
// message per batch (one run across nodes, docs/cluster.md).
//
//   BatchHeader | RecordFrame 0 | payload 0 (padded to 16) | RecordFrame 1 | ...
//
// The bridge drains its node's rings and appends each record, with the node-local actor slot
// it came from, to a RecordBatchWriter; the learner's rank decodes the message with
// decode_record_batch() and takes the records as it takes those of its own rings.
//
// Contract:
// * Everything is host byte order (every machine ringrl runs on is little-endian); the header
//   carries a magic and a layout version, so a rank of another build is refused.
// * decode_record_batch() treats the bytes as untrusted: it reads only inside [data, data +
//   size), checks the magic, layout version, sending node, sequence number, the record count
//   and payload size against the message size, and for each record its slot (< slots), type
//   (in the allowed mask, never padding), length (<= max_record_bytes) and that its frame ends
//   inside the message; the records must fill the message exactly. Any failure throws
//   CorruptData("rank R: record batch S: ..."), one line. The views it returns point into
//   `data` and live as long as it does.
// * RecordBatchWriter is one thread's; append() never exceeds the capacity it was given
//   (it returns false when the record does not fit: send the batch, then start the next).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "common/spsc_ring.h"

namespace ringrl::mpi {

inline constexpr std::uint32_t kBatchMagic = 0x54414252;  // "RBAT"
inline constexpr std::uint16_t kBatchLayoutVersion = 2;  // 2: frames carry the record's unit tag
inline constexpr std::uint32_t kBatchAlign = 16;  // frames and payloads start 16-byte aligned, as in a ring

struct BatchHeader {
  std::uint32_t magic;
  std::uint16_t layout_version;
  std::uint16_t reserved;
  std::uint32_t node;            // the sending rank
  std::uint32_t records;         // frames that follow
  std::uint64_t sequence;        // 0, 1, 2, ... per sending node
  std::uint64_t payload_bytes;   // bytes after this header
};
static_assert(std::is_trivially_copyable_v<BatchHeader> && std::is_standard_layout_v<BatchHeader>);
static_assert(sizeof(BatchHeader) == 32);

struct RecordFrame {
  std::uint32_t slot;     // the node-local actor slot
  std::uint32_t length;   // payload bytes
  std::uint16_t type;     // record type (never padding)
  std::uint16_t unit;     // the ring frame's unit tag (common/spsc_ring.h)
  std::uint32_t reserved;
  std::uint64_t version;  // weights version the record was made with (the learner's channel)
  std::uint64_t reserved2;
};
static_assert(std::is_trivially_copyable_v<RecordFrame> && std::is_standard_layout_v<RecordFrame>);
static_assert(sizeof(RecordFrame) == 32 && sizeof(RecordFrame) % kBatchAlign == 0);
static_assert(sizeof(BatchHeader) % kBatchAlign == 0);

/// Bytes a record of `payload` bytes takes in a batch.
constexpr std::uint64_t batch_frame_bytes(std::uint64_t payload) noexcept {
  return sizeof(RecordFrame) + ((payload + kBatchAlign - 1) & ~std::uint64_t{kBatchAlign - 1});
}

/// One decoded record: its node-local slot and a view into the message.
struct BatchRecord {
  std::uint32_t slot = 0;
  RecordView record;
};

/// What a decoder accepts from one node.
struct BatchLimits {
  std::uint32_t node = 0;              // the rank the message came from
  std::uint64_t sequence = 0;          // the sequence number expected next from it
  std::uint32_t slots = 0;             // actor slots of that node
  std::uint64_t allowed_types = 0;     // record_type_bit() mask
  std::uint32_t max_record_bytes = 0;  // payload limit
};

/// Decodes one message (see the contract); appends its records to `out` (cleared first).
void decode_record_batch(const std::byte* data, std::size_t size, const BatchLimits& limits,
                         std::vector<BatchRecord>& out);

class RecordBatchWriter {
 public:
  /// A batch of node `node` of at most `capacity` bytes (at least one header and one frame).
  RecordBatchWriter(std::uint32_t node, std::size_t capacity);
  /// Starts batch number `sequence` (drops what the writer held).
  void begin(std::uint64_t sequence);
  /// Appends a record; false (and nothing appended) when it does not fit.
  [[nodiscard]] bool append(std::uint32_t slot, const RecordView& record);
  std::uint32_t records() const noexcept { return records_; }
  std::size_t bytes() const noexcept { return bytes_.size(); }
  /// The finished message (header completed); the writer is empty until the next begin().
  std::string take();

 private:
  std::uint32_t node_;
  std::size_t capacity_;
  std::uint64_t sequence_ = 0;
  std::uint32_t records_ = 0;
  std::string bytes_;
};

}  // namespace ringrl::mpi
