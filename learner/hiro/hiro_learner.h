// HiroLearner: the learner side of HIRO (spec hiro.md §3-§9) without transport: two TD3
// agents (learner/td3/td3.h), two FIFO replays and the off-policy correction.
//
// Contract:
// * Low level: input obs (+) g (k = goal_space.dim), output the env action box; x,y masked in
//   the actor and both critics under hiro_orig. High level: input obs (+) G, output the goal
//   box, never masked. Both use the same TD3 hyperparameters (§3) except their discounts.
// * add_transition()/add_meta_transition() decode a ring record (transition_record.h), refuse
//   a malformed one (false + reason, nothing stored) and append its float block to the level's
//   FIFO replay.
// * update_low(): B rows uniformly with replacement; x = s (+) g, x' = s' (+) g', reward
//   recomputed as r_lo(s, g, s') (§6.3); one TD3 update. update_high(): B rows; the goal is
//   relabelled (§9, strategy from the options) with the current online low-level actor; x =
//   s_t (+) G_t, x' = s_{t+c} (+) G_{t+c}, r = R (stored); one TD3 update with gamma_high
//   per meta transition. The batches are hiro_ops.h's low_level_batch / high_level_batch of
//   the sampled rows. Each requires a non-empty replay (UsageError otherwise). The
//   update-rate schedule (1 low per env step, 1 high per 10) is the caller's.
// * Random streams: the learner's own (replay indices, relabel draws) and one per agent
//   (initial weights, target smoothing), seeded by hiro_stream_seeds(options.seed): unrelated
//   streams, so no stream reuses another's numbers.
// * save()/load(): both agents, both replays and the learner's stream; load() into a learner
//   built with the same options gives bit-identical later updates.
// * write_blob(): both online actors (meta, then low level) as a channel blob of the
//   actor-nets layout (common/hiro/actor_blob.h): BlobHeader, then the tensors;
//   blob_bytes() bytes. Reads the device weights back to the host (a sync on CUDA).
// * Device: "auto" (cuda:0 when available, else cpu), "cpu" or "cuda:N". With device_replay
//   (on by default with CUDA) both replays also keep their rows on the device: each added
//   row is copied up once and a batch is an index_select there; otherwise rows are gathered
//   on the host (pinned on CUDA) and copied to the device. Either way the host replay draws
//   the rows, so the batches are the same. One thread uses an instance;
//   options are validated at construction (UsageError). Torch stays out of this header.
// * Threads: both agents' fused kernels and the relabel pass (the low actor over the
//   B x K x c candidate rows, in row chunks) run on one TaskArena of `threads` threads
//   (learner/task_arena.h); the results do not depend on the count. arena() gives its
//   busy time per thread and phase (relabel, critic, actor, target).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/byte_codec.h"
#include "common/hiro/actor_blob.h"
#include "common/hiro/goal_space.h"
#include "common/hiro/transition_record.h"
#include "learner/profile.h"
#include "learner/td3/defaults.h"
#include "learner/task_arena.h"

namespace ringrl::envs::maze {
struct MazeEnvOptions;
}

namespace ringrl::td3 {
class Td3Agent;
class FifoReplay;
}  // namespace ringrl::td3

namespace ringrl::hiro {

struct HiroOptions {
  hiro::GoalSpace goal_space;  // k, goal box, ZERO_OBS
  int obs_dim = 0;
  int context_dim = 0;            // dim(G)
  std::vector<float> action_low;  // env action box (low-level output)
  std::vector<float> action_high;
  int meta_period = hiro::kDefaultMetaPeriod;  // c
  int hidden = td3::kDefaultHidden;            // both hidden layers, both levels (§4)
  double actor_lr = td3::kDefaultActorLr;
  double critic_lr = td3::kDefaultCriticLr;
  double tau = td3::kDefaultTau;
  double gamma_low = td3::kDefaultGamma;           // per env step
  double gamma_high = td3::kDefaultGamma;          // per meta transition, not 0.99^c (§12.5)
  int batch_size = td3::kDefaultBatchSize;         // each level
  int update_period = td3::kDefaultUpdatePeriod;   // actor and target period, both levels
  double target_noise = td3::kDefaultTargetNoise;  // absolute, both levels
  double target_noise_clip = td3::kDefaultTargetNoiseClip;
  std::size_t replay_capacity = td3::kDefaultReplayCapacity;  // each buffer
  std::string relabel = "sample";                             // sample | fun | none (§9)
  std::string device = "auto";                                // auto | cpu | cuda:N
  std::string td3_kernel = "auto";                            // auto | eager | fused | graph (td3.h)
  std::string cuda_graphs = "auto";                           // auto | on | off: the graph kernel's capture (td3.h)
  std::string device_replay = "auto";                         // auto (on with CUDA) | on | off
  std::string adam_form = "tf";                               // tf (the reference) | torch (td3.h)
  bool actor_zero_grad_steps = false;                         // the reference's off-step Adam steps (§5)
  std::string precision = "fp32";  // fp32 (the reference) | bf16 (a departure: td3.h, the fused CPU kernel)
  int threads = 1;  // the fused kernels' and the relabel pass's threads (the wing: learner_threads)
  std::uint64_t seed = 0;

  int action_dim() const noexcept { return static_cast<int>(action_low.size()); }
  hiro::HiroDims dims() const noexcept { return {obs_dim, action_dim(), goal_space.dim, context_dim}; }
  hiro::TransitionDims transition_dims() const noexcept { return {obs_dim, action_dim(), goal_space.dim}; }
  hiro::MetaTransitionDims meta_transition_dims() const noexcept {
    return {obs_dim, action_dim(), goal_space.dim, context_dim, meta_period};
  }
  /// Shapes of the two acting networks in the actor-nets blob.
  hiro::ActorBlobShape actor_blob_shape() const noexcept {
    return {obs_dim + context_dim, goal_space.dim, obs_dim + goal_space.dim, action_dim(), hidden, hidden};
  }
  /// Throws UsageError naming the first bad value.
  void validate() const;
};

/// The seeds of the learner's three random streams: mix_seed(seed, salt) of the run seed
/// (common/seeds.h), one salt per stream.
struct HiroStreamSeeds {
  std::uint64_t low = 0;      // low-level agent: initial weights, then target smoothing
  std::uint64_t high = 0;     // high-level agent: the same
  std::uint64_t learner = 0;  // the learner: replay indices and relabel draws
};
HiroStreamSeeds hiro_stream_seeds(std::uint64_t seed) noexcept;

/// Options for HIRO on a maze env (envs/maze/factory.h) with goal space `kind`: dims, action
/// box, goal box and context from the env's spec; the rest at the spec defaults.
HiroOptions make_hiro_options(const std::string& env_name, hiro::GoalSpaceKind kind,
                              const envs::maze::MazeEnvOptions& env_options);
HiroOptions make_hiro_options(const std::string& env_name, hiro::GoalSpaceKind kind);

/// Torch's intra-op threads for a learner process running HiroLearner(options): 1 where the
/// fused kernel runs (its arena holds the threads; torch's own pool would only spin against
/// it on the few small ops left), options.threads where the eager kernel does.
int hiro_torch_threads(const HiroOptions& options);

/// What one update did (losses read back to the host).
struct HiroUpdateStats {
  double critic_loss = 0.0;
  double actor_loss = 0.0;  // 0 when the actor step was skipped
  bool actor_step = false;
  bool actor_changed = false;  // the acting network's weights moved (td3::Td3Stats)
};

class HiroLearner {
 public:
  explicit HiroLearner(const HiroOptions& options);
  ~HiroLearner();
  HiroLearner(const HiroLearner&) = delete;
  HiroLearner& operator=(const HiroLearner&) = delete;

  /// Decodes and stores one Transition record; false + *error on a malformed one.
  bool add_transition(const std::byte* data, std::uint32_t bytes, std::string* error);
  /// Decodes and stores one MetaTransition record; false + *error on a malformed one.
  bool add_meta_transition(const std::byte* data, std::uint32_t bytes, std::string* error);

  /// One low-level TD3 update. `read_losses` = false skips the host read-back (no sync).
  /// With `profiler`, its phases (sample, critic, actor, target) are recorded there.
  HiroUpdateStats update_low(bool read_losses = true, learner::PhaseProfiler* profiler = nullptr);
  /// One high-level TD3 update with relabelling (phases: sample, relabel, critic, actor, target).
  HiroUpdateStats update_high(bool read_losses = true, learner::PhaseProfiler* profiler = nullptr);

  const HiroOptions& options() const noexcept;
  td3::Td3Agent& low_agent() noexcept;
  td3::Td3Agent& high_agent() noexcept;
  const td3::FifoReplay& low_replay() const noexcept;
  const td3::FifoReplay& high_replay() const noexcept;
  /// The threads both levels' updates and the relabel pass run on.
  learner::TaskArena& arena() noexcept;

  /// Bytes of the actor-nets channel blob (header included).
  std::size_t blob_bytes() const;
  /// Writes both online actors into `dst` (blob_bytes() bytes, 64-byte aligned).
  void write_blob(std::byte* dst) const;

  void save(ByteWriter& out) const;
  void load(ByteReader& in);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringrl::hiro
