#include "learner/profile.h"

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <system_error>

namespace ringrl::learner {

namespace {
constexpr double kUsPerS = 1e6;
constexpr std::size_t kLineBytes = 256;  // one table row / trace event
}  // namespace

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kWaitData:
      return "wait_data";
    case Phase::kBatchBuild:
      return "batch_build";
    case Phase::kHostToDevice:
      return "host_to_device";
    case Phase::kForward:
      return "forward";
    case Phase::kBackward:
      return "backward";
    case Phase::kOptimizer:
      return "optimizer";
    case Phase::kPublish:
      return "publish";
    case Phase::kSample:
      return "sample";
    case Phase::kRelabel:
      return "relabel";
    case Phase::kCritic:
      return "critic";
    case Phase::kActor:
      return "actor";
    case Phase::kTarget:
      return "target";
    case Phase::kCount:
      break;
  }
  return "?";
}

PhaseProfiler::PhaseProfiler(std::size_t max_spans)
    : max_spans_(max_spans), origin_(std::chrono::steady_clock::now()) {}

PhaseProfiler::Scope::Scope(PhaseProfiler* profiler, Phase phase)
    : profiler_(profiler), phase_(phase), start_(std::chrono::steady_clock::now()) {}

void PhaseProfiler::Scope::end() {
  if (profiler_ == nullptr) return;
  if (profiler_->sync_) profiler_->sync_();
  profiler_->record(phase_, start_, std::chrono::steady_clock::now());
  profiler_ = nullptr;
}

void PhaseProfiler::record(Phase phase, std::chrono::steady_clock::time_point start,
                           std::chrono::steady_clock::time_point end) {
  const double start_us = std::chrono::duration<double, std::micro>(start - origin_).count();
  const double dur_us = std::chrono::duration<double, std::micro>(end - start).count();
  Acc& a = acc_[static_cast<int>(phase)];
  if (a.count == 0 || dur_us < a.min_us) a.min_us = dur_us;
  if (a.count == 0 || dur_us > a.max_us) a.max_us = dur_us;
  ++a.count;
  a.total_us += dur_us;
  if (spans_.size() < max_spans_) spans_.push_back(Span{phase, start_us, dur_us});
}

std::vector<PhaseSummary> PhaseProfiler::summary() const {
  std::vector<PhaseSummary> out;
  for (int p = 0; p < kNumPhases; ++p) {
    const Acc& a = acc_[p];
    PhaseSummary s;
    s.phase = static_cast<Phase>(p);
    s.count = a.count;
    s.total_s = a.total_us / kUsPerS;
    s.mean_us = a.count ? a.total_us / static_cast<double>(a.count) : 0.0;
    s.min_us = a.min_us;
    s.max_us = a.max_us;
    out.push_back(s);
  }
  return out;
}

std::string PhaseProfiler::summary_table() const {
  const auto rows = summary();
  double total = 0.0;
  for (const auto& r : rows) total += r.total_s;
  // snprintf, not fmt: LibTorch wheels bundle their own fmt headers, which would shadow the
  // system fmt this library links.
  char line[kLineBytes];
  std::snprintf(line, sizeof(line), "%-16s%9s%11s%12s%12s%12s%8s\n", "phase", "count", "total_s", "mean_us", "min_us",
                "max_us", "share");
  std::string out = line;
  for (const auto& r : rows) {
    if (r.count == 0) continue;
    std::snprintf(line, sizeof(line), "%-16s%9llu%11.3f%12.1f%12.1f%12.1f%7.1f%%\n", phase_name(r.phase),
                  static_cast<unsigned long long>(r.count), r.total_s, r.mean_us, r.min_us, r.max_us,
                  total > 0 ? 100.0 * r.total_s / total : 0.0);
    out += line;
  }
  return out;
}

std::string PhaseProfiler::chrome_trace_json() const {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  bool first = true;
  for (const Span& s : spans_) {
    if (!first) out += ',';
    first = false;
    char ev[kLineBytes];
    std::snprintf(ev, sizeof(ev),
                  "{\"name\":\"%s\",\"cat\":\"learner\",\"ph\":\"X\",\"ts\":%.3f,"
                  "\"dur\":%.3f,\"pid\":1,\"tid\":1}",
                  phase_name(s.phase), s.start_us, s.dur_us);
    out += ev;
  }
  out += "]}\n";
  return out;
}

void PhaseProfiler::write_chrome_trace(const std::string& path) const {
  const std::string json = chrome_trace_json();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw std::system_error(errno, std::generic_category(), "open " + path);
  const bool ok = std::fwrite(json.data(), 1, json.size(), f) == json.size();
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    throw std::system_error(ok ? errno : err, std::generic_category(), "write " + path);
  }
}

void PhaseProfiler::reset() {
  spans_.clear();
  acc_ = {};
  origin_ = std::chrono::steady_clock::now();
}

}  // namespace ringrl::learner
