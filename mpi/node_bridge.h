// One run across nodes on MPI: `mpirun -np N ringrl train pqt|ga|hiro ...` (docs/cluster.md).
//
// Rank 0 is the learner node: its run driver (learner/run_driver.h) runs its own actors and,
// through MpiRemoteActors, those of every other rank. Every other rank is an actor node: one
// process, run_node_bridge(), which
//   * creates a node-local run segment and starts and supervises the node's actors there, with
//     the same actor code and rings as on one machine (as many actors as the algorithm asks
//     of each node: rank 0's slots, or for HIRO its collectors without the evaluator; each
//     launched as the driver's algorithm launches its global slot, so actors that split work
//     by their place in the run, GA's evaluators, get it);
//   * drains their rings and forwards the records to rank 0 in record batches with a bound on
//     the bytes in flight (mpi/record_link.h): when rank 0 falls behind, the full rings hold
//     the actors back, and nothing is dropped;
//   * publishes every weight blob rank 0 sends into its node's weight channel, maps its
//     channel's versions back to rank 0's for each record it forwards, and grants the work
//     permits rank 0 grants;
//   * reports its actors every second; stops when rank 0 says so, or on SIGINT/SIGTERM.
//
// Messages (besides the job protocol's hello/welcome and the record link's), coded like the
// job messages (mpi/job_messages.h: BridgePlan, BridgeControl, BridgeStatus: magic, version,
// kind, bounded fields), all from rank 0 on one tag, so that they arrive in the order posted:
//   0 -> node  kBridgeControl  first the plan (the actors' launches as ActorLaunch arguments, ring
//                        and blob sizes, the resolved config's text; or stop, when rank 0 has
//                        nothing to run), then weights (rank 0's channel version, the node's
//                        work permits, the run's budget used, the blob), work permits, the
//                        budget used (between publications, at most every few ms; the node
//                        mirrors it into its control block, where HIRO's collectors pace
//                        themselves), and at the end stop
//   node -> 0  kBridgeStatus   actors running, restarts, failed, final (with the signal that
//                        stopped the bridge: rank 0 then stops the run as interrupted)
//
// The work gate holds over the job: rank 0's driver deals the run's units to the participants
// that have room (rank 0's actors, each node; learner/work_dealer.h) and sends each node its
// own permits. A node forwards its records with their node-local unit tags and tells the
// node-local tickets of units its dead actors held; rank 0 maps both to the run's tickets and
// trains the units in ticket order (learner/unit_order.h), so the lag bound (max_lag) is the
// one-machine bound.
//
// Contract:
// * Both sides start with the job protocol's hello (mpi/job_messages.h): a node of another
//   build or with other settings is refused in one line by rank 0 (UsageError), and the node
//   exits with status 2 without a word.
// * MpiRemoteActors is rank 0's learner::ActorSource for the other ranks; check() throws naming a node whose
//   actors all failed, or that said nothing for BridgeSetup::silence (`--node-silence`).
// * One thread (the command's main thread) uses each.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "learner/actor_source.h"
#include "mpi/comm.h"
#include "mpi/record_link.h"
#include "mpi/weight_fanout.h"

namespace ringrl::mpi {

/// A node that says nothing this long is taken for dead, unless `--node-silence` says otherwise.
inline constexpr std::chrono::seconds kNodeSilence{30};
inline constexpr double kMaxNodeSilenceSeconds = 86400;  // the largest bound --node-silence takes

struct BridgeSetup {
  std::uint64_t fingerprint = 0;   // of the settings every rank must share
  std::filesystem::path node_dir;  // where a node writes its copy of the config
  std::chrono::duration<double> silence = kNodeSilence;  // rank 0: a node silent this long is dead
};

class MpiRemoteActors final : public learner::ActorSource {
 public:
  /// Rank 0: every node's hello, checked (UsageError refuses the job).
  MpiRemoteActors(mpi::Comm& comm, const BridgeSetup& setup);
  ~MpiRemoteActors() override;
  std::uint32_t participants() const override { return static_cast<std::uint32_t>(nodes_.size()); }
  std::uint32_t slots() const override { return per_node_ * static_cast<std::uint32_t>(nodes_.size()); }
  void start(const learner::SourcePlan& plan) override;
  std::uint64_t poll(const Take& take) override;
  void publish(const std::byte* blob, std::size_t bytes, std::uint64_t channel_version) override;
  void budget(std::uint64_t used) override;
  void grant(const std::uint64_t* permits) override;
  void check() override;
  void lost_units(std::vector<learner::LostUnit>& out) override;
  std::vector<learner::SourceStats> stats() const override;
  void stop() override;

 private:
  struct Node {
    int rank = 0;
    std::string host;
    std::chrono::steady_clock::time_point heard{};
    std::uint32_t running = 0, restarts = 0;
    bool failed = false, final = false;
    std::uint16_t signal = 0;  // the signal that stopped its bridge (on its final status)
    bool silent = false;       // said nothing for the silence bound
    std::string error;         // on its final status: why its bridge failed
  };
  void receive_status();
  /// Node k's (0-based) permits.
  std::uint64_t share(std::size_t k) const { return k < permits_.size() ? permits_[k] : 0; }

  mpi::Comm& comm_;
  std::vector<Node> nodes_;
  std::unique_ptr<mpi::RecordInbox> inbox_;
  std::unique_ptr<mpi::WeightFanout> fanout_;  // weights and permits, at most one weights message in flight per node
  std::uint32_t first_slot_ = 0, per_node_ = 0;
  std::chrono::steady_clock::duration silence_ = kNodeSilence;
  std::uint64_t budget_ = 0, budget_sent_ = 0;  // the run's budget; what the nodes last heard
  std::chrono::steady_clock::time_point budget_sent_at_{};
  std::chrono::steady_clock::time_point sent_at_{};  // of the last control message to the nodes
  std::vector<std::uint64_t> permits_;   // each node's (grant())
  std::vector<learner::LostUnit> lost_;  // units the nodes' dead actors held, not yet given
  bool started_ = false, stopped_ = false;
};

/// An actor node's life (see the file comment); returns the exit status (0, 1 after an error it
/// told rank 0 as its last word, 2 refused, 130 after SIGINT/SIGTERM). Throws for an error rank
/// 0 cannot hear of (rank 0 stopped answering).
int run_node_bridge(mpi::Comm& comm, const BridgeSetup& setup);

}  // namespace ringrl::mpi
