// WeightFanout: rank 0's weights to the nodes of one run across nodes, bounded: at most one
// weights message in flight per node, whatever the publication rate.
//
// A publication that finds a node's previous weights still on their way marks the node
// behind: it gets only the newest weights, once that send has completed (the newest wins), and
// its work permits wait to go with them. A node therefore never claims work its newest weights
// do not cover (the order the max_lag bound rests on: weights, then the permits they allow),
// and a slow node takes rank 0's weights at the pace of its own link instead of queueing every
// publication. Rank 0 holds one copy of the newest blob, not one per node and publication.
//
// Contract:
// * Messages go on `tag` as job messages (mpi/job_messages.h): weights as encode_weights()
//   with the node's permits and the run's budget, permits as encode_count(kPermits). On one
//   (rank, tag) pair MPI keeps them in the order posted.
// * publish() sends the newest weights to every node not behind; grant() the permits to every
//   node not behind; pump() the newest weights (with the permits of that moment) to every node
//   behind whose previous weights arrived. Call pump() often (each learner loop).
// * `permits(k)` gives node k's permits (0-based, in the order of `ranks`).
// * One thread uses an instance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "mpi/comm.h"

namespace ringrl::mpi {

class WeightFanout {
 public:
  using Permits = std::function<std::uint64_t(std::size_t node)>;

  WeightFanout(Comm& comm, std::vector<int> ranks, int tag);

  void publish(const std::byte* blob, std::size_t bytes, std::uint64_t channel_version, std::uint64_t budget,
               const Permits& permits);
  void grant(const Permits& permits);
  void pump(const Permits& permits);

  /// Nodes waiting for their previous weights to arrive.
  std::size_t behind() const noexcept;
  /// Weights messages of this fan-out in flight (at most one per node).
  std::size_t weights_in_flight() const noexcept;
  /// Weights messages posted so far, and their bytes (what rank 0 sent for the weights).
  std::uint64_t weights_sent() const noexcept { return weights_sent_; }
  std::uint64_t bytes_sent() const noexcept { return bytes_sent_; }

 private:
  struct Node {
    int rank = 0;
    std::uint64_t ticket = 0;  // of its last weights message (0: none)
    bool behind = false;       // it has not had the newest weights yet
  };
  void send_weights(std::size_t k, const Permits& permits);

  Comm& comm_;
  int tag_;
  std::vector<Node> nodes_;
  std::vector<std::byte> blob_;  // the newest weights
  std::uint64_t version_ = 0, budget_ = 0;
  std::uint64_t weights_sent_ = 0, bytes_sent_ = 0;
  bool published_ = false;
};

}  // namespace ringrl::mpi
