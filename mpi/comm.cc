// comm.h on MPI (Open MPI in the builds we test; nothing here is Open MPI-specific).
#include "mpi/comm.h"

// The C API only: Open MPI and MPICH otherwise pull in their deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <list>
#include <map>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "common/errors.h"

namespace ringrl::mpi {
namespace {

constexpr auto kFlushPoll = std::chrono::microseconds(200);  // between tests of pending sends

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
  std::string host;
  // A list: a short message lives inside its std::string, and MPI holds its address until the
  // send completes, so no element may move when another is erased.
  std::list<Pending> pending;
  std::uint64_t next_ticket = 1;
  std::uint64_t in_flight = 0;
  // A message matched (MPI_Improbe) and being received (MPI_Imrecv), per (tag asked for,
  // sender): a large message needs its sender's help to arrive, and a sender that hangs in the
  // middle of one must hold up neither us nor the other senders' messages on that tag.
  struct Incoming {
    MPI_Request request = MPI_REQUEST_NULL;
    Message message;
  };
  std::map<std::pair<int, int>, Incoming> incoming;
  int next_source = 0;  // where the next probe round starts (every sender gets its turn first)
  bool forsaken = false;  // a peer is hung: no MPI_Finalize
};

bool built_with_mpi() noexcept { return true; }

std::unique_ptr<Comm> Comm::init() {
  int initialized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  if (initialized) throw std::logic_error("MPI is already initialised in this process");
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  // Errors come back as codes (and become exceptions) instead of ending the job silently.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  auto impl = std::make_unique<Impl>();
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
  if (impl_->forsaken || !flush(kFinalFlush)) {
    // Open MPI does not cancel sends: it may still read these buffers, so they are kept (the
    // process is ending) instead of freed under it.
    static auto* kept = new std::list<Impl::Pending>;
    kept->splice(kept->end(), impl_->pending);
  }
  for (auto& [tag, in] : impl_->incoming) MPI_Cancel(&in.request);
  if (!impl_->forsaken) MPI_Finalize();
}

int Comm::rank() const noexcept { return impl_->rank; }
int Comm::size() const noexcept { return impl_->size; }
const std::string& Comm::host() const noexcept { return impl_->host; }

std::uint64_t Comm::post(int dest, int tag, std::string bytes) {
  if (bytes.size() > kMaxMessageBytes)
    throw UsageError(fmt::format("a message of {} bytes to rank {}: expected at most {}", bytes.size(), dest,
                                 kMaxMessageBytes));
  Impl::Pending& p = impl_->pending.emplace_back();
  p.bytes = std::move(bytes);
  const int rc = MPI_Isend(p.bytes.data(), static_cast<int>(p.bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD,
                           &p.request);
  if (rc != MPI_SUCCESS) {
    impl_->pending.pop_back();
    check(rc, "MPI_Isend");
  }
  impl_->in_flight += p.bytes.size();
  p.ticket = impl_->next_ticket++;
  return p.ticket;
}

bool Comm::in_flight(std::uint64_t ticket) const noexcept {
  for (const auto& p : impl_->pending)
    if (p.ticket == ticket) return true;
  return false;
}

std::size_t Comm::progress() {
  for (auto it = impl_->pending.begin(); it != impl_->pending.end();) {
    int done = 0;
    check(MPI_Test(&it->request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) {
      impl_->in_flight -= it->bytes.size();
      it = impl_->pending.erase(it);
    } else {
      ++it;
    }
  }
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
  const int n = impl_->size;
  const int first = impl_->next_source;
  impl_->next_source = (first + 1) % n;
  for (int k = 0; k < n; ++k) {
    const int source = (first + k) % n;
    const auto key = std::make_pair(tag, source);
    auto it = impl_->incoming.find(key);
    if (it == impl_->incoming.end()) {  // match this sender's next message, and start receiving it
      int flag = 0;
      MPI_Message matched;
      MPI_Status status;
      check(MPI_Improbe(source, tag == kAnyTag ? MPI_ANY_TAG : tag, MPI_COMM_WORLD, &flag, &matched, &status),
            "MPI_Improbe");
      if (!flag) continue;
      int count = 0;
      check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
      it = impl_->incoming.emplace(key, Impl::Incoming{}).first;
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
    impl_->incoming.erase(it);
    return m;
  }
  return std::nullopt;
}

std::string Comm::broadcast(std::string bytes, int root) {
  auto n = static_cast<unsigned long long>(bytes.size());
  check(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD), "MPI_Bcast (size)");
  if (n > kMaxMessageBytes)
    throw UsageError(fmt::format("a broadcast of {} bytes: expected at most {}", n, kMaxMessageBytes));
  bytes.resize(static_cast<std::size_t>(n));
  check(MPI_Bcast(bytes.data(), static_cast<int>(n), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
  return bytes;
}

void Comm::barrier() { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

void Comm::forsake() noexcept { impl_->forsaken = true; }

void Comm::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace ringrl::mpi
