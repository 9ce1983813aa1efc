#include "mpi/record_link.h"

#include <cstring>

#include <fmt/format.h>

#include "common/byte_codec.h"

namespace ringrl::mpi {
namespace {

constexpr std::uint32_t kCreditMagic = 0x44455243;  // "CRED"

struct CreditMessage {
  std::uint32_t magic;
  std::uint32_t reserved;
  std::uint64_t consumed;
};
static_assert(sizeof(CreditMessage) == 16);

}  // namespace

std::string encode_credit(std::uint64_t consumed_bytes) {
  const CreditMessage m{kCreditMagic, 0, consumed_bytes};
  return std::string(reinterpret_cast<const char*>(&m), sizeof m);
}

std::uint64_t decode_credit(std::string_view bytes, const std::string& from) {
  CreditMessage m;
  if (bytes.size() != sizeof m) throw CorruptData(fmt::format("{}: a credit message of {} bytes", from, bytes.size()));
  std::memcpy(&m, bytes.data(), sizeof m);
  if (m.magic != kCreditMagic) throw CorruptData(fmt::format("{}: not a credit message (wrong magic)", from));
  return m.consumed;
}

RecordForwarder::RecordForwarder(Comm& comm, ForwarderOptions options)
    : comm_(comm), o_(options), writer_(static_cast<std::uint32_t>(comm.rank()), options.batch_bytes) {}

void RecordForwarder::receive_credit() {
  while (auto m = comm_.try_receive(kRecordCredit)) {
    const std::uint64_t c = decode_credit(m->bytes, fmt::format("rank {}", m->source));
    if (c > posted_ || c < credited_)
      throw CorruptData(fmt::format("rank {}: credit for {} bytes, {} were posted and {} credited", m->source, c,
                                    posted_, credited_));
    credited_ = c;
  }
  comm_.progress();
}

bool RecordForwarder::post_open_batch() {
  if (writer_.records() == 0) return true;
  const std::uint64_t size = writer_.bytes();
  if (in_flight() + size > o_.max_in_flight_bytes && in_flight() > 0) return false;  // wait for credit
  stats_.records += writer_.records();
  std::string bytes = writer_.take();
  posted_ += size;
  stats_.bytes += size;
  ++stats_.batches;
  stats_.max_in_flight = std::max(stats_.max_in_flight, in_flight());
  comm_.post(o_.learner_rank, kRecordBatch, std::move(bytes));
  return true;
}

void RecordForwarder::begin_pass() {
  receive_credit();
  held_back_ = false;
}

bool RecordForwarder::offer(std::uint32_t slot, const RecordView& rec) {
  if (writer_.records() == 0) opened_ = std::chrono::steady_clock::now();
  if (writer_.append(slot, rec)) return true;
  if (!post_open_batch()) {  // the bound holds: the record stays in its ring
    ++stats_.held_back;
    held_back_ = true;
    return false;
  }
  opened_ = std::chrono::steady_clock::now();
  if (!writer_.append(slot, rec))
    throw std::logic_error(fmt::format("a record of {} bytes does not fit a batch of {}", rec.length, o_.batch_bytes));
  return true;
}

void RecordForwarder::end_pass(std::uint64_t got) {
  if (held_back_) return;  // the bound holds: nothing more goes now
  // Rings empty (or every ring had its turn): a partial batch goes once it lingered, or now when idle.
  if (writer_.records() > 0 && (got == 0 || std::chrono::steady_clock::now() - opened_ >= o_.linger))
    if (!post_open_batch()) ++stats_.held_back;
}

std::uint64_t RecordForwarder::pump(std::vector<RingReader>& readers,
                                    const std::function<std::uint64_t(std::uint64_t)>& map_version) {
  begin_pass();
  const std::uint64_t got = drain_.pass(readers, [&](std::uint32_t i, RecordView rec) {
    if (map_version) rec.version = map_version(rec.version);
    return offer(i, rec);
  });
  end_pass(got);
  return got;
}

void RecordForwarder::flush() {
  if (writer_.records() == 0) return;
  stats_.records += writer_.records();
  const std::uint64_t size = writer_.bytes();
  posted_ += size;
  stats_.bytes += size;
  ++stats_.batches;
  comm_.post(o_.learner_rank, kRecordBatch, writer_.take());
}

RecordInbox::RecordInbox(Comm& comm, const std::vector<NodeShape>& nodes) : comm_(comm) {
  for (const auto& s : nodes) nodes_[s.rank].shape = s;
}

void RecordInbox::receive() {
  while (auto m = comm_.try_receive(kRecordBatch)) {
    const auto it = nodes_.find(m->source);
    if (it == nodes_.end()) throw CorruptData(fmt::format("rank {}: a record batch from a rank with no actors", m->source));
    Node& n = it->second;
    Batch b;
    b.bytes = std::move(m->bytes);
    decode_record_batch(reinterpret_cast<const std::byte*>(b.bytes.data()), b.bytes.size(),
                        {static_cast<std::uint32_t>(n.shape.rank), n.sequence, n.shape.slots, n.shape.allowed_types,
                         n.shape.max_record_bytes},
                        b.records);
    ++n.sequence;
    ++n.stats.batches;
    n.stats.bytes += b.bytes.size();
    n.queue.push_back(std::move(b));  // the views point into the string's heap buffer, which moves with it
  }
}

void RecordInbox::credit(Node& n) {
  if (n.consumed == n.credited) return;
  n.credited = n.consumed;
  comm_.post(n.shape.rank, kRecordCredit, encode_credit(n.consumed));
}

std::uint64_t RecordInbox::poll(const Take& take) {
  receive();
  std::uint64_t taken = 0;
  for (auto& [rank, n] : nodes_) {
    while (!n.queue.empty()) {
      Batch& b = n.queue.front();
      while (b.next < b.records.size()) {
        const BatchRecord& r = b.records[b.next];
        if (!take(rank, r.slot, r.record)) {
          credit(n);
          comm_.progress();
          return taken;
        }
        ++b.next;
        ++taken;
        ++n.stats.records;
      }
      n.consumed += b.bytes.size();
      n.queue.pop_front();
    }
    credit(n);
  }
  comm_.progress();
  return taken;
}

}  // namespace ringrl::mpi
