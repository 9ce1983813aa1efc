#include "mpi/record_batch.h"

#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "common/byte_codec.h"

namespace ringrl::mpi {

void decode_record_batch(const std::byte* data, std::size_t size, const BatchLimits& limits,
                         std::vector<BatchRecord>& out) {
  out.clear();
  const auto fail = [&](const std::string& why) {
    throw CorruptData(fmt::format("rank {}: record batch {}: {}", limits.node, limits.sequence, why));
  };
  if (size < sizeof(BatchHeader)) fail(fmt::format("{} bytes, shorter than its {}-byte header", size, sizeof(BatchHeader)));
  BatchHeader h;
  std::memcpy(&h, data, sizeof h);
  if (h.magic != kBatchMagic) fail("not a record batch (wrong magic)");
  if (h.layout_version != kBatchLayoutVersion)
    fail(fmt::format("layout version {}, expected {} (ranks run different ringrl builds)", h.layout_version,
                     kBatchLayoutVersion));
  if (h.node != limits.node) fail(fmt::format("says it comes from rank {}", h.node));
  if (h.sequence != limits.sequence) fail(fmt::format("numbered {}: a batch was lost or repeated", h.sequence));
  if (h.payload_bytes != size - sizeof(BatchHeader))
    fail(fmt::format("announces {} payload bytes in a message of {}", h.payload_bytes, size));
  // Each record takes at least one frame: a count beyond that cannot be true (and bounds `out`).
  if (h.records > (size - sizeof(BatchHeader)) / sizeof(RecordFrame))
    fail(fmt::format("announces {} records in {} bytes", h.records, size));
  out.reserve(h.records);
  std::size_t at = sizeof(BatchHeader);
  for (std::uint32_t i = 0; i < h.records; ++i) {
    const auto bad = [&](const std::string& why) { fail(fmt::format("record {}: {}", i, why)); };
    if (size - at < sizeof(RecordFrame)) bad("its frame passes the end of the message");
    RecordFrame f;
    std::memcpy(&f, data + at, sizeof f);
    if (f.slot >= limits.slots) bad(fmt::format("actor slot {}, the node has {}", f.slot, limits.slots));
    if (f.type == kPaddingRecordType || f.type > kMaxRecordType ||
        (limits.allowed_types & (std::uint64_t{1} << f.type)) == 0)
      bad(fmt::format("record type {} is not one this run takes", f.type));
    if (f.length > limits.max_record_bytes)
      bad(fmt::format("{} payload bytes, at most {}", f.length, limits.max_record_bytes));
    const std::uint64_t frame = batch_frame_bytes(f.length);
    if (frame > size - at) bad(fmt::format("{} bytes pass the end of the message", frame));
    out.push_back({f.slot, RecordView{f.type, f.version, data + at + sizeof(RecordFrame), f.length, f.unit}});
    at += frame;
  }
  if (at != size) fail(fmt::format("{} bytes after its last record", size - at));
}

RecordBatchWriter::RecordBatchWriter(std::uint32_t node, std::size_t capacity) : node_(node), capacity_(capacity) {
  if (capacity < sizeof(BatchHeader) + sizeof(RecordFrame))
    throw std::invalid_argument(fmt::format("record batch capacity {}: expected at least {}", capacity,
                                            sizeof(BatchHeader) + sizeof(RecordFrame)));
  bytes_.reserve(capacity);
  begin(0);
}

void RecordBatchWriter::begin(std::uint64_t sequence) {
  sequence_ = sequence;
  records_ = 0;
  bytes_.assign(sizeof(BatchHeader), '\0');
}

bool RecordBatchWriter::append(std::uint32_t slot, const RecordView& record) {
  const std::uint64_t frame = batch_frame_bytes(record.length);
  if (frame > capacity_ - bytes_.size()) return false;
  RecordFrame f{slot, record.length, record.type, record.unit, 0, record.version, 0};
  const std::size_t at = bytes_.size();
  bytes_.resize(at + frame, '\0');  // the padding stays zero
  std::memcpy(bytes_.data() + at, &f, sizeof f);
  if (record.length > 0) std::memcpy(bytes_.data() + at + sizeof f, record.data, record.length);
  ++records_;
  return true;
}

std::string RecordBatchWriter::take() {
  BatchHeader h{kBatchMagic, kBatchLayoutVersion, 0, node_, records_, sequence_, bytes_.size() - sizeof(BatchHeader)};
  std::memcpy(bytes_.data(), &h, sizeof h);
  std::string out = std::move(bytes_);
  bytes_ = std::string();
  bytes_.reserve(capacity_);
  begin(sequence_ + 1);
  return out;
}

}  // namespace ringrl::mpi
