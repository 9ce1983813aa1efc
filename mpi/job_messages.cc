#include "mpi/job_messages.h"

#include <algorithm>
#include <optional>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/byte_codec.h"
#include "common/runfiles/atomic_file.h"
#include "mpi/comm.h"

namespace ringrl::mpi {
namespace {

namespace fs = std::filesystem;

enum class Kind : std::uint16_t {
  kHello = 1, kWelcome, kStart, kExit, kSignal, kFinish,
  // The node bridge's (BridgeControlKind's values), then its status.
  kPlan = 7, kWeights, kPermits, kBudget, kStop, kStatus
};

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kHello: return "hello";
    case Kind::kWelcome: return "welcome";
    case Kind::kStart: return "start";
    case Kind::kExit: return "exit";
    case Kind::kSignal: return "signal";
    case Kind::kFinish: return "finish";
    case Kind::kPlan: return "plan";
    case Kind::kWeights: return "weights";
    case Kind::kPermits: return "permits";
    case Kind::kBudget: return "budget";
    case Kind::kStop: return "stop";
    case Kind::kStatus: return "status";
  }
  return "?";
}

struct Out {
  std::string bytes;
  StringSink sink{&bytes};
  ByteWriter w{sink};
  explicit Out(Kind k) {
    w.put(kJobMagic);
    w.put(kJobProtocolVersion);
    w.put(static_cast<std::uint16_t>(k));
  }
  void strings(const std::vector<std::string>& v) {
    w.put<std::uint64_t>(v.size());
    for (const auto& s : v) w.put_string(s);
  }
  void files(const std::vector<FileBlob>& v) {
    w.put<std::uint64_t>(v.size());
    for (const auto& f : v) {
      w.put_string(f.name);
      w.put_string(f.bytes);
    }
  }
};

struct In {
  MemorySource src;
  ByteReader r;
  Kind kind;
  // Expects a message of kind `k`; with no `k`, any of the bridge's control kinds.
  In(std::string_view bytes, const std::string& from, std::optional<Kind> k)
      : src(bytes),
        r(src, k ? fmt::format("{}: job message '{}'", from, kind_name(*k)) : fmt::format("{}: control message", from)) {
    if (r.get<std::uint32_t>() != kJobMagic) r.fail("not a job message (wrong magic)");
    const auto version = r.get<std::uint16_t>();
    if (version != kJobProtocolVersion)
      r.fail(fmt::format("protocol version {}, expected {} (ranks run different ringrl builds)", version,
                         kJobProtocolVersion));
    const auto got = r.get<std::uint16_t>();
    kind = static_cast<Kind>(got);
    if (k ? got != static_cast<std::uint16_t>(*k) : (got < static_cast<std::uint16_t>(Kind::kPlan) || got > static_cast<std::uint16_t>(Kind::kStop)))
      r.fail(k ? fmt::format("message kind {}, expected {}", got, static_cast<unsigned>(*k))
               : fmt::format("message kind {}, expected a control kind ({} to {})", got,
                             static_cast<unsigned>(Kind::kPlan), static_cast<unsigned>(Kind::kStop)));
  }
  std::string text() { return r.get_string(kMaxTextChars); }
  std::uint64_t count() {
    const auto n = r.get<std::uint64_t>();
    if (n > kMaxListItems) r.fail(fmt::format("a list of {} items, at most {} expected", n, kMaxListItems));
    return n;
  }
  std::vector<std::string> strings() {
    std::vector<std::string> v(count());
    for (auto& s : v) s = text();
    return v;
  }
  std::vector<FileBlob> files() {
    std::vector<FileBlob> v(count());
    for (auto& f : v) {
      f.name = r.get_string(kMaxFileNameChars);
      if (!is_plain_file_name(f.name)) r.fail(fmt::format("file name '{}' would leave its directory", f.name));
      f.bytes = r.get_string(kMaxMessageBytes);
    }
    return v;
  }
};

}  // namespace

std::string encode(const Hello& m) {
  Out o(Kind::kHello);
  o.w.put_string(m.version);
  o.w.put(m.fingerprint);
  o.w.put_string(m.host);
  o.strings(m.slots);
  o.w.put<std::uint8_t>(m.shared ? 1 : 0);
  o.w.put_string(m.error);
  return std::move(o.bytes);
}

std::string encode(const Welcome& m) {
  Out o(Kind::kWelcome);
  o.w.put_string(m.error);
  return std::move(o.bytes);
}

std::string encode(const StartJob& m) {
  Out o(Kind::kStart);
  o.w.put(m.job);
  o.w.put(m.slot);
  o.strings(m.args);
  o.w.put_string(m.dir);
  o.files(m.seeds);
  return std::move(o.bytes);
}

std::string encode(const JobExit& m) {
  Out o(Kind::kExit);
  o.w.put(m.job);
  o.w.put(m.wait_status);
  o.files(m.files);
  return std::move(o.bytes);
}

std::string encode(const SignalJobs& m) {
  Out o(Kind::kSignal);
  o.w.put(m.job);
  o.w.put(m.signal);
  return std::move(o.bytes);
}

std::string encode(const BridgePlan& m) {
  Out o(Kind::kPlan);
  o.w.put(m.actors);
  o.w.put(m.ring_capacity);
  o.w.put(m.blob_bytes);
  o.w.put(m.record_mask);
  o.w.put_string(m.budget_counter);
  o.w.put_string(m.config);
  o.w.put<std::uint64_t>(m.launches.size());
  for (const auto& args : m.launches) o.strings(args);
  return std::move(o.bytes);
}

std::string encode_weights(std::uint64_t channel_version, std::uint64_t permits, std::uint64_t budget,
                           const std::byte* blob, std::size_t bytes) {
  Out o(Kind::kWeights);
  o.w.put(channel_version);
  o.w.put(permits);
  o.w.put(budget);
  o.w.put<std::uint64_t>(bytes);
  o.w.put_bytes(blob, bytes);
  return std::move(o.bytes);
}

std::string encode_count(BridgeControlKind kind, std::uint64_t count) {
  Out o(static_cast<Kind>(kind));
  o.w.put(count);
  return std::move(o.bytes);
}

std::string encode_stop() { return std::move(Out(Kind::kStop).bytes); }

std::string encode(const BridgeStatus& m) {
  Out o(Kind::kStatus);
  o.w.put(m.running);
  o.w.put(m.restarts);
  o.w.put<std::uint8_t>(m.failed ? 1 : 0);
  o.w.put<std::uint8_t>(m.final ? 1 : 0);
  o.w.put(m.signal);
  o.w.put<std::uint64_t>(m.lost_units.size());
  for (const std::uint64_t t : m.lost_units) o.w.put(t);
  o.w.put_string(m.error);
  return std::move(o.bytes);
}

std::string encode_finish() { return std::move(Out(Kind::kFinish).bytes); }

Hello decode_hello(std::string_view bytes, const std::string& from) {
  In in(bytes, from, Kind::kHello);
  Hello m;
  m.version = in.text();
  m.fingerprint = in.r.get<std::uint64_t>();
  m.host = in.text();
  m.slots = in.strings();
  const auto shared = in.r.get<std::uint8_t>();
  if (shared > 1) in.r.fail(fmt::format("shared flag {}, expected 0 or 1", shared));
  m.shared = shared == 1;
  m.error = in.text();
  in.r.expect_end();
  return m;
}

Welcome decode_welcome(std::string_view bytes, const std::string& from) {
  In in(bytes, from, Kind::kWelcome);
  Welcome m;
  m.error = in.text();
  in.r.expect_end();
  return m;
}

StartJob decode_start(std::string_view bytes, const std::string& from) {
  In in(bytes, from, Kind::kStart);
  StartJob m;
  m.job = in.r.get<std::uint64_t>();
  m.slot = in.r.get<std::uint32_t>();
  m.args = in.strings();
  m.dir = in.text();
  if (!is_plain_relative_path(m.dir)) in.r.fail(fmt::format("run directory '{}' is not a plain relative path", m.dir));
  m.seeds = in.files();
  in.r.expect_end();
  return m;
}

JobExit decode_exit(std::string_view bytes, const std::string& from) {
  In in(bytes, from, Kind::kExit);
  JobExit m;
  m.job = in.r.get<std::uint64_t>();
  m.wait_status = in.r.get<std::int32_t>();
  m.files = in.files();
  in.r.expect_end();
  return m;
}

SignalJobs decode_signal(std::string_view bytes, const std::string& from) {
  In in(bytes, from, Kind::kSignal);
  SignalJobs m;
  m.job = in.r.get<std::uint64_t>();
  m.signal = in.r.get<std::int32_t>();
  in.r.expect_end();
  return m;
}

void decode_finish(std::string_view bytes, const std::string& from) {
  In in(bytes, from, Kind::kFinish);
  in.r.expect_end();
}

std::string build_version() { return fmt::format("{} (job protocol {})", RINGRL_VERSION, kJobProtocolVersion); }

std::string refusal(const Hello& got, const Hello& mine, int rank) {
  const std::string who = fmt::format("rank {} on {}", rank, got.host);
  if (!got.error.empty()) return fmt::format("{}: {}", who, got.error);
  if (got.version != mine.version)
    return fmt::format("{} runs ringrl {}, rank 0 runs {}: expected the same build on every rank", who, got.version,
                       mine.version);
  if (got.fingerprint != mine.fingerprint)
    return fmt::format("{} was started with other settings than rank 0 (fingerprint {:016x}, rank 0 {:016x}): "
                       "expected the same command line and config files on every rank",
                       who, got.fingerprint, mine.fingerprint);
  if (got.slots.empty()) return fmt::format("{} has no run slot: expected at least one", who);
  return {};
}

bool is_plain_file_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > kMaxFileNameChars || name == "." || name == "..") return false;
  return name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

bool is_plain_relative_path(std::string_view path) noexcept {
  if (path.empty() || path.size() > kMaxTextChars) return false;
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = path.find('/', start);
    if (!is_plain_file_name(path.substr(start, slash == std::string_view::npos ? slash : slash - start))) return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

std::vector<FileBlob> read_run_files(const fs::path& dir, std::uint64_t max_total_bytes,
                                     std::vector<std::string>* left_out) {
  std::vector<fs::path> paths;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && is_plain_file_name(name) && name.find(".tmp.") == std::string::npos)
      paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<FileBlob> out;
  std::uint64_t total = 0;
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    if (!in) continue;  // removed meanwhile
    std::ostringstream ss;
    ss << in.rdbuf();
    FileBlob f{p.filename().string(), std::move(ss).str()};
    if (total + f.bytes.size() > max_total_bytes) {
      if (left_out) left_out->push_back(f.name);
      continue;
    }
    total += f.bytes.size();
    out.push_back(std::move(f));
  }
  return out;
}

void write_run_files(const fs::path& dir, const std::vector<FileBlob>& files, bool only_missing) {
  fs::create_directories(dir);
  for (const auto& f : files) {
    if (!is_plain_file_name(f.name)) throw CorruptData(fmt::format("file name '{}' would leave {}", f.name, dir.string()));
    if (only_missing && fs::exists(dir / f.name)) continue;
    runfiles::write_file_atomic(dir / f.name, f.bytes);
  }
}

std::uint64_t fingerprint(const std::vector<std::string>& parts) noexcept {
  constexpr std::uint64_t kOffset = 1469598103934665603ull, kPrime = 1099511628211ull;  // FNV-1a 64
  std::uint64_t h = kOffset;
  auto mix = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * kPrime;
  };
  for (const auto& s : parts) {
    const std::uint64_t n = s.size();
    mix(&n, sizeof n);
    mix(s.data(), s.size());
  }
  return h;
}

BridgeControl decode_control(std::string_view bytes, const std::string& from) {
  In in(bytes, from, std::nullopt);
  BridgeControl m;
  m.kind = static_cast<BridgeControlKind>(in.kind);
  switch (in.kind) {
    case Kind::kPlan: {
      BridgePlan& p = m.plan;
      p.actors = in.r.get<std::uint32_t>();
      p.ring_capacity = in.r.get<std::uint64_t>();
      p.blob_bytes = in.r.get<std::uint64_t>();
      p.record_mask = in.r.get<std::uint64_t>();
      p.budget_counter = in.text();
      p.config = in.r.get_string(kMaxMessageBytes);
      p.launches.resize(in.count());
      for (auto& args : p.launches) args = in.strings();
      if (p.launches.size() != p.actors)
        in.r.fail(fmt::format("{} launches for {} actors", p.launches.size(), p.actors));
      break;
    }
    case Kind::kWeights: {
      m.channel_version = in.r.get<std::uint64_t>();
      m.count = in.r.get<std::uint64_t>();
      m.budget = in.r.get<std::uint64_t>();
      const auto n = in.r.get<std::uint64_t>();
      if (n != in.src.remaining()) in.r.fail(fmt::format("a blob of {} bytes with {} bytes left", n, in.src.remaining()));
      m.blob = bytes.substr(bytes.size() - n);
      return m;
    }
    case Kind::kPermits:
    case Kind::kBudget:
      m.count = in.r.get<std::uint64_t>();
      break;
    default:  // kStop
      break;
  }
  in.r.expect_end();
  return m;
}

BridgeStatus decode_status(std::string_view bytes, const std::string& from) {
  In in(bytes, from, Kind::kStatus);
  BridgeStatus m;
  m.running = in.r.get<std::uint32_t>();
  m.restarts = in.r.get<std::uint32_t>();
  const auto failed = in.r.get<std::uint8_t>(), final = in.r.get<std::uint8_t>();
  if (failed > 1 || final > 1) in.r.fail("a flag other than 0 or 1");
  m.failed = failed == 1;
  m.final = final == 1;
  m.signal = in.r.get<std::int32_t>();
  m.lost_units.resize(in.count());
  for (std::uint64_t& t : m.lost_units) t = in.r.get<std::uint64_t>();
  m.error = in.text();
  in.r.expect_end();
  return m;
}

}  // namespace ringrl::mpi
