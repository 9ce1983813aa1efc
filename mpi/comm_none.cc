// comm.h in a build without MPI: init() says so in one line; nothing else can be reached.
#include <cstdlib>

#include "common/errors.h"
#include "mpi/comm.h"

namespace ringrl::mpi {

struct Comm::Impl {};

bool built_with_mpi() noexcept { return false; }

std::unique_ptr<Comm> Comm::init() { throw UsageError(kNoMpi); }
Comm::Comm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Comm::~Comm() = default;
int Comm::rank() const noexcept { return 0; }
int Comm::size() const noexcept { return 1; }
const std::string& Comm::host() const noexcept {
  static const std::string none;
  return none;
}
std::uint64_t Comm::post(int, int, std::string) { throw UsageError(kNoMpi); }
bool Comm::in_flight(std::uint64_t) const noexcept { return false; }
std::size_t Comm::progress() { return 0; }
std::uint64_t Comm::bytes_in_flight() const noexcept { return 0; }
bool Comm::flush(std::chrono::milliseconds) { return true; }
std::optional<Message> Comm::try_receive(int) { return std::nullopt; }
std::string Comm::broadcast(std::string bytes, int) { return bytes; }
void Comm::barrier() {}
void Comm::abort(int code) { std::exit(code); }
void Comm::forsake() noexcept {}
bool Comm::start_progress_thread() { return false; }
void Comm::stop_progress_thread() noexcept {}
bool Comm::progress_thread() const noexcept { return false; }

}  // namespace ringrl::mpi
