// The record link of one run across nodes: a node bridge forwards its actors' records to the
// learner's rank in record batches (mpi/record_batch.h), with a bound on the bytes in flight;
// the learner's rank receives them, takes the records, and returns credit.
//
//   node (RecordForwarder)                         learner rank (RecordInbox)
//   drain rings -> batch -> post (kRecordBatch) ->  decode, queue, offer the records
//   in flight = posted - credited <= bound      <-  kRecordCredit: bytes of the batches taken
//
// Flow control is by credit, not by MPI's buffering (a small MPI send completes at once and
// would pile up at the receiver): a forwarder posts a batch only while the bytes it posted and
// was not credited for stay within max_in_flight_bytes. When the learner falls behind, the
// forwarder stops draining; the node's rings fill, and the actors wait on their full rings as
// on one machine: nothing is dropped.
//
// Contract:
// * One thread per object (the bridge's or the driver's main thread), with the Comm.
// * A forwarder pass: begin_pass() takes the credits that arrived; offer() puts each record
//   into the open batch, posting each full batch, and returns false when the bound holds (the
//   record stays in its ring and the pass ends); end_pass(got) posts a partial batch when the
//   pass took nothing or the batch is older than the linger time. A node bridge runs the pass
//   over its ActorPool's drain and stores rank 0's version in each record it offers.
//   pump() is that pass over a vector of readers (common/ring_drain.h), with map_version(v) as
//   the record's version.
// * RecordInbox::poll() offers the records of every batch that arrived, in order per node, to
//   take(node, slot, record) until it returns false; the record refused is offered first on
//   the next poll. A malformed batch throws CorruptData naming the rank and the batch.
// * Messages between two ranks keep their order (MPI's non-overtaking rule), so sequence
//   numbers only detect corruption and a rank of another build.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/ring_drain.h"
#include "common/spsc_ring.h"
#include "mpi/comm.h"
#include "mpi/record_batch.h"
#include "mpi/tags.h"

namespace ringrl::mpi {

struct ForwarderOptions {
  int learner_rank = 0;
  std::size_t batch_bytes = std::size_t{1} << 20;           // one message
  std::uint64_t max_in_flight_bytes = std::uint64_t{8} << 20;  // posted and not credited
  std::chrono::microseconds linger{2000};                    // a partial batch waits at most this
};

/// What a forwarder did (for metrics and benchmarks).
struct ForwarderStats {
  std::uint64_t records = 0, bytes = 0, batches = 0;
  std::uint64_t held_back = 0;        // pumps that stopped at the in-flight bound
  std::uint64_t max_in_flight = 0;    // the largest posted-but-not-credited byte count
};

class RecordForwarder {
 public:
  RecordForwarder(Comm& comm, ForwarderOptions options);
  /// One pass over `readers` (see the contract); returns the records it took from the rings.
  std::uint64_t pump(std::vector<RingReader>& readers, const std::function<std::uint64_t(std::uint64_t)>& map_version);
  /// The parts of a pass (see the contract).
  void begin_pass();
  [[nodiscard]] bool offer(std::uint32_t slot, const RecordView& rec);
  void end_pass(std::uint64_t got);
  /// Posts the open batch (if any) whatever the bound, e.g. before the bridge stops.
  void flush();
  /// Bytes posted and not credited yet.
  std::uint64_t in_flight() const noexcept { return posted_ - credited_; }
  const ForwarderStats& stats() const noexcept { return stats_; }
  /// Records pump() took from each ring so far (index: the reader's position in its vector).
  const std::vector<std::uint64_t>& drained() const noexcept { return drain_.drained(); }

 private:
  void receive_credit();
  bool post_open_batch();

  Comm& comm_;
  ForwarderOptions o_;
  RecordBatchWriter writer_;
  std::uint64_t posted_ = 0, credited_ = 0;
  std::chrono::steady_clock::time_point opened_{};
  RingDrain drain_;  // pump()'s
  bool held_back_ = false;  // this pass stopped at the bound
  ForwarderStats stats_;
};

/// What the learner's rank knows of one node.
struct NodeShape {
  int rank = 0;
  std::uint32_t slots = 0;
  std::uint64_t allowed_types = 0;
  std::uint32_t max_record_bytes = 0;
};

/// Per-node counts (for metrics.csv).
struct InboxStats {
  std::uint64_t records = 0, bytes = 0, batches = 0;
};

class RecordInbox {
 public:
  using Take = std::function<bool(int rank, std::uint32_t slot, const RecordView& record)>;
  RecordInbox(Comm& comm, const std::vector<NodeShape>& nodes);
  /// Receives what arrived and offers it (see the contract); returns the records taken.
  std::uint64_t poll(const Take& take);
  /// Counts per rank.
  const InboxStats& stats(int rank) const { return nodes_.at(rank).stats; }

 private:
  struct Batch {
    std::string bytes;
    std::vector<BatchRecord> records;
    std::size_t next = 0;
  };
  struct Node {
    NodeShape shape;
    std::uint64_t sequence = 0;  // expected next
    std::deque<Batch> queue;
    std::uint64_t consumed = 0, credited = 0;  // bytes of batches taken, and credited to the node
    InboxStats stats;
  };
  void receive();
  void credit(Node& n);

  Comm& comm_;
  std::map<int, Node> nodes_;
};

/// The credit message: the bytes of batches the learner's rank took from the node, in total.
std::string encode_credit(std::uint64_t consumed_bytes);
/// Throws CorruptData naming `from` for anything but a credit message.
std::uint64_t decode_credit(std::string_view bytes, const std::string& from);

}  // namespace ringrl::mpi
