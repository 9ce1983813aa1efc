#include "learner/demo/demo_algorithm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "common/byte_codec.h"
#include "common/checkpoint.h"
#include "common/demo/demo_record.h"
#include "common/errors.h"
#include "common/records.h"

namespace ringrl::demo {
namespace {

constexpr const char* kSection = "demo";
constexpr std::uint32_t kStateVersion = 1;
constexpr std::uint32_t kMaxRecordBytes = 1u << 20;
constexpr std::uint32_t kMaxDim = 1u << 26;

class DemoAlgorithm final : public learner::Algorithm {
 public:
  explicit DemoAlgorithm(const DemoOptions& o)
      : o_(o), floats_((o.record_bytes - static_cast<std::uint32_t>(sizeof(DemoRecord))) / sizeof(float)) {}

  // --- what the actors are
  std::string name() const override { return "demo"; }
  std::uint64_t record_mask() const override { return record_type_bit(kRecordDemoGradient); }
  std::uint64_t ring_bytes() const override { return std::uint64_t{4} << 20; }
  std::size_t blob_bytes() const override { return std::size_t{o_.dim} * sizeof(float); }
  const char* budget_key() const override { return "records"; }
  void fill_launch(ActorLaunch& launch) const override { launch.params[kRecordFloatsParam] = std::to_string(floats_); }

  // --- one repetition
  void begin_repetition(std::uint32_t /*rep*/) override {
    w_.assign(o_.dim, 0.0f);
    version_ = records_ = bytes_ = since_step_ = stale_ = 0;
  }
  std::uint64_t version() const override { return version_; }
  void on_record(std::uint32_t actor, const RecordView& rec, std::uint64_t version) override {
    DemoRecord h;
    if (rec.length < sizeof h) throw std::runtime_error(fmt::format("actor {} sent a demo record of {} bytes", actor, rec.length));
    std::memcpy(&h, rec.data, sizeof h);
    if (h.count == 0 || rec.length != sizeof h + std::uint64_t{h.count} * sizeof(float))
      throw std::runtime_error(
          fmt::format("actor {} sent a demo record of {} bytes for {} values", actor, rec.length, h.count));
    ++records_;
    ++since_step_;
    bytes_ += rec.length;
    if (version_ - std::min(version, version_) > kMaxLag) {
      ++stale_;
      return;
    }
    std::vector<float> g(h.count);
    std::memcpy(g.data(), rec.data + sizeof h, g.size() * sizeof(float));
    for (std::uint32_t k = 0; k < h.count; ++k) w_[(std::uint64_t{h.chunk} * h.count + k) % o_.dim] += kLearningRate * g[k];
  }
  bool wants_records() const override { return since_step_ < kPublishEvery; }
  bool ready() const override { return since_step_ >= kPublishEvery; }
  bool step() override {
    since_step_ = 0;
    ++version_;
    return true;
  }
  void write_blob(std::byte* dst) const override { std::memcpy(dst, w_.data(), w_.size() * sizeof(float)); }
  std::uint64_t budget_used() const override { return records_; }
  bool solved() const override { return rms_distance() < kSolvedDistance; }

  // --- checkpoints
  void save(CheckpointWriter& out) const override {
    ByteWriter& b = out.section(kSection);
    b.put(kStateVersion);
    b.put(o_.dim);
    b.put(version_);
    b.put(records_);
    b.put(bytes_);
    b.put(since_step_);
    b.put(stale_);
    for (float x : w_) b.put(x);
  }
  void load(CheckpointReader& in) override {
    ByteReader& b = in.section(kSection);
    b.expect(kStateVersion, "demo state version");
    b.expect(o_.dim, "dim");
    version_ = b.get<std::uint64_t>();
    records_ = b.get<std::uint64_t>();
    bytes_ = b.get<std::uint64_t>();
    since_step_ = b.get<std::uint64_t>();
    stale_ = b.get<std::uint64_t>();
    for (float& x : w_) x = b.get<float>();
    b.expect_end();
  }

  // --- reporting
  std::vector<std::string> metric_columns() const override {
    return {"records", "records_per_s", "mb_per_s", "versions", "stale", "rms_distance", "lag_p50", "lag_max"};
  }
  std::vector<double> metric_row(const learner::DriverTick& t) const override {
    const double mean_bytes = records_ > 0 ? static_cast<double>(bytes_) / static_cast<double>(records_) : 0.0;
    return {static_cast<double>(records_), t.budget_per_s, t.budget_per_s * mean_bytes / 1e6,
            static_cast<double>(version_), static_cast<double>(stale_), rms_distance(), static_cast<double>(t.lag_p50),
            static_cast<double>(t.lag_max)};
  }
  std::vector<std::pair<std::string, std::string>> progress_fields(const learner::DriverTick& t) const override {
    return {{"records/s", fmt::format("{:.2f}M", t.budget_per_s / 1e6)},
            {"v", fmt::format("{}", version_)},
            {"rms", fmt::format("{:.4f}", rms_distance())},
            {"lag", fmt::format("{}/{}", t.lag_p50, t.lag_max)}};
  }
  nlohmann::json result() const override {
    return {{"records", records_},
            {"bytes", bytes_},
            {"versions", version_},
            {"stale", stale_},
            {"rms_distance", rms_distance()}};
  }
  std::string describe_result() const override {
    return fmt::format("{} records ({} stale, dropped), {} versions, rms distance {:.4f}", records_, stale_, version_,
                       rms_distance());
  }

  std::uint64_t bytes() const noexcept { return bytes_; }
  std::uint64_t stale() const noexcept { return stale_; }
  double rms_distance() const {
    double d = 0;
    for (std::uint32_t j = 0; j < o_.dim; ++j) d += std::pow(static_cast<double>(demo_target(j) - w_[j]), 2);
    return std::sqrt(d / o_.dim);
  }

 private:
  DemoOptions o_;
  std::uint32_t floats_;  // per record
  std::vector<float> w_ = std::vector<float>(o_.dim, 0.0f);
  std::uint64_t version_ = 0, records_ = 0, bytes_ = 0, since_step_ = 0, stale_ = 0;
};

}  // namespace

void DemoOptions::validate() const {
  RunSettings::validate();
  constexpr auto kMinBytes = static_cast<std::uint32_t>(sizeof(DemoRecord) + sizeof(float));
  if (record_bytes < kMinBytes || record_bytes > kMaxRecordBytes)
    throw UsageError(fmt::format("--record-bytes {}: expected {} to {}", record_bytes, kMinBytes, kMaxRecordBytes));
  if (dim < 1 || dim > kMaxDim) throw UsageError(fmt::format("--dim {}: expected 1 to {}", dim, kMaxDim));
}

std::unique_ptr<learner::Algorithm> make_demo_algorithm(const DemoOptions& options) {
  options.validate();
  return std::make_unique<DemoAlgorithm>(options);
}

DemoSummary run_demo(const DemoOptions& o) {
  o.validate();
  learner::DriverOptions d(o);
  d.actors = o.actors;
  d.stop_on_success = false;  // the demo runs for its seconds
  d.identity = {{"dim", o.dim}, {"record_bytes", o.record_bytes}};
  DemoAlgorithm algo(o);
  DemoSummary s;
  s.driver = learner::run_training(algo, d);
  s.bytes = algo.bytes();
  s.versions = algo.version();
  s.stale = algo.stale();
  s.rms_distance = algo.rms_distance();
  return s;
}

}  // namespace ringrl::demo
