#include "sweeps/cluster_jobs.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "common/byte_codec.h"
#include "common/errors.h"
#include "common/exit_status.h"
#include "common/process_modes.h"
#include "common/runfiles/atomic_file.h"
#include "common/runfiles/run_files.h"
#include "common/signals.h"
#include "mpi/handshake.h"
#include "mpi/job_messages.h"
#include "mpi/launch.h"

namespace ringrl::sweeps {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kTokenFile = ".cluster-token";       // in rank 0's session directory
constexpr const char* kRunDirFlag = "--run-dir";
constexpr std::uint64_t kMaxShippedBytes = std::uint64_t{1} << 29;  // one run directory's files per message
constexpr auto kPump = std::chrono::milliseconds(5);      // between polls of the message queue
constexpr auto kStopGrace = std::chrono::seconds(30);     // a stopped worker waits this long for kFinish
constexpr auto kFinishFlush = std::chrono::seconds(10);
constexpr int kInterrupted = 130;

std::string rank_name(int rank) { return fmt::format("rank {}", rank); }

std::string new_token() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}-{}", rd(), rd(), getpid());
}

std::string read_small_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `args` with the value after --run-dir replaced by `dir`.
std::vector<std::string> with_run_dir(std::vector<std::string> args, const std::string& dir) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == kRunDirFlag) args[i + 1] = dir;
  return args;
}

}  // namespace

std::unique_ptr<mpi::Comm> join_mpi_job() {
  const mpi::LaunchEnvironment env = mpi::detect_launcher();
  if (!env.under_launcher || env.size_hint == 1) return nullptr;
  std::unique_ptr<mpi::Comm> comm = mpi::Comm::init();
  if (comm->size() == 1) return nullptr;
  // A launcher binds each rank to a core by default; its actors and learner threads need the node.
  const CpuWidening cpus = widen_cpu_affinity();
  if (cpus.after > cpus.before)
    spdlog::info("cluster: rank {} on {}: the launcher bound it to {} of {} CPUs; it now may use {}", comm->rank(),
                 comm->host(), cpus.before, cpus.online, cpus.after);
  if (cpus.after < cpus.online)
    spdlog::warn("cluster: rank {} on {} may use {} of the node's {} CPUs (its cpuset: under Slurm, give "
                 "--cpus-per-task)",
                 comm->rank(), comm->host(), cpus.after, cpus.online);
  return comm;
}

fs::path node_dir_for(const std::string& dir, int rank) {
  std::string out = dir;
  const std::string key = "{rank}";
  for (std::size_t at = out.find(key); at != std::string::npos; at = out.find(key, at))
    out.replace(at, key.size(), std::to_string(rank));
  return out;
}

ClusterStart open_cluster(mpi::Comm& comm, const ClusterSetup& setup) {
  ClusterStart start;
  mpi::Hello mine{mpi::build_version(), setup.fingerprint, comm.host(), setup.devices, true, setup.local_error};
  // The token tells each worker whether it sees rank 0's session directory.
  std::string token;
  if (comm.rank() == 0) {
    // A failure here still reaches the broadcast below (every rank waits in it) and then
    // refuses the job in the welcome.
    try {
      token = new_token();
      fs::create_directories(setup.session_dir);
      runfiles::write_file_atomic(setup.session_dir / kTokenFile, token);
    } catch (const std::exception& e) {
      if (mine.error.empty()) mine.error = e.what();
    }
  }
  token = comm.broadcast(token, 0);
  if (comm.rank() != 0) {
    // A node directory this rank cannot write refuses the job now, in rank 0's one line,
    // rather than failing every trial sent here.
    if (const std::string problem = runfiles::directory_problem(setup.node_dir); mine.error.empty() && !problem.empty())
      mine.error = "its node " + problem;
    mine.shared = read_small_file(setup.node_dir / kTokenFile) == token;
    const std::optional<mpi::Welcome> w = mpi::greet_rank0(comm, mine);
    if (!w) throw std::runtime_error("interrupted before rank 0 welcomed this rank");
    start.refused = !w->error.empty();
    start.shared = mine.shared;
    return start;
  }

  // Rank 0: every worker's hello, checked against its own (mpi/handshake.h).
  const std::vector<mpi::Hello> hellos = mpi::welcome_ranks(comm, mine, setup.check_on_rank0);
  std::vector<ClusterSlot> slots;
  std::vector<bool> shared(static_cast<std::size_t>(comm.size()), true);
  for (int r = 0; r < comm.size(); ++r) {
    const mpi::Hello& h = hellos[static_cast<std::size_t>(r)];
    shared[static_cast<std::size_t>(r)] = h.shared;
    for (const auto& d : h.slots) slots.push_back({r, h.host, d});
    if (r > 0)
      spdlog::info("cluster: rank {} on {}: {} slot(s) ({}){}", r, h.host, h.slots.size(), fmt::join(h.slots, ", "),
                   h.shared ? ", shares the session directory" : ", own node directory: results are gathered");
  }
  start.jobs = std::make_unique<ClusterJobs>(comm, setup, std::move(slots), std::move(shared));
  return start;
}

ClusterJobs::ClusterJobs(mpi::Comm& comm, ClusterSetup setup, std::vector<ClusterSlot> slots,
                         std::vector<bool> shared)
    : comm_(comm), setup_(std::move(setup)), slots_(std::move(slots)), shared_(std::move(shared)) {
  for (const auto& s : slots_) local_slots_ += s.rank == 0 ? 1 : 0;
}

std::vector<std::string> ClusterJobs::devices() const {
  std::vector<std::string> out;
  for (const ClusterSlot& s : slots_) out.push_back(s.device);
  return out;
}

std::vector<std::string> ClusterJobs::slot_names() const {
  std::vector<std::string> out;
  for (const ClusterSlot& s : slots_) out.push_back(fmt::format("{} of rank {} ({})", s.device, s.rank, s.host));
  return out;
}

ClusterJobs::~ClusterJobs() {
  try {
    finish();
  } catch (const std::exception& e) {
    spdlog::warn("cluster: telling the workers to finish: {}", e.what());
  }
}

std::uint64_t ClusterJobs::start(std::size_t slot, const ChildRun& run) {
  const std::uint64_t id = next_id_++;
  if (slots_.at(slot).rank == 0) {
    local_ids_[id] = local_.start(slot, run);
    return id;
  }
  const int rank = slots_[slot].rank;
  const std::string rel = run.run_dir.lexically_relative(setup_.session_dir).generic_string();
  if (!mpi::is_plain_relative_path(rel))
    throw std::logic_error(fmt::format("run directory {} is not inside the session directory {}", run.run_dir.string(),
                                       setup_.session_dir.string()));
  mpi::StartJob m;
  m.job = id;
  m.slot = static_cast<std::uint32_t>(slot);
  m.args = with_run_dir(run.args, rel);
  m.dir = rel;
  if (!shared_[static_cast<std::size_t>(rank)]) {
    std::vector<std::string> left_out;
    m.seeds = mpi::read_run_files(run.run_dir, kMaxShippedBytes, &left_out);
    for (const auto& f : left_out)
      spdlog::warn("cluster: {} stays on rank 0: the files of {} pass {} bytes", f, run.run_dir.string(),
                   kMaxShippedBytes);
  }
  comm_.post(rank, mpi::kStart, mpi::encode(m));
  remote_[id] = {rank, run.run_dir, std::nullopt};
  return id;
}

void ClusterJobs::receive() {
  while (auto m = comm_.try_receive(mpi::kExit)) {
    const mpi::JobExit e = mpi::decode_exit(m->bytes, rank_name(m->source));
    const auto it = remote_.find(e.job);
    if (it == remote_.end() || it->second.rank != m->source || it->second.status)
      throw CorruptData(fmt::format("rank {}: job message 'exit' for job {}, which it does not run", m->source, e.job));
    if (!shared_[static_cast<std::size_t>(m->source)]) {
      mpi::write_run_files(it->second.dir, e.files, /*only_missing=*/false);
      bool has_checkpoint = false;
      for (const auto& f : e.files) has_checkpoint |= f.name == runfiles::kCheckpointFileName;
      std::error_code ec;
      if (!has_checkpoint) fs::remove(it->second.dir / runfiles::kCheckpointFileName, ec);  // the run dropped it
    }
    it->second.status = e.wait_status;
  }
}

std::optional<int> ClusterJobs::poll(std::uint64_t id) {
  if (const auto it = local_ids_.find(id); it != local_ids_.end()) {
    const std::optional<int> st = local_.poll(it->second);
    if (st) local_ids_.erase(it);
    return st;
  }
  receive();
  const auto it = remote_.find(id);
  if (it == remote_.end() || !it->second.status) return std::nullopt;
  const int st = *it->second.status;
  remote_.erase(it);
  return st;
}

void ClusterJobs::signal(std::uint64_t id, int sig) {
  if (const auto it = local_ids_.find(id); it != local_ids_.end()) return local_.signal(it->second, sig);
  const auto it = remote_.find(id);
  if (it != remote_.end() && !it->second.status)
    comm_.post(it->second.rank, mpi::kSignal, mpi::encode(mpi::SignalJobs{id, sig}));  // the worker forwards it once
}

void ClusterJobs::idle(std::chrono::milliseconds d) {
  const auto until = Clock::now() + d;
  do {
    receive();
    comm_.progress();
    std::this_thread::sleep_for(kPump);
  } while (Clock::now() < until);
}

void ClusterJobs::finish() {
  if (finished_) return;
  finished_ = true;
  for (int r = 1; r < comm_.size(); ++r) comm_.post(r, mpi::kFinish, mpi::encode_finish());
  comm_.flush(kFinishFlush);
}

int run_job_worker(mpi::Comm& comm, const ClusterSetup& setup, bool shared) {
  const std::string from = "rank 0";
  struct Job {
    std::uint64_t local = 0;
    fs::path dir;
  };
  LocalChildRunner local;
  std::map<std::uint64_t, Job> jobs;  // rank 0's id -> ours
  bool finish = false, forwarded = false;
  Clock::time_point stopped_at{};
  while (!finish) {
    while (auto m = comm.try_receive()) {
      if (m->source != 0) continue;
      if (m->tag == mpi::kStart) {
        const mpi::StartJob s = mpi::decode_start(m->bytes, from);
        const fs::path dir = setup.node_dir / s.dir;
        try {
          mpi::write_run_files(dir, s.seeds, /*only_missing=*/true);
          ChildRun run{with_run_dir(s.args, dir.string()), dir, dir / runfiles::kLogFileName};
          jobs[s.job] = {local.start(s.slot, run), dir};
        } catch (const std::exception& e) {  // the job fails, not the rank: rank 0 hears of it
          spdlog::error("cluster: rank {} on {}: could not start a job in {}: {}", comm.rank(), comm.host(),
                        dir.string(), e.what());
          comm.post(0, mpi::kExit, mpi::encode(mpi::JobExit{s.job, W_EXITCODE(kExitFailure, 0), {}}));
          continue;
        }
        if (forwarded) local.signal(jobs[s.job].local, shutdown_signal());
      } else if (m->tag == mpi::kSignal) {
        const mpi::SignalJobs s = mpi::decode_signal(m->bytes, from);
        if (const auto it = jobs.find(s.job); it != jobs.end()) local.signal(it->second.local, s.signal);
      } else if (m->tag == mpi::kFinish) {
        mpi::decode_finish(m->bytes, from);
        finish = true;
      }
    }
    if (shutdown_requested() && !forwarded) {
      forwarded = true;
      stopped_at = Clock::now();
      for (const auto& [id, j] : jobs) local.signal(j.local, shutdown_signal());
    }
    for (auto it = jobs.begin(); it != jobs.end();) {
      const std::optional<int> st = local.poll(it->second.local);
      if (!st) {
        ++it;
        continue;
      }
      mpi::JobExit e{it->first, *st, {}};
      std::vector<std::string> left_out;
      if (!shared) e.files = mpi::read_run_files(it->second.dir, kMaxShippedBytes, &left_out);
      for (const auto& f : left_out)
        spdlog::warn("cluster: {} stays on {}: the files of {} pass {} bytes", f, comm.host(), it->second.dir.string(),
                     kMaxShippedBytes);
      comm.post(0, mpi::kExit, mpi::encode(e));
      it = jobs.erase(it);
    }
    comm.progress();
    if (forwarded && jobs.empty() && Clock::now() - stopped_at > kStopGrace) break;
    std::this_thread::sleep_for(kPump);
  }
  comm.flush(kFinishFlush);
  return forwarded ? kInterrupted : 0;
}

}  // namespace ringrl::sweeps
