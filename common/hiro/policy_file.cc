#include "common/hiro/policy_file.h"

#include <string>

#include "common/checkpoint.h"

namespace ringrl::hiro {

namespace {

constexpr const char* kPolicySection = "policy";
constexpr const char* kActorsSection = "actors";
constexpr std::uint64_t kMaxNameBytes = 4096;
constexpr std::uint64_t kMaxBlobBytes = std::uint64_t{1} << 30;
constexpr int kMaxDim = 1 << 16;

}  // namespace

void write_policy_file(const std::filesystem::path& path, const PolicyFile& file) {
  const PolicyInfo& i = file.info;
  CheckpointWriter out(path, kPolicyAlgorithm);
  ByteWriter& p = out.section(kPolicySection);
  p.put(kPolicyFileVersion);
  p.put_string(i.env);
  p.put<std::uint8_t>(i.multi_target ? 1 : 0);
  p.put<std::uint8_t>(i.compact ? 1 : 0);
  p.put<std::uint8_t>(i.observe_block ? 1 : 0);
  p.put(i.kinematic_max_step);
  p.put<std::uint8_t>(i.goal_space == GoalSpaceKind::kOrig ? 0 : 1);
  p.put<std::int32_t>(i.meta_period);
  for (const int d : {i.shape.meta_in, i.shape.meta_out, i.shape.low_in, i.shape.low_out, i.shape.hidden1,
                      i.shape.hidden2})
    p.put<std::int32_t>(d);
  p.put_string(i.source);
  p.put(i.env_steps);
  out.section(kActorsSection).put_vector(file.blob);
  out.commit();
}

PolicyFile read_policy_file(const std::filesystem::path& path) {
  CheckpointReader in(path, kPolicyAlgorithm);
  PolicyFile f;
  PolicyInfo& i = f.info;
  ByteReader& p = in.section(kPolicySection);
  p.expect(kPolicyFileVersion, "policy file version");
  i.env = p.get_string(kMaxNameBytes);
  const auto flag = [&p](const char* what) {
    const auto v = p.get<std::uint8_t>();
    if (v > 1) p.fail(std::string(what) + " flag " + std::to_string(v) + ", expected 0 or 1");
    return v == 1;
  };
  i.multi_target = flag("task mode");
  i.compact = flag("compact");
  i.observe_block = flag("observe_block");
  i.kinematic_max_step = p.get<double>();
  i.goal_space = flag("goal space") ? GoalSpaceKind::kXy : GoalSpaceKind::kOrig;
  i.meta_period = p.get<std::int32_t>();
  int* dims[] = {&i.shape.meta_in, &i.shape.meta_out, &i.shape.low_in,
                 &i.shape.low_out, &i.shape.hidden1,  &i.shape.hidden2};
  for (int* d : dims) {
    *d = p.get<std::int32_t>();
    if (*d < 1 || *d > kMaxDim) p.fail("network dimension " + std::to_string(*d) + " out of range");
  }
  if (i.meta_period < 1 || i.meta_period > kMaxDim) p.fail("meta period " + std::to_string(i.meta_period));
  i.source = p.get_string(kMaxNameBytes);
  i.env_steps = p.get<std::uint64_t>();
  ByteReader& a = in.section(kActorsSection);
  f.blob = a.get_vector<std::byte>(kMaxBlobBytes);
  std::string error;
  if (blob_payload(f.blob, ActorBlobLayout(i.shape).blob(), &error) == nullptr) a.fail(error);
  return f;
}

}  // namespace ringrl::hiro
