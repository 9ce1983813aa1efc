#include "mpi/node_bridge.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/actor_pool.h"
#include "common/byte_codec.h"
#include "common/errors.h"
#include "common/exit_status.h"
#include "common/process_modes.h"
#include "common/run_segment.h"
#include "common/runfiles/atomic_file.h"
#include "common/runfiles/run_files.h"
#include "common/signals.h"
#include "mpi/handshake.h"
#include "mpi/job_messages.h"
#include "mpi/tags.h"

namespace ringrl::mpi {
namespace {

// Warns when this rank has fewer CPUs than its `actors` and the one process `beside` them.
void warn_if_crowded(const mpi::Comm& comm, std::uint32_t actors, const char* beside) {
  const int cpus = allowed_cpus();
  if (static_cast<std::int64_t>(cpus) < static_cast<std::int64_t>(actors) + 1)
    spdlog::warn("cluster: rank {} on {} may use {} CPU(s) for {} actor(s) and {}: they will take turns (give the "
                 "rank more: --cpus-per-task under Slurm, --bind-to none with mpirun)",
                 comm.rank(), comm.host(), cpus, actors, beside);
}

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;


constexpr auto kStatusEvery = std::chrono::seconds(1);
// The run's budget reaches the nodes with each publication, or on its own at most this often
// between publications (HIRO's collectors pace themselves on it during initial collection).
constexpr auto kBudgetEvery = std::chrono::milliseconds(5);
// Rank 0 says something to every node at least this often (the budget again, when nothing else
// went out), so that a node can tell a quiet rank 0 from a dead one (--node-silence).
constexpr auto kKeepAlive = std::chrono::seconds(1);
constexpr auto kStopWait = std::chrono::seconds(20);     // rank 0 waits this long for the nodes' last word
constexpr auto kStopWaitStopping = std::chrono::seconds(1);  // ... after SIGINT/SIGTERM (SIGKILL may follow)
constexpr auto kIdle = std::chrono::microseconds(200);
constexpr auto kLastWordFlush = std::chrono::seconds(5);  // a failing bridge waits this long for its last word to go  // a bridge with nothing to do sleeps this long

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", p.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What a node bridge and rank 0 say in the handshake: one "bridge" slot each.
// This rank's hello; a node directory it cannot write refuses the job in rank 0's one line.
mpi::Hello bridge_hello(const mpi::Comm& comm, const BridgeSetup& setup) {
  mpi::Hello h{mpi::build_version(), setup.fingerprint, comm.host(), {"bridge"}, false, {}};
  if (comm.rank() != 0 && !setup.node_dir.empty())
    if (const std::string problem = runfiles::directory_problem(setup.node_dir); !problem.empty())
      h.error = "its node " + problem;
  return h;
}

}  // namespace

MpiRemoteActors::MpiRemoteActors(mpi::Comm& comm, const BridgeSetup& setup)
    : comm_(comm), silence_(std::chrono::duration_cast<Clock::duration>(setup.silence)) {
  // The job handshake (mpi/handshake.h): a refusal reaches every node, so none waits in vain.
  const std::vector<mpi::Hello> hellos = mpi::welcome_ranks(comm, bridge_hello(comm, setup));
  for (int r = 1; r < comm.size(); ++r) {
    Node n;
    n.rank = r;
    n.host = hellos[static_cast<std::size_t>(r)].host;
    n.heard = Clock::now();
    nodes_.push_back(n);
  }
}

MpiRemoteActors::~MpiRemoteActors() {
  try {
    stop();
  } catch (const std::exception& e) {
    spdlog::warn("cluster: stopping the actor nodes: {}", e.what());
  }
}

void MpiRemoteActors::start(const learner::SourcePlan& plan) {
  first_slot_ = plan.first_slot;
  warn_if_crowded(comm_, plan.first_slot, "the learner");
  per_node_ = plan.actors_per_node > 0 ? plan.actors_per_node : plan.first_slot;
  std::vector<mpi::NodeShape> shapes;
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    mpi::BridgePlan p;
    p.ring_capacity = plan.ring_capacity;
    p.blob_bytes = plan.blob_bytes;
    p.record_mask = plan.record_mask;
    p.actors = per_node_;
    p.budget_counter = plan.budget_counter;
    std::string config_path;
    for (std::uint32_t i = 0; i < per_node_; ++i) {
      const ActorLaunch l = plan.launch(first_slot_ + static_cast<std::uint32_t>(k) * per_node_ + i);
      p.launches.push_back(l.to_args());  // the node replaces segment, slot and config
      config_path = l.config_path;
    }
    p.config = config_path.empty() ? std::string() : read_file(config_path);
    comm_.post(nodes_[k].rank, mpi::kBridgeControl, mpi::encode(p));
    shapes.push_back({nodes_[k].rank, per_node_, plan.record_mask, plan.max_record_bytes});
    nodes_[k].heard = Clock::now();
  }
  inbox_ = std::make_unique<mpi::RecordInbox>(comm_, shapes);
  std::vector<int> ranks;
  for (const auto& n : nodes_) ranks.push_back(n.rank);
  fanout_ = std::make_unique<mpi::WeightFanout>(comm_, ranks, mpi::kBridgeControl);
  // From here on records, status and weights move while the learner computes.
  if (!comm_.start_progress_thread())
    spdlog::warn("cluster: MPI gives no MPI_THREAD_SERIALIZED; rank 0's messages move only between learner steps");
  started_ = true;
  spdlog::info("cluster: {} actor node(s), {} actor(s) each: {}", nodes_.size(), per_node_, [&] {
    std::string s;
    for (const auto& n : nodes_) s += fmt::format("{}rank {} ({})", s.empty() ? "" : ", ", n.rank, n.host);
    return s;
  }());
}

std::uint64_t MpiRemoteActors::poll(const Take& take) {
  if (!inbox_) return 0;
  return inbox_->poll([&](int rank, std::uint32_t slot, const RecordView& rec) {
    std::uint32_t k = 0;
    while (k < nodes_.size() && nodes_[k].rank != rank) ++k;
    return take(first_slot_ + k * per_node_ + slot, rec);
  });
}

void MpiRemoteActors::publish(const std::byte* blob, std::size_t bytes, std::uint64_t channel_version) {
  fanout_->publish(blob, bytes, channel_version, budget_, [this](std::size_t k) { return share(k); });
  budget_sent_ = budget_;
  budget_sent_at_ = sent_at_ = Clock::now();
}

void MpiRemoteActors::budget(std::uint64_t used) {
  budget_ = used;
  if (!started_ || stopped_) return;
  fanout_->pump([this](std::size_t k) { return share(k); });  // a node that was behind gets the newest weights
  const auto now = Clock::now();
  const bool news = budget_ != budget_sent_ && now - budget_sent_at_ >= kBudgetEvery;
  if (!news && now - sent_at_ < kKeepAlive) return;
  const std::string m = mpi::encode_count(mpi::BridgeControlKind::kBudget, budget_);
  for (const auto& n : nodes_) comm_.post(n.rank, mpi::kBridgeControl, m);
  budget_sent_ = budget_;
  budget_sent_at_ = sent_at_ = now;
}

void MpiRemoteActors::grant(const std::uint64_t* permits) {
  permits_.assign(permits, permits + nodes_.size());
  if (!started_) return;
  fanout_->grant([this](std::size_t k) { return share(k); });  // a node behind gets them with its weights
  sent_at_ = Clock::now();
}

void MpiRemoteActors::receive_status() {
  while (auto m = comm_.try_receive(mpi::kBridgeStatus)) {
    const mpi::BridgeStatus s = mpi::decode_status(m->bytes, fmt::format("rank {}", m->source));
    for (std::size_t k = 0; k < nodes_.size(); ++k)
      if (Node& n = nodes_[k]; n.rank == m->source) {
        n.heard = Clock::now();
        n.running = s.running;
        n.restarts = s.restarts;
        n.failed = s.failed;
        for (const std::uint64_t t : s.lost_units) lost_.push_back({static_cast<std::uint32_t>(k), t});
        n.final = s.final;
        n.signal = s.signal;
        n.error = s.error;
      }
  }
}

void MpiRemoteActors::check() {
  receive_status();
  const auto now = Clock::now();
  for (auto& n : nodes_) {
    if (n.failed)
      throw std::runtime_error(fmt::format("rank {} on {}: every actor of the node failed and used up its restarts",
                                           n.rank, n.host));
    if (n.final && !stopped_ && n.signal != 0) {
      // mpirun forwards a signal to every rank at once; the bridge may tell of it before this
      // rank's own handler runs. Either way the whole job is being interrupted: checkpoint.
      if (!shutdown_requested()) {
        spdlog::warn("cluster: rank {} on {} was interrupted (signal {}); stopping the run", n.rank, n.host, n.signal);
        request_shutdown(n.signal);
      }
      continue;
    }
    if (n.final && !stopped_ && !n.error.empty())
      throw std::runtime_error(fmt::format("rank {} on {}: the node bridge failed: {}", n.rank, n.host, n.error));
    if (n.final && !stopped_)
      throw std::runtime_error(fmt::format("rank {} on {}: the node bridge stopped (signal or error; see its log)",
                                           n.rank, n.host));
    if (started_ && now - n.heard > silence_) {
      n.silent = true;  // stop() does not wait for it
      comm_.forsake();  // MPI_Finalize would wait for it forever
      throw std::runtime_error(fmt::format("rank {} on {} stopped answering: no word for {:g} s", n.rank, n.host,
                                           std::chrono::duration<double>(silence_).count()));
    }
  }
}

void MpiRemoteActors::lost_units(std::vector<learner::LostUnit>& out) {
  out.insert(out.end(), lost_.begin(), lost_.end());
  lost_.clear();
}

std::vector<learner::SourceStats> MpiRemoteActors::stats() const {
  std::vector<learner::SourceStats> out;
  for (const auto& n : nodes_)
    out.push_back({fmt::format("rank {} ({})", n.rank, n.host), inbox_ ? inbox_->stats(n.rank).records : 0, n.running,
                   n.restarts});
  return out;
}

void MpiRemoteActors::stop() {
  if (stopped_) return;
  stopped_ = true;
  for (const auto& n : nodes_) comm_.post(n.rank, mpi::kBridgeControl, mpi::encode_stop());
  // Each node's last word, while its forwarder may still be waiting for credit.
  bool silent = false;
  for (const auto& n : nodes_) silent |= n.silent;
  const auto wait = shutdown_requested() || silent ? kStopWaitStopping : kStopWait;
  const auto deadline = Clock::now() + wait;
  for (;;) {
    receive_status();
    if (inbox_) inbox_->poll([](int, std::uint32_t, const RecordView&) { return true; });  // discarded: the run ended
    bool all = true;
    for (const auto& n : nodes_) all &= n.final || n.silent;
    if (all || Clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  bool unconfirmed = false;
  for (const auto& n : nodes_) {
    if (n.final || n.silent) continue;
    spdlog::warn("cluster: rank {} on {} did not confirm its stop", n.rank, n.host);
    unconfirmed = true;
  }
  comm_.flush(wait);
  if (unconfirmed) comm_.forsake();  // MPI_Finalize would wait for it forever
}

int run_node_bridge(mpi::Comm& comm, const BridgeSetup& setup) {
  const std::string from = "rank 0";
  const std::optional<mpi::Welcome> welcome = mpi::greet_rank0(comm, bridge_hello(comm, setup));
  if (!welcome) return kExitInterrupted;
  if (!welcome->error.empty()) return kExitUsage;

  // The plan: what to run; or a stop before any (rank 0 found nothing to do: a finished run).
  const auto first = mpi::wait_for(comm, mpi::kBridgeControl, Clock::duration::max());
  if (!first) return kExitInterrupted;
  const mpi::BridgeControl first_message = mpi::decode_control(first->bytes, from);
  if (first_message.kind == mpi::BridgeControlKind::kStop) {
    mpi::BridgeStatus last;
    last.final = true;
    comm.post(0, mpi::kBridgeStatus, mpi::encode(last));
    comm.flush(std::chrono::seconds(10));
    return 0;
  }
  if (first_message.kind != mpi::BridgeControlKind::kPlan)
    throw CorruptData(fmt::format("{}: a control message of kind {} before the plan", from,
                                  static_cast<unsigned>(first_message.kind)));
  // The plan, read as untrusted: a launch that does not parse is one line naming rank 0.
  const mpi::BridgePlan& plan = first_message.plan;
  RunLayoutOptions lo;
  lo.num_actors = plan.actors;
  lo.ring_capacity = plan.ring_capacity;
  lo.weight_capacity = plan.blob_bytes;
  std::vector<ActorLaunch> launches;
  for (const std::vector<std::string>& args : plan.launches) {
    try {
      if (args.empty() || args.front() != "actor") throw UsageError("expected the actor role first");
      launches.push_back(ActorLaunch::parse(std::vector<std::string>(args.begin() + 1, args.end())));
    } catch (const UsageError& e) {
      throw CorruptData(fmt::format("{}: a plan with a malformed launch: {}", from, e.what()));
    }
  }
  fs::create_directories(setup.node_dir);
  const fs::path config = setup.node_dir / runfiles::kResolvedConfigName;
  runfiles::write_file_atomic(config, plan.config);

  install_shutdown_handlers();
  install_crash_handlers();
  // Named after the rank and the run, not the process: a bridge that died by SIGKILL leaves its
  // segment, and the next bridge of the run on this node (--resume) reclaims it.
  ActorPoolOptions po;
  po.run_id = fmt::format("node{}-{:016x}", comm.rank(), mpi::fingerprint({fs::absolute(setup.node_dir).string()}));
  po.layout = lo;
  po.record_mask = plan.record_mask;
  po.launch = [&](std::uint32_t slot) {
    ActorLaunch launch = launches.at(slot);
    launch.config_path = config.string();
    return launch;
  };
  ActorPool pool(po);
  spdlog::info("cluster: rank {} on {}: {} actor(s) in node segment {}", comm.rank(), comm.host(), lo.num_actors,
               pool.segment_name());
  warn_if_crowded(comm, lo.num_actors, "the bridge");
  // Rank 0's budget counter, mirrored for the node's actors.
  ControlBlock& control = pool.segment().control();
  std::atomic<std::uint64_t>& budget = budget_counter(control, plan.budget_counter.c_str());
  mpi::RecordForwarder forwarder(comm, {});
  // Each publish here is stamped with rank 0's channel version; a record carries that stamp
  // (0 for one made before the first: rank 0 discards it as made with an earlier floor).
  bool stop = false;
  std::vector<std::uint64_t> lost;  // units dead actors held, not yet told
  auto last_status = Clock::now();
  auto send_status = [&](bool final, const std::string& error = {}) {
    mpi::BridgeStatus s;
    s.running = pool.started() ? pool.poll() : 0;
    const std::size_t told = std::min<std::size_t>(lost.size(), mpi::kMaxListItems);
    s.lost_units.assign(lost.begin(), lost.begin() + static_cast<std::ptrdiff_t>(told));
    lost.erase(lost.begin(), lost.begin() + static_cast<std::ptrdiff_t>(told));
    s.restarts = pool.supervisor().total_restarts();
    s.failed = pool.started() && s.running == 0 && pool.supervisor().all_failed();
    s.final = final;
    s.signal = final ? shutdown_signal() : 0;
    s.error = error;
    comm.post(0, mpi::kBridgeStatus, mpi::encode(s));
    last_status = Clock::now();
  };
  // Rank 0 says something at least every second (MpiRemoteActors' keep-alive); silent for the
  // bound, it is taken for dead and this node stops instead of running until the job's limit.
  const auto silence = std::chrono::duration_cast<Clock::duration>(setup.silence);
  auto heard = Clock::now();
  bool rank0_lost = false;
  try {
    while (!stop && !shutdown_requested()) {
      bool any = false;
      while (auto m = comm.try_receive(mpi::kBridgeControl)) {
        heard = Clock::now();
        any = true;
        const mpi::BridgeControl c = mpi::decode_control(m->bytes, from);
        switch (c.kind) {
          case mpi::BridgeControlKind::kWeights:
            if (c.blob.size() > lo.weight_capacity)
              throw CorruptData(fmt::format("{}: weights of {} bytes for a channel of {}", from, c.blob.size(),
                                            lo.weight_capacity));
            (void)pool.publish(c.blob.data(), c.blob.size(), c.channel_version);
            budget.store(c.budget, std::memory_order_relaxed);
            pool.grant(c.count);  // after the weights they allow
            pool.start();         // once, after the first weights
            break;
          case mpi::BridgeControlKind::kPermits:
            pool.grant(c.count);
            break;
          case mpi::BridgeControlKind::kBudget:
            budget.store(c.count, std::memory_order_relaxed);
            break;
          case mpi::BridgeControlKind::kStop:
            stop = true;
            break;
          case mpi::BridgeControlKind::kPlan:
            throw CorruptData(fmt::format("{}: a second plan", from));
        }
      }
      // Checked right after the queue came up empty (a bridge that was itself stopped reads
      // what rank 0 said meanwhile, a stop included, before it judges rank 0).
      if (!any && !stop && Clock::now() - heard > silence) {
        comm.forsake();  // MPI_Finalize would wait for rank 0 forever
        rank0_lost = true;
        throw std::runtime_error(fmt::format("rank 0 stopped answering: no word for {:g} s", setup.silence.count()));
      }
      forwarder.begin_pass();
      const std::uint64_t got = pool.drain([&](std::uint32_t slot, RecordView rec) {
        rec.version = pool.stamp_of(rec.version).value_or(0);
        return forwarder.offer(slot, rec);
      });
      forwarder.end_pass(got);
      if (pool.started() && pool.poll() == 0 && pool.supervisor().all_failed()) {
        send_status(false);
        break;
      }
      if (pool.started()) {  // a dead actor's unit is skipped at once
        pool.lost_units(lost);
        if (!lost.empty()) send_status(false);
      }
      if (Clock::now() - last_status >= kStatusEvery) send_status(false);
      if (got == 0) std::this_thread::sleep_for(kIdle);
    }
  } catch (const std::exception& e) {
    // The last word carries the error, so that rank 0 names it at once rather than after its
    // silence bound, in the job's one error line; this rank's log only notes it. Without rank
    // 0 the error is this rank's own.
    pool.stop();
    send_status(true, e.what());
    comm.flush(kLastWordFlush);
    if (rank0_lost) throw;
    spdlog::warn("cluster: rank {} on {}: {} (told rank 0, which ends the run)", comm.rank(), comm.host(), e.what());
    return kExitFailure;
  }
  pool.stop();
  forwarder.flush();
  send_status(true);
  if (!comm.flush(std::chrono::seconds(10))) comm.forsake();  // rank 0 is gone: MPI_Finalize would wait for it
  return shutdown_requested() ? kExitInterrupted : 0;
}

}  // namespace ringrl::mpi
