// comm.h on MPI (Open MPI in the builds we test; nothing here is Open MPI-specific).
#include "mpi/comm.h"

// The C API only: Open MPI and MPICH otherwise pull in their deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <list>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "common/backoff.h"
#include "common/errors.h"
#include "common/spsc_queue.h"

namespace ringrl::mpi {
namespace {

constexpr auto kFlushPoll = std::chrono::microseconds(200);  // between tests of pending sends
// The progress thread: queue sizes, and its idle sleeps (doubling from min to max; a post()
// wakes it at once, a message from a peer is seen within the current sleep).
constexpr std::size_t kOutboxSlots = 1024, kDoneSlots = 4096, kInboxSlots = 1024;
constexpr auto kIdleMinSleep = std::chrono::microseconds(20);
constexpr auto kIdleMaxSleep = std::chrono::microseconds(200);
// With a message in flight, the thread polls without sleeping this long after its last event.
constexpr auto kHotPoll = std::chrono::milliseconds(2);

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(fmt::format("MPI: {} failed: {}", what, std::string(text, static_cast<std::size_t>(len))));
}

}  // namespace

struct Comm::Impl {
  struct Pending {
    MPI_Request request = MPI_REQUEST_NULL;
    std::string bytes;  // owned until the send completes; never moved (a list node)
    std::uint64_t ticket = 0;
  };
  int rank = 0, size = 1;
  int thread_level = MPI_THREAD_SINGLE;  // what MPI_Init_thread provided
  std::string host;
  // A list: a short message lives inside its std::string, and MPI holds its address until the
  // send completes, so no element may move when another is erased.
  std::list<Pending> pending;
  std::uint64_t next_ticket = 1;
  std::uint64_t in_flight = 0;
  // The message matched (MPI_Improbe, any tag) and being received (MPI_Imrecv), per sender: a
  // large message needs its sender's help to arrive, and a sender that hangs in the middle of
  // one holds up its own later messages only. A map: its nodes never move (MPI holds the address
  // of each message's bytes).
  struct Incoming {
    MPI_Request request = MPI_REQUEST_NULL;
    Message message;
  };
  std::map<int, Incoming> incoming;
  int next_source = 0;  // where the next probe round starts (every sender gets its turn first)
  // Messages that arrived and were not asked for yet, in the order they arrived (so each
  // sender's stay in the order it posted them).
  std::deque<Message> received;
  bool forsaken = false;  // a peer is hung: no MPI_Finalize

  // --- the progress thread (start_progress_thread()). While it runs, `pending`, `incoming`
  // and `next_source` are its own; the caller keeps `received`, `posted` and `in_flight`. ---
  struct Outgoing {
    int dest = 0, tag = 0;
    std::uint64_t ticket = 0;
    std::string bytes;
  };
  struct Done {
    std::uint64_t ticket = 0, bytes = 0;
  };
  struct Worker {
    SpscQueue<Outgoing> outbox{kOutboxSlots};  // caller -> thread: sends to post
    SpscQueue<Done> done{kDoneSlots};          // thread -> caller: sends completed
    SpscQueue<Message> inbox{kInboxSlots};     // thread -> caller: messages received
    std::atomic<bool> stop{false}, sleeping{false}, failed{false};
    std::exception_ptr error;  // written before `failed` is set
    std::mutex mutex;          // only for the idle sleep and its wake-up
    std::condition_variable wake;
    std::thread thread;
    // The thread's own:
    std::deque<Done> unreported;   // completed while `done` was full
    std::deque<Message> unqueued;  // received while `inbox` was full
  };
  std::unique_ptr<Worker> worker;
  std::unordered_map<std::uint64_t, std::uint64_t> posted;  // the caller's: ticket -> bytes, not completed

  Pending& isend(int dest, int tag, std::string bytes, std::uint64_t ticket) {
    Pending& p = pending.emplace_back();
    p.bytes = std::move(bytes);
    p.ticket = ticket;
    const int rc =
        MPI_Isend(p.bytes.data(), static_cast<int>(p.bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD, &p.request);
    if (rc != MPI_SUCCESS) {
      pending.pop_back();
      check(rc, "MPI_Isend");
    }
    return p;
  }
  /// Tests every pending send; calls done(p) for each completed one before erasing it.
  template <typename F>
  void retire(F&& done) {
    for (auto it = pending.begin(); it != pending.end();) {
      int complete = 0;
      check(MPI_Test(&it->request, &complete, MPI_STATUS_IGNORE), "MPI_Test");
      if (complete) {
        done(*it);
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
  }
  /// One probe round over the senders, starting one after the last round's first: the first
  /// message that has all arrived, if any.
  std::optional<Message> receive_one() {
    const int first = next_source;
    next_source = (first + 1) % size;
    for (int k = 0; k < size; ++k) {
      const int source = (first + k) % size;
      auto it = incoming.find(source);
      if (it == incoming.end()) {  // match this sender's next message, and start receiving it
        int flag = 0;
        MPI_Message matched;
        MPI_Status status;
        check(MPI_Improbe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &matched, &status), "MPI_Improbe");
        if (!flag) continue;
        int count = 0;
        check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
        it = incoming.emplace(source, Incoming{}).first;
        Message& m = it->second.message;
        m.source = status.MPI_SOURCE;
        m.tag = status.MPI_TAG;
        m.bytes.resize(static_cast<std::size_t>(count));
        check(MPI_Imrecv(m.bytes.data(), count, MPI_BYTE, &matched, &it->second.request), "MPI_Imrecv");
      }
      int done = 0;
      check(MPI_Test(&it->second.request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (!done) continue;  // the rest of it arrives on a later call; the other senders go on
      Message m = std::move(it->second.message);
      incoming.erase(it);
      return m;
    }
    return std::nullopt;
  }
  /// The first message received with `tag` (kAnyTag: any), taken out of `received`.
  std::optional<Message> take(int tag) {
    for (auto it = received.begin(); it != received.end(); ++it)
      if (tag == kAnyTag || it->tag == tag) {
        Message m = std::move(*it);
        received.erase(it);
        return m;
      }
    return std::nullopt;
  }

  /// The progress thread's body: post what was queued, retire completed sends, receive, and
  /// sleep a little when none of the three had anything to do.
  void progress_loop() {
    Worker& w = *worker;
    Backoff idle;  // spins and yields; the sleeps are the loop's own (a post() cuts them short)
    auto sleep = kIdleMinSleep;
    auto last_event = std::chrono::steady_clock::now();
    try {
      while (!w.stop.load(std::memory_order_acquire)) {
        bool busy = false;
        while (auto o = w.outbox.try_pop()) {
          isend(o->dest, o->tag, std::move(o->bytes), o->ticket);
          busy = true;
        }
        retire([&](const Pending& p) {
          w.unreported.push_back({p.ticket, p.bytes.size()});
          busy = true;
        });
        while (!w.unreported.empty() && w.done.try_push(w.unreported.front())) w.unreported.pop_front();
        // At most one message per sender and pass; none while the caller has not made room.
        for (int k = 0; k < size && w.unqueued.empty(); ++k)
          if (auto m = receive_one()) w.unqueued.push_back(std::move(*m));
        while (!w.unqueued.empty() && w.inbox.try_push(w.unqueued.front())) {
          w.unqueued.pop_front();
          busy = true;
        }
        const auto now = std::chrono::steady_clock::now();
        if (busy) {
          idle.reset();
          sleep = kIdleMinSleep;
          last_event = now;
        } else if (idle.polls() < Backoff::kSpinPolls + Backoff::kYieldPolls ||
                   ((!pending.empty() || !incoming.empty()) && now - last_event < kHotPoll)) {
          // A large message moves only while both ends call MPI: with one in flight, no sleep
          // for a while after the last event.
          if (idle.polls() < Backoff::kSpinPolls + Backoff::kYieldPolls)
            idle.pause();
          else
            std::this_thread::yield();
        } else {
          std::unique_lock lock(w.mutex);
          w.sleeping.store(true);  // seq_cst, as post()'s fence: one of the two sees the other
          std::atomic_thread_fence(std::memory_order_seq_cst);
          if (w.outbox.empty() && !w.stop.load()) w.wake.wait_for(lock, sleep);
          w.sleeping.store(false);
          sleep = std::min(2 * sleep, kIdleMaxSleep);
        }
      }
    } catch (...) {
      w.error = std::current_exception();
      w.failed.store(true, std::memory_order_release);
    }
  }
  /// The caller's side: rethrows the thread's error; takes the completions and messages it
  /// handed over.
  void take_from_worker() {
    if (worker->failed.load(std::memory_order_acquire)) std::rethrow_exception(worker->error);
    while (auto d = worker->done.try_pop()) {
      posted.erase(d->ticket);
      in_flight -= d->bytes;
    }
    while (auto m = worker->inbox.try_pop()) received.push_back(std::move(*m));
  }
  /// Ends the progress thread: its sends and receives become the caller's again, as they are.
  void stop_worker() noexcept {
    if (!worker) return;
    {
      std::lock_guard lock(worker->mutex);
      worker->stop.store(true, std::memory_order_release);
    }
    worker->wake.notify_one();
    worker->thread.join();
    while (auto m = worker->inbox.try_pop()) received.push_back(std::move(*m));
    for (auto& m : worker->unqueued) received.push_back(std::move(m));
    while (auto o = worker->outbox.try_pop()) {  // queued, not posted yet: posted now
      try {
        isend(o->dest, o->tag, std::move(o->bytes), o->ticket);
      } catch (const std::exception&) {  // MPI refused the send: it is dropped, as the thread's
      }                                     // own error would have dropped it
    }
    worker.reset();
    posted.clear();
    in_flight = 0;
    for (const auto& p : pending) in_flight += p.bytes.size();
  }
};

bool built_with_mpi() noexcept { return true; }

std::unique_ptr<Comm> Comm::init() {
  int initialized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  if (initialized) throw std::logic_error("MPI is already initialised in this process");
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  // Errors come back as codes (and become exceptions) instead of ending the job silently.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  auto impl = std::make_unique<Impl>();
  impl->thread_level = provided;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &impl->rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &impl->size), "MPI_Comm_size");
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  check(MPI_Get_processor_name(name, &len), "MPI_Get_processor_name");
  impl->host.assign(name, static_cast<std::size_t>(len));
  return std::unique_ptr<Comm>(new Comm(std::move(impl)));
}

Comm::Comm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Comm::~Comm() {
  constexpr auto kFinalFlush = std::chrono::seconds(10);  // a peer that is gone must not hang us
  impl_->stop_worker();
  if (impl_->forsaken || !flush(kFinalFlush)) {
    // Open MPI does not cancel sends: it may still read these buffers, so they are kept (the
    // process is ending) instead of freed under it.
    static auto* kept = new std::list<Impl::Pending>;
    kept->splice(kept->end(), impl_->pending);
  }
  for (auto& [source, in] : impl_->incoming) MPI_Cancel(&in.request);
  if (!impl_->forsaken) MPI_Finalize();
}

int Comm::rank() const noexcept { return impl_->rank; }
int Comm::size() const noexcept { return impl_->size; }
const std::string& Comm::host() const noexcept { return impl_->host; }

std::uint64_t Comm::post(int dest, int tag, std::string bytes) {
  if (bytes.size() > kMaxMessageBytes)
    throw UsageError(fmt::format("a message of {} bytes to rank {}: expected at most {}", bytes.size(), dest,
                                 kMaxMessageBytes));
  const std::uint64_t ticket = impl_->next_ticket;
  const std::uint64_t size = bytes.size();
  if (Impl::Worker* w = impl_->worker.get()) {
    impl_->take_from_worker();
    Impl::Outgoing o{dest, tag, ticket, std::move(bytes)};
    for (Backoff b; !w->outbox.try_push(o);) {  // the thread is a full queue behind: wait for it
      impl_->take_from_worker();
      b.pause();
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the thread's (its idle sleep)
    if (w->sleeping.load()) {
      std::lock_guard lock(w->mutex);
      w->wake.notify_one();
    }
    impl_->posted.emplace(ticket, size);
  } else {
    impl_->isend(dest, tag, std::move(bytes), ticket);
  }
  impl_->in_flight += size;
  ++impl_->next_ticket;
  return ticket;
}

bool Comm::in_flight(std::uint64_t ticket) const noexcept {
  if (impl_->worker) return impl_->posted.count(ticket) != 0;
  for (const auto& p : impl_->pending)
    if (p.ticket == ticket) return true;
  return false;
}

std::size_t Comm::progress() {
  if (impl_->worker) {
    impl_->take_from_worker();
    return impl_->posted.size();
  }
  impl_->retire([&](const Impl::Pending& p) { impl_->in_flight -= p.bytes.size(); });
  return impl_->pending.size();
}

std::uint64_t Comm::bytes_in_flight() const noexcept { return impl_->in_flight; }

bool Comm::flush(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (progress() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kFlushPoll);
  }
  return true;
}

std::optional<Message> Comm::try_receive(int tag) {
  if (impl_->worker) {
    impl_->take_from_worker();
    return impl_->take(tag);
  }
  if (auto m = impl_->take(tag)) return m;
  // One message per sender at most: a sender of other tags cannot keep this call going.
  for (int k = 0; k < impl_->size; ++k) {
    std::optional<Message> m = impl_->receive_one();
    if (!m) break;
    if (tag == kAnyTag || m->tag == tag) return m;
    impl_->received.push_back(std::move(*m));
  }
  return std::nullopt;
}

namespace {
// A collective's MPI calls are the caller's: the progress thread, if it runs, waits them out.
class Paused {
 public:
  explicit Paused(Comm& comm) : comm_(comm), was_(comm.progress_thread()) { comm_.stop_progress_thread(); }
  ~Paused() {
    if (was_) comm_.start_progress_thread();
  }
  Paused(const Paused&) = delete;
  Paused& operator=(const Paused&) = delete;

 private:
  Comm& comm_;
  bool was_;
};
}  // namespace

std::string Comm::broadcast(std::string bytes, int root) {
  const Paused paused(*this);
  auto n = static_cast<unsigned long long>(bytes.size());
  check(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD), "MPI_Bcast (size)");
  if (n > kMaxMessageBytes)
    throw UsageError(fmt::format("a broadcast of {} bytes: expected at most {}", n, kMaxMessageBytes));
  bytes.resize(static_cast<std::size_t>(n));
  check(MPI_Bcast(bytes.data(), static_cast<int>(n), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
  return bytes;
}

void Comm::barrier() {
  const Paused paused(*this);
  check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

void Comm::forsake() noexcept { impl_->forsaken = true; }

bool Comm::start_progress_thread() {
  if (impl_->worker) return true;
  if (impl_->thread_level < MPI_THREAD_SERIALIZED) return false;
  impl_->worker = std::make_unique<Impl::Worker>();
  for (const auto& p : impl_->pending) impl_->posted.emplace(p.ticket, p.bytes.size());  // the thread's now
  impl_->worker->thread = std::thread([impl = impl_.get()] { impl->progress_loop(); });
  return true;
}

void Comm::stop_progress_thread() noexcept { impl_->stop_worker(); }

bool Comm::progress_thread() const noexcept { return impl_->worker != nullptr; }

void Comm::abort(int code) {
  impl_->stop_worker();  // MPI_THREAD_SERIALIZED: no other MPI call may run beside MPI_Abort
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace ringrl::mpi
