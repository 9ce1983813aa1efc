// HIRO policy files (`ringrl checkpoint export --policy`): the two acting networks of a
// trained run and what an actor needs to act with them, without the critics, optimisers and
// replays of a checkpoint (~1 MB at the paper's 300-300 networks, against ~340 MB for a final
// model with its replays).
//
// Contract:
// * The file is a checkpoint file (common/checkpoint.h: atomic write, magic, format version,
//   FNV-1a checksum, section table) of algorithm kPolicyAlgorithm, so every damage a
//   checkpoint reader finds is found here too, and a run's --resume refuses it in one line
//   (written by algorithm 'hiro-policy', expected 'hiro').
// * Section "policy" (u64 strings as in the byte codec): u32 kPolicyFileVersion; the env's
//   name; its options as the actors build it (u8 task mode: 0 single, 1 multi; u8 compact;
//   u8 observe_block; f64 kinematic max step); u8 goal space (0 hiro_orig, 1 hiro_xy); i32
//   meta period c; the ActorBlobShape as six i32 (meta_in, meta_out, low_in, low_out,
//   hidden1, hidden2); where it came from (the checkpoint's path) and its env steps (u64).
// * Section "actors": the actor-nets channel blob (common/hiro/actor_blob.h), BlobHeader
//   included, as a u64 byte count and the bytes. read_policy_file() checks its header against
//   the layout of the stored shape.
// * Every problem reading a file is a CorruptData "checkpoint <path>...: <what>" (the CLI's
//   one line, exit 1); a missing file is std::system_error.
// * Torch-free and Eigen-free: the learner's export, the actors and the Python binding use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/hiro/actor_blob.h"
#include "common/hiro/goal_space.h"

namespace ringrl::hiro {

/// The checkpoint "algorithm" name of a policy file.
inline constexpr const char* kPolicyAlgorithm = "hiro-policy";
/// Layout of the "policy" section; bumped whenever it changes.
inline constexpr std::uint32_t kPolicyFileVersion = 1;

/// Everything of a policy file but the weights.
struct PolicyInfo {
  std::string env;  // envs/maze/factory.h name
  bool multi_target = false;
  bool compact = false;
  bool observe_block = false;
  double kinematic_max_step = 0;
  GoalSpaceKind goal_space = GoalSpaceKind::kOrig;
  int meta_period = kDefaultMetaPeriod;
  ActorBlobShape shape;
  std::string source;  // the checkpoint it was exported from
  std::uint64_t env_steps = 0;
};

struct PolicyFile {
  PolicyInfo info;
  std::vector<std::byte> blob;  // the actor-nets channel blob, checked against info.shape
};

/// Writes `file` to `path` atomically (CheckpointWriter); std::system_error on I/O failure.
void write_policy_file(const std::filesystem::path& path, const PolicyFile& file);
/// Reads and checks a policy file (contract above).
PolicyFile read_policy_file(const std::filesystem::path& path);

}  // namespace ringrl::hiro
