// The world communicator of an MPI job, behind an interface with no MPI type in it.
//
// Contract:
// * Comm::init() initialises MPI once per process (MPI_Init_thread, MPI_THREAD_SERIALIZED) and
//   returns the one owner; its destructor waits (bounded) for the sends it posted and
//   finalises MPI. Built without MPI, init() throws UsageError(kNoMpi): one line.
// * One thread uses a Comm: the thread that called init() (the command's main thread).
// * Messages are byte strings with a tag. post() is non-blocking (MPI_Isend): the Comm keeps
//   the bytes until the send completes, so no two ranks can deadlock sending to each other;
//   progress() retires completed sends and try_receive() polls without blocking either
//   (MPI_Improbe, then MPI_Imrecv of the whole message, returned once it has all arrived: a
//   sender that hangs mid-message never hangs the receiver, and holds up only its own later
//   messages: each sender has its own message in progress, and the senders are probed in
//   turn). Messages of other tags that arrive meanwhile wait in the Comm for their caller. A
//   message is at most kMaxMessageBytes.
// * Messages between one pair of ranks with one tag arrive in the order they were posted
//   (MPI's non-overtaking rule), asked for by tag or with kAnyTag alike; nothing is promised
//   across tags or senders.
// * start_progress_thread() (rank 0 of a run across nodes, while its learner computes): from
//   then until stop_progress_thread() or the Comm's end, a thread of the Comm's own makes every
//   MPI call, so messages move while the caller's thread is busy for seconds. post() queues the
//   send for it, try_receive() takes what it received, progress(), in_flight() and flush() see
//   the sends it completed: the two threads meet through lock-free single-producer queues
//   (common/spsc_queue.h), and the rest of this contract holds unchanged. The thread polls:
//   with a message in flight it keeps polling (yielding) until 2 ms after its last event, as a
//   large message moves only while both ends call MPI; otherwise it backs off to sleeps of at
//   most 200 us, which a post() cuts short. An MPI error on it is rethrown by the caller's
//   next call. broadcast() and barrier() stop it while they run.
// * abort() ends every rank of the job (MPI_Abort): for a rank that cannot go on and whose
//   peers would otherwise wait for it. forsake() is for a rank that found a peer hung: its
//   destructor then skips MPI_Finalize (which would wait for that peer forever), and the
//   launcher ends the job when this process exits.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace ringrl::mpi {

/// The one line every MPI path says in a build without MPI.
inline constexpr const char* kNoMpi =
    "this build has no MPI: install libopenmpi-dev (scripts/setup.sh) and rebuild with -DRINGRL_WITH_MPI=ON";
/// The largest message post() takes (MPI counts are int; a margin below INT_MAX).
inline constexpr std::uint64_t kMaxMessageBytes = std::uint64_t{1} << 30;
/// Any tag, for try_receive().
inline constexpr int kAnyTag = -1;

/// True when this binary was built with MPI.
bool built_with_mpi() noexcept;

/// One received message.
struct Message {
  int source = -1;
  int tag = -1;
  std::string bytes;
};

class Comm {
 public:
  /// Initialises MPI. Throws UsageError(kNoMpi) without MPI, std::runtime_error if MPI fails.
  static std::unique_ptr<Comm> init();
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const noexcept;
  int size() const noexcept;
  /// This rank's host (MPI_Get_processor_name).
  const std::string& host() const noexcept;

  /// Sends `bytes` to `dest` with `tag` without blocking; returns the send's ticket (see
  /// in_flight()). Throws UsageError above kMaxMessageBytes.
  std::uint64_t post(int dest, int tag, std::string bytes);
  /// True while the send `ticket` names has not completed (as of the last progress()).
  bool in_flight(std::uint64_t ticket) const noexcept;
  /// Retires completed sends; returns how many are still in flight.
  std::size_t progress();
  /// Bytes of the sends still in flight (after the last progress()).
  std::uint64_t bytes_in_flight() const noexcept;
  /// Waits until every posted send completed or `timeout` passed; true when all completed.
  bool flush(std::chrono::milliseconds timeout);
  /// The next message from any rank with `tag` (kAnyTag: any), if one has arrived.
  std::optional<Message> try_receive(int tag = kAnyTag);
  /// Every rank gets root's `bytes` (a collective: every rank calls it; others pass anything).
  std::string broadcast(std::string bytes, int root);
  /// Blocks until every rank called it.
  void barrier();
  /// Ends the whole job with `code`; does not return.
  [[noreturn]] void abort(int code);
  /// A peer is hung: do not finalise MPI at the end (see the contract).
  void forsake() noexcept;
  /// Moves every MPI call onto the Comm's own thread until it ends (see the contract). Returns
  /// false, changing nothing, where MPI gives less than MPI_THREAD_SERIALIZED; true if running.
  bool start_progress_thread();
  /// Ends the progress thread (joins it); its sends and receives become the caller's again.
  void stop_progress_thread() noexcept;
  /// True while the progress thread runs.
  bool progress_thread() const noexcept;

  struct Impl;

 private:
  explicit Comm(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringrl::mpi
