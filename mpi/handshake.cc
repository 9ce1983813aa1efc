#include "mpi/handshake.h"

#include <thread>

#include <fmt/format.h>

#include "common/errors.h"
#include "common/signals.h"
#include "mpi/tags.h"

namespace ringrl::mpi {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPump = std::chrono::milliseconds(1);          // between polls of the message queue
constexpr auto kRefusalFlush = std::chrono::seconds(10);      // rank 0 waits this long for the refusals to go out

}  // namespace

std::optional<Message> wait_for(Comm& comm, int tag, Clock::duration timeout) {
  const auto deadline = timeout >= Clock::duration::max() / 2 ? Clock::time_point::max() : Clock::now() + timeout;
  while (Clock::now() < deadline && !shutdown_requested()) {
    if (auto m = comm.try_receive(tag)) return m;
    comm.progress();
    std::this_thread::sleep_for(kPump);
  }
  return std::nullopt;
}

std::vector<Hello> welcome_ranks(Comm& comm, const Hello& mine, const std::function<void()>& check,
                                 Clock::duration hello_wait) {
  std::vector<Hello> hellos(static_cast<std::size_t>(comm.size()));
  std::vector<bool> heard(static_cast<std::size_t>(comm.size()), false);
  hellos[0] = mine;
  std::string error;
  for (int got = 1; got < comm.size(); ++got) {
    const auto m = wait_for(comm, kHello, hello_wait);
    if (!m) {
      error = fmt::format("only {} of {} ranks said hello within {} s", got, comm.size(),
                          std::chrono::duration_cast<std::chrono::seconds>(hello_wait).count());
      break;
    }
    const auto r = static_cast<std::size_t>(m->source);
    if (m->source <= 0 || heard[r]) {  // a rank is one participant, however often it says hello
      if (error.empty()) error = fmt::format("rank {} said hello twice", m->source);
      --got;
      continue;
    }
    heard[r] = true;
    try {
      hellos[r] = decode_hello(m->bytes, fmt::format("rank {}", m->source));
      if (error.empty()) error = refusal(hellos[r], mine, m->source);
    } catch (const CorruptData& e) {
      if (error.empty()) error = e.what();
    }
  }
  if (error.empty() && !mine.error.empty()) error = mine.error;
  if (error.empty() && check) {
    try {
      check();
    } catch (const UsageError& e) {
      error = e.what();
    }
  }
  for (int r = 1; r < comm.size(); ++r) comm.post(r, kWelcome, encode(Welcome{error}));
  if (!error.empty()) {
    comm.flush(kRefusalFlush);
    throw UsageError(error);
  }
  return hellos;
}

std::optional<Welcome> greet_rank0(Comm& comm, const Hello& mine) {
  comm.post(0, kHello, encode(mine));
  const auto m = wait_for(comm, kWelcome, Clock::duration::max());
  if (!m) return std::nullopt;
  return decode_welcome(m->bytes, "rank 0");
}

}  // namespace ringrl::mpi
