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
#include <nlohmann/json.hpp>

#include "common/actor_pool.h"
#include "common/byte_codec.h"
#include "common/errors.h"
#include "common/exit_status.h"
#include "common/run_segment.h"
#include "common/runfiles/atomic_file.h"
#include "common/runfiles/run_files.h"
#include "common/signals.h"
#include "mpi/job_messages.h"
#include "mpi/tags.h"

namespace ringrl::mpi {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

enum class ControlKind : std::uint32_t { kWeights = 1, kPermits = 2, kStop = 3, kPlan = 4, kBudget = 5 };

constexpr auto kStatusEvery = std::chrono::seconds(1);
// The run's budget reaches the nodes with each publication, or on its own at most this often
// between publications (HIRO's collectors pace themselves on it during initial collection).
constexpr auto kBudgetEvery = std::chrono::milliseconds(5);
constexpr auto kStopWait = std::chrono::seconds(20);     // rank 0 waits this long for the nodes' last word
constexpr auto kStopWaitStopping = std::chrono::seconds(1);  // ... after SIGINT/SIGTERM (SIGKILL may follow)
constexpr auto kHelloWait = std::chrono::minutes(5);
constexpr auto kIdle = std::chrono::microseconds(200);  // a bridge with nothing to do sleeps this long

struct Status {
  std::uint32_t running = 0, restarts = 0;
  std::uint8_t failed = 0, final = 0;
  std::uint16_t signal = 0;  // on the final status: the signal that stopped the bridge, or 0
  std::uint32_t reserved2 = 0;
  std::uint64_t lost = 0;  // records the node's dead actors claimed and never delivered, in total
};
static_assert(sizeof(Status) == 24);

struct WeightsHead {
  std::uint32_t kind;  // ControlKind::kWeights
  std::uint32_t reserved;
  std::uint64_t channel_version;
  std::uint64_t permits;  // this node's share
  std::uint64_t budget;   // the run's budget used (the driver's control-block counter)
};

// ControlKind::kPermits (the node's share) and kBudget (the run's budget used): one count.
struct CountMessage {
  std::uint32_t kind;
  std::uint32_t reserved;
  std::uint64_t value;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", p.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

template <class T>
T decode_pod(std::string_view bytes, const std::string& from, const char* what) {
  T v;
  if (bytes.size() != sizeof v) throw CorruptData(fmt::format("{}: a {} message of {} bytes", from, what, bytes.size()));
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

template <class T>
std::string encode_pod(const T& v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof v);
}

// Receives the next message with `tag` from `source`, waiting up to `timeout` (a signal ends the wait).
std::optional<mpi::Message> wait_for(mpi::Comm& comm, int tag, Clock::duration timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline && !shutdown_requested()) {
    if (auto m = comm.try_receive(tag)) return m;
    comm.progress();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return std::nullopt;
}

}  // namespace

MpiRemoteActors::MpiRemoteActors(mpi::Comm& comm, const BridgeSetup& setup) : comm_(comm) {
  // A refusal goes to every node in the welcome, so that none waits for rank 0 in vain.
  std::string error;
  if (const char* v = std::getenv(kNodeSilenceVariable); v != nullptr && *v != '\0') {
    char* end = nullptr;
    const double seconds = std::strtod(v, &end);
    if (end == v || *end != '\0' || !(seconds > 0 && seconds <= 86400))
      error = fmt::format("{}={}: expected seconds, above 0 and at most 86400", kNodeSilenceVariable, v);
    else
      silence_ = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  const mpi::Hello mine{mpi::build_version(), setup.fingerprint, comm.host(), {"bridge"}, false};
  for (int got = 1; got < comm.size(); ++got) {
    const auto m = wait_for(comm, mpi::kHello, kHelloWait);
    if (!m) {
      error = fmt::format("only {} of {} ranks said hello", got, comm.size());
      break;
    }
    try {
      const mpi::Hello h = mpi::decode_hello(m->bytes, fmt::format("rank {}", m->source));
      if (error.empty()) error = mpi::refusal(h, mine, m->source);
      nodes_.push_back({m->source, h.host, Clock::now()});
    } catch (const CorruptData& e) {
      if (error.empty()) error = e.what();
    }
  }
  for (int r = 1; r < comm.size(); ++r) comm.post(r, mpi::kWelcome, mpi::encode(mpi::Welcome{error}));
  if (!error.empty()) {
    comm.flush(std::chrono::seconds(10));
    throw UsageError(error);
  }
  std::sort(nodes_.begin(), nodes_.end(), [](const Node& a, const Node& b) { return a.rank < b.rank; });
}

MpiRemoteActors::~MpiRemoteActors() {
  try {
    stop();
  } catch (const std::exception& e) {
    spdlog::warn("cluster: stopping the actor nodes: {}", e.what());
  }
}

void MpiRemoteActors::start(const learner::RemoteRunPlan& plan, std::uint32_t local) {
  local_ = local;
  per_node_ = plan.actors_per_node > 0 ? plan.actors_per_node : local;
  std::vector<mpi::NodeShape> shapes;
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    json p;
    p["ring_capacity"] = plan.ring_capacity;
    p["blob_bytes"] = plan.blob_bytes;
    p["record_mask"] = plan.record_mask;
    p["records_per_unit"] = plan.records_per_unit;
    p["actors"] = per_node_;
    p["budget_counter"] = plan.budget_counter;
    json launches = json::array();
    std::string config_path;
    for (std::uint32_t i = 0; i < per_node_; ++i) {
      const ActorLaunch l = plan.launch(local_ + static_cast<std::uint32_t>(k) * per_node_ + i);
      launches.push_back({{"kind", l.kind}, {"seed", l.seed}, {"params", l.params}});
      config_path = l.config_path;
    }
    p["launches"] = launches;
    p["config"] = config_path.empty() ? std::string() : read_file(config_path);
    const std::uint32_t kind = static_cast<std::uint32_t>(ControlKind::kPlan);
    comm_.post(nodes_[k].rank, mpi::kBridgeControl, encode_pod(kind) + p.dump());
    shapes.push_back({nodes_[k].rank, per_node_, plan.record_mask, plan.max_record_bytes});
    nodes_[k].heard = Clock::now();
  }
  inbox_ = std::make_unique<mpi::RecordInbox>(comm_, shapes);
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
    return take(local_ + k * per_node_ + slot, rec);
  });
}

void MpiRemoteActors::publish(const std::byte* blob, std::size_t bytes, std::uint64_t channel_version) {
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    const WeightsHead h{static_cast<std::uint32_t>(ControlKind::kWeights), 0, channel_version, share(k), budget_};
    std::string m = encode_pod(h);
    m.append(reinterpret_cast<const char*>(blob), bytes);
    comm_.post(nodes_[k].rank, mpi::kBridgeControl, std::move(m));
  }
  comm_.progress();
  budget_sent_ = budget_;
  budget_sent_at_ = Clock::now();
}

void MpiRemoteActors::budget(std::uint64_t used) {
  budget_ = used;
  if (!started_ || budget_ == budget_sent_ || Clock::now() - budget_sent_at_ < kBudgetEvery) return;
  const CountMessage m{static_cast<std::uint32_t>(ControlKind::kBudget), 0, budget_};
  for (const auto& n : nodes_) comm_.post(n.rank, mpi::kBridgeControl, encode_pod(m));
  budget_sent_ = budget_;
  budget_sent_at_ = Clock::now();
}

void MpiRemoteActors::grant(std::uint64_t permits) {
  permits_ = permits;
  if (!started_) return;
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    const CountMessage m{static_cast<std::uint32_t>(ControlKind::kPermits), 0, share(k)};
    comm_.post(nodes_[k].rank, mpi::kBridgeControl, encode_pod(m));
  }
}

void MpiRemoteActors::receive_status() {
  while (auto m = comm_.try_receive(mpi::kBridgeStatus)) {
    const Status s = decode_pod<Status>(m->bytes, fmt::format("rank {}", m->source), "status");
    for (auto& n : nodes_)
      if (n.rank == m->source) {
        n.heard = Clock::now();
        n.running = s.running;
        n.restarts = s.restarts;
        n.failed = s.failed != 0;
        n.lost = s.lost;
        n.final = s.final != 0;
        n.signal = s.signal;
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

std::uint64_t MpiRemoteActors::lost_records() const {
  std::uint64_t lost = 0;
  for (const auto& n : nodes_) lost += n.lost;
  return lost;
}

std::vector<learner::RemoteNodeStats> MpiRemoteActors::stats() const {
  std::vector<learner::RemoteNodeStats> out;
  for (const auto& n : nodes_)
    out.push_back({fmt::format("rank {} ({})", n.rank, n.host), inbox_ ? inbox_->stats(n.rank).records : 0, n.running,
                   n.restarts});
  return out;
}

void MpiRemoteActors::stop() {
  if (stopped_) return;
  stopped_ = true;
  const std::uint32_t stop_kind = static_cast<std::uint32_t>(ControlKind::kStop);
  for (const auto& n : nodes_) comm_.post(n.rank, mpi::kBridgeControl, encode_pod(stop_kind));
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
  for (const auto& n : nodes_)
    if (!n.final && !n.silent) spdlog::warn("cluster: rank {} on {} did not confirm its stop", n.rank, n.host);
  comm_.flush(wait);
}

int run_node_bridge(mpi::Comm& comm, const BridgeSetup& setup) {
  const std::string from = "rank 0";
  comm.post(0, mpi::kHello, mpi::encode(mpi::Hello{mpi::build_version(), setup.fingerprint, comm.host(), {"bridge"}, false}));
  const auto welcome = wait_for(comm, mpi::kWelcome, Clock::duration::max() / 2);
  if (!welcome) return kExitInterrupted;
  if (!mpi::decode_welcome(welcome->bytes, from).error.empty()) return kExitUsage;

  // The plan: what to run; or a stop before any (rank 0 found nothing to do: a finished run).
  const auto first = wait_for(comm, mpi::kBridgeControl, Clock::duration::max() / 2);
  if (!first) return kExitInterrupted;
  std::uint32_t first_kind = 0;
  if (first->bytes.size() >= sizeof first_kind) std::memcpy(&first_kind, first->bytes.data(), sizeof first_kind);
  if (first_kind == static_cast<std::uint32_t>(ControlKind::kStop)) {
    comm.post(0, mpi::kBridgeStatus, encode_pod(Status{0, 0, 0, 1, 0, 0, 0}));
    comm.flush(std::chrono::seconds(10));
    return 0;
  }
  if (first_kind != static_cast<std::uint32_t>(ControlKind::kPlan))
    throw CorruptData(fmt::format("{}: a control message of kind {} before the plan", from, first_kind));
  // The plan, read as untrusted: anything missing or of the wrong type is one line naming rank 0.
  RunLayoutOptions lo;
  std::uint64_t mask = 0, per_unit = 1;
  std::string budget_counter;
  json launches;
  std::string config_text;
  try {
    const json plan = json::parse(first->bytes.substr(sizeof first_kind));
    lo.num_actors = plan.at("actors").get<std::uint32_t>();
    lo.ring_capacity = plan.at("ring_capacity").get<std::uint64_t>();
    lo.weight_capacity = plan.at("blob_bytes").get<std::uint64_t>();
    mask = plan.at("record_mask").get<std::uint64_t>();
    per_unit = std::max<std::uint64_t>(1, plan.at("records_per_unit").get<std::uint64_t>());
    launches = plan.at("launches");
    config_text = plan.at("config").get<std::string>();
    budget_counter = plan.at("budget_counter").get<std::string>();
    if (!launches.is_array() || launches.size() != lo.num_actors)
      throw CorruptData(fmt::format("{}: the plan's launches do not match its {} actors", from, lo.num_actors));
    for (const json& l : launches) {
      (void)l.at("kind").get<std::string>();
      (void)l.at("seed").get<std::uint64_t>();
      (void)l.at("params").get<std::map<std::string, std::string>>();
    }
  } catch (const json::exception& e) {
    throw CorruptData(fmt::format("{}: a malformed plan: {}", from, e.what()));
  }
  fs::create_directories(setup.node_dir);
  const fs::path config = setup.node_dir / runfiles::kResolvedConfigName;
  runfiles::write_file_atomic(config, config_text);

  install_shutdown_handlers();
  install_crash_handlers();
  // Named after the rank and the run, not the process: a bridge that died by SIGKILL leaves its
  // segment, and the next bridge of the run on this node (--resume) reclaims it.
  ActorPoolOptions po;
  po.run_id = fmt::format("node{}-{:016x}", comm.rank(), mpi::fingerprint({fs::absolute(setup.node_dir).string()}));
  po.layout = lo;
  po.record_mask = mask;
  po.records_per_unit = per_unit;
  po.launch = [&](std::uint32_t slot) {
    const json& l = launches.at(slot);
    ActorLaunch launch;
    launch.kind = l.at("kind").get<std::string>();
    launch.seed = l.at("seed").get<std::uint64_t>();
    launch.config_path = config.string();
    launch.params = l.at("params").get<std::map<std::string, std::string>>();
    return launch;
  };
  ActorPool pool(po);
  spdlog::info("cluster: rank {} on {}: {} actor(s) in node segment {}", comm.rank(), comm.host(), lo.num_actors,
               pool.segment_name());
  // Rank 0's budget counter, mirrored for the node's actors.
  ControlBlock& control = pool.segment().control();
  std::atomic<std::uint64_t>& budget = budget_counter == "env_steps" ? control.env_steps : control.npe;
  mpi::RecordForwarder forwarder(comm, {});
  // Each publish here is stamped with rank 0's channel version; a record carries that stamp
  // (0 for one made before the first: rank 0 discards it as made with an earlier floor).
  bool stop = false;
  std::uint64_t lost_seen = 0;
  auto last_status = Clock::now();
  auto send_status = [&](bool final) {
    Status s;
    s.running = pool.started() ? pool.poll() : 0;
    s.lost = pool.lost_records();  // work claimed by actors that died and never delivered
    s.restarts = pool.supervisor().total_restarts();
    s.failed = pool.started() && s.running == 0 && pool.supervisor().all_failed() ? 1 : 0;
    s.final = final ? 1 : 0;
    s.signal = final ? static_cast<std::uint16_t>(shutdown_signal()) : 0;
    comm.post(0, mpi::kBridgeStatus, encode_pod(s));
    last_status = Clock::now();
  };
  while (!stop && !shutdown_requested()) {
    while (auto m = comm.try_receive(mpi::kBridgeControl)) {
      std::uint32_t kind = 0;
      if (m->bytes.size() < sizeof kind) throw CorruptData(fmt::format("{}: a control message of {} bytes", from, m->bytes.size()));
      std::memcpy(&kind, m->bytes.data(), sizeof kind);
      if (kind == static_cast<std::uint32_t>(ControlKind::kWeights)) {
        if (m->bytes.size() < sizeof(WeightsHead) || m->bytes.size() - sizeof(WeightsHead) > lo.weight_capacity)
          throw CorruptData(fmt::format("{}: a weights message of {} bytes", from, m->bytes.size()));
        WeightsHead h;
        std::memcpy(&h, m->bytes.data(), sizeof h);
        (void)pool.publish(m->bytes.data() + sizeof h, m->bytes.size() - sizeof h, h.channel_version);
        budget.store(h.budget, std::memory_order_relaxed);
        pool.grant(h.permits);  // after the weights they allow
        pool.start();           // once, after the first weights
      } else if (kind == static_cast<std::uint32_t>(ControlKind::kPermits)) {
        pool.grant(decode_pod<CountMessage>(m->bytes, from, "permits").value);
      } else if (kind == static_cast<std::uint32_t>(ControlKind::kBudget)) {
        budget.store(decode_pod<CountMessage>(m->bytes, from, "budget").value, std::memory_order_relaxed);
      } else if (kind == static_cast<std::uint32_t>(ControlKind::kStop)) {
        stop = true;
      } else {
        throw CorruptData(fmt::format("{}: a control message of kind {}", from, kind));
      }
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
    if (pool.started()) {  // a dead actor's unfinished work is granted again at once
      const std::uint64_t before = lost_seen;
      lost_seen = pool.lost_records();
      if (lost_seen != before) send_status(false);
    }
    if (Clock::now() - last_status >= kStatusEvery) send_status(false);
    if (got == 0) std::this_thread::sleep_for(kIdle);
  }
  pool.stop();
  forwarder.flush();
  send_status(true);
  comm.flush(std::chrono::seconds(10));
  return shutdown_requested() ? kExitInterrupted : 0;
}

}  // namespace ringrl::mpi
