// mpi/record_batch.h: records round-trip through a batch with their slot, type, version and
// bytes (payloads 16-byte aligned, as in a ring); the writer never passes its capacity; the
// decoder refuses every malformed batch in one line and never reads past the message (every
// truncation, every header field, and a fuzz of random mutations whose accepted results must
// lie inside the message).
#include "mpi/record_batch.h"

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/byte_codec.h"

namespace ringrl::mpi {
namespace {

constexpr std::uint32_t kNode = 3;
constexpr std::uint32_t kSlots = 4;
constexpr std::uint64_t kTypes = (std::uint64_t{1} << 1) | (std::uint64_t{1} << 5);
constexpr std::uint32_t kMaxRecord = 4096;
constexpr int kFuzzRounds = 50000;

BatchLimits limits(std::uint64_t sequence = 0) { return {kNode, sequence, kSlots, kTypes, kMaxRecord}; }

struct Sample {
  std::uint32_t slot;
  std::uint16_t type;
  std::uint64_t version;
  std::string bytes;
};

std::vector<Sample> samples() {
  std::vector<Sample> v;
  const std::size_t lengths[] = {0, 1, 15, 16, 17, 100, 1000, kMaxRecord};
  std::uint32_t i = 0;
  for (std::size_t n : lengths) {
    std::string b(n, '\0');
    for (std::size_t k = 0; k < n; ++k) b[k] = static_cast<char>(k * 31 + i);
    v.push_back({i % kSlots, static_cast<std::uint16_t>(i % 2 ? 5 : 1), 1000 + i, b});
    ++i;
  }
  return v;
}

std::string batch_of(const std::vector<Sample>& recs, std::uint64_t sequence = 0) {
  RecordBatchWriter w(kNode, 1 << 20);
  w.begin(sequence);
  for (const auto& s : recs) {
    const RecordView v{s.type, s.version, reinterpret_cast<const std::byte*>(s.bytes.data()),
                       static_cast<std::uint32_t>(s.bytes.size())};
    EXPECT_TRUE(w.append(s.slot, v));
  }
  return w.take();
}

// Decodes from a heap copy of exactly `bytes` (AddressSanitizer sees any read past it).
void decode(const std::string& bytes, const BatchLimits& l, std::vector<BatchRecord>& out) {
  auto copy = std::make_unique<std::byte[]>(bytes.size() + (bytes.empty() ? 1 : 0));
  std::memcpy(copy.get(), bytes.data(), bytes.size());
  decode_record_batch(copy.get(), bytes.size(), l, out);
  for (const auto& r : out) {  // every view lies inside the message
    ASSERT_GE(r.record.data, copy.get());
    ASSERT_LE(r.record.data + r.record.length, copy.get() + bytes.size());
  }
  out.clear();  // the views die with the copy
}

TEST(RecordBatch, RecordsRoundTripAligned) {
  const auto recs = samples();
  const std::string b = batch_of(recs);
  std::vector<BatchRecord> out;
  decode_record_batch(reinterpret_cast<const std::byte*>(b.data()), b.size(), limits(), out);
  ASSERT_EQ(out.size(), recs.size());
  for (std::size_t i = 0; i < recs.size(); ++i) {
    EXPECT_EQ(out[i].slot, recs[i].slot);
    EXPECT_EQ(out[i].record.type, recs[i].type);
    EXPECT_EQ(out[i].record.version, recs[i].version);
    ASSERT_EQ(out[i].record.length, recs[i].bytes.size());
    EXPECT_EQ(std::memcmp(out[i].record.data, recs[i].bytes.data(), recs[i].bytes.size()), 0) << i;
    EXPECT_EQ((reinterpret_cast<const char*>(out[i].record.data) - b.data()) % kBatchAlign, 0) << i;
  }
  std::uint64_t expected = sizeof(BatchHeader);
  for (const auto& s : recs) expected += batch_frame_bytes(s.bytes.size());
  EXPECT_EQ(b.size(), expected);
}

TEST(RecordBatch, TheWriterKeepsToItsCapacityAndNumbersItsBatches) {
  const std::size_t capacity = sizeof(BatchHeader) + 3 * batch_frame_bytes(100);
  RecordBatchWriter w(kNode, capacity);
  const std::string payload(100, 'x');
  const RecordView v{1, 7, reinterpret_cast<const std::byte*>(payload.data()), 100};
  EXPECT_TRUE(w.append(0, v));
  EXPECT_TRUE(w.append(1, v));
  EXPECT_TRUE(w.append(2, v));
  EXPECT_FALSE(w.append(3, v)) << "a fourth does not fit";
  EXPECT_EQ(w.bytes(), capacity);
  const std::string first = w.take();
  EXPECT_EQ(w.records(), 0u);
  EXPECT_TRUE(w.append(3, v));
  const std::string second = w.take();
  std::vector<BatchRecord> out;
  decode_record_batch(reinterpret_cast<const std::byte*>(first.data()), first.size(), limits(0), out);
  EXPECT_EQ(out.size(), 3u);
  decode_record_batch(reinterpret_cast<const std::byte*>(second.data()), second.size(), limits(1), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].slot, 3u);
  EXPECT_THROW(decode_record_batch(reinterpret_cast<const std::byte*>(second.data()), second.size(), limits(0), out),
               CorruptData)
      << "a batch out of sequence (lost or repeated) is refused";
  EXPECT_THROW(RecordBatchWriter(kNode, sizeof(BatchHeader)), std::invalid_argument);
}

TEST(RecordBatch, EveryTruncationAndTrailingByteIsRefused) {
  const std::string b = batch_of(samples());
  std::vector<BatchRecord> out;
  for (std::size_t n = 0; n < b.size(); ++n)
    EXPECT_THROW(decode(b.substr(0, n), limits(), out), CorruptData) << n;
  EXPECT_THROW(decode(b + std::string(16, '\0'), limits(), out), CorruptData);
  EXPECT_NO_THROW(decode(b, limits(), out));
}

// Each field of a header or frame, set to a value the limits refuse, gives one line naming it.
TEST(RecordBatch, BadFieldsAreRefusedNamingTheNodeAndTheBatch) {
  const std::vector<Sample> one = {{1, 5, 9, std::string(40, 'a')}};
  std::vector<BatchRecord> out;
  auto refuses = [&](std::size_t offset, const void* value, std::size_t n, const char* says) {
    std::string b = batch_of(one);
    std::memcpy(b.data() + offset, value, n);
    try {
      decode(b, limits(), out);
      ADD_FAILURE() << "accepted: " << says;
    } catch (const CorruptData& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("rank 3: record batch 0: ", 0), 0u) << what;
      EXPECT_NE(what.find(says), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos);
    }
  };
  const std::uint32_t bad32 = 0xdead;
  const std::uint16_t bad16 = 99, type_off = 3, padding = 0;
  const std::uint64_t bad64 = 77;
  refuses(offsetof(BatchHeader, magic), &bad32, 4, "wrong magic");
  refuses(offsetof(BatchHeader, layout_version), &bad16, 2, "layout version 99");
  refuses(offsetof(BatchHeader, node), &bad32, 4, "says it comes from rank");
  refuses(offsetof(BatchHeader, sequence), &bad64, 8, "numbered 77");
  refuses(offsetof(BatchHeader, payload_bytes), &bad64, 8, "announces 77 payload bytes");
  refuses(offsetof(BatchHeader, records), &bad32, 4, "announces 57005 records");
  const std::size_t frame = sizeof(BatchHeader);
  refuses(frame + offsetof(RecordFrame, slot), &bad32, 4, "actor slot 57005");
  refuses(frame + offsetof(RecordFrame, type), &type_off, 2, "record type 3");
  refuses(frame + offsetof(RecordFrame, type), &padding, 2, "record type 0");
  refuses(frame + offsetof(RecordFrame, length), &bad32, 4, "57005 payload bytes, at most 4096");
  const std::uint32_t longer = 49;  // fits the limits, not the message (40 bytes pad to 48)
  refuses(frame + offsetof(RecordFrame, length), &longer, 4, "pass the end of the message");
  const std::uint32_t zero = 0;  // the count says none: the frame is left over
  refuses(offsetof(BatchHeader, records), &zero, 4, "bytes after its last record");
}

// Random mutations of valid batches: decoded or refused, never a read outside the message.
TEST(RecordBatch, FuzzedBatchesDecodeInsideTheMessageOrAreRefused) {
  std::mt19937_64 rng(22);
  const std::string valid = batch_of(samples());
  std::vector<BatchRecord> out;
  std::size_t refused = 0;
  for (int round = 0; round < kFuzzRounds; ++round) {
    std::string b = valid;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits && !b.empty(); ++k) {
      // Aim half of the edits at the header and the first frames, where the lengths live.
      const std::size_t span = (rng() & 1) ? std::min<std::size_t>(b.size(), 160) : b.size();
      const std::size_t at = rng() % span;
      switch (rng() % 5) {
        case 0: b[at] = static_cast<char>(b[at] ^ (1 << (rng() % 8))); break;
        case 1: b[at] = static_cast<char>((rng() & 1) ? 0xff : 0x00); break;
        case 2: b.resize(at); break;
        case 3: b.insert(at, 1 + rng() % 16, static_cast<char>(rng())); break;
        default: {  // a random 32-bit value over a field
          const std::uint32_t v = static_cast<std::uint32_t>(rng());
          if (at + 4 <= b.size()) std::memcpy(b.data() + at, &v, 4);
        }
      }
    }
    try {
      decode(b, limits(), out);
    } catch (const CorruptData&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, static_cast<std::size_t>(kFuzzRounds / 2));
}

}  // namespace
}  // namespace ringrl::mpi
