// Td3Agent: one TD3 learner (spec hiro.md §3-§5), generic over input, action and box: HIRO
// instantiates two (low level: obs (+) g -> env action; high level: obs (+) G -> goal), flat
// TD3 is one more configuration (obs (+) G -> env action).
//
// Contract:
// * Networks (§4): actor in -> h1 -> h2 -> act, ReLU, tanh, then mid + half_range * tanh;
//   critics Q1, Q2: concat(x, a) -> h1 -> ReLU -> concat(., a) -> h2 -> ReLU -> 1 (the action
//   enters twice). The first `masked_inputs` entries of x are multiplied by 0 in the actor and
//   both critics (ZERO_OBS: 2 for the hiro_orig low level, else 0). Hidden weights
//   U(+-1/sqrt(fan_in)), output weights U(+-0.003), every bias 0; targets are hard copies.
// * update(batch) (§5), with counter = updates already taken (from 0):
//     eps ~ N(0,1) [B x act] from the agent's Rng, noise = clip(sigma * eps, -c, c), one
//     sample for both target critics; a' = mu_targ(x') + noise, NOT clipped to the box;
//     y = r + gamma * min(Q1_targ(x', a'), Q2_targ(x', a')) (no terminal masking);
//     critic loss = mean over the 2B Huber(1) terms; one Adam step on both critics;
//     if counter % period == 0: actor loss = -mean Q1(x, mu(x)) with the just-updated Q1, one
//     Adam step on the actor, then the soft update theta_targ <- (1 - tau) theta_targ +
//     tau theta of the actor and both critics; otherwise no actor step at all (a true skip),
//     or, with actor_zero_grad_steps (the reference's quirk, spec §5), one Adam step on the
//     actor with a zero gradient (its moments decay, its step count advances and it still
//     moves by lr_t m / (sqrt(v) + eps)); the targets wait either way;
//     counter += 1.
// * Adam (§3): beta (0.9, 0.999), eps 1e-8, no weight decay, at step t (1-based, per
//   optimiser): m <- b1 m + (1 - b1) grad, v <- b2 v + (1 - b2) grad^2, then
//     kTensorFlow (the default; TF's AdamOptimizer, what the reference ran):
//       theta -= lr sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps);
//     kPyTorch (torch::optim::Adam): theta -= lr / (1 - b1^t) * m / (sqrt(v / (1 - b2^t)) + eps).
//   They differ where sqrt(v) is not far above eps: early steps and small gradients.
// * Device: every tensor the agent owns lives on the device given at construction; batches
//   must be there too. update() returns its losses as device tensors (no host sync).
// * save()/load(): networks, targets, both Adam states, the counter and the Rng, through
//   ByteWriter / ByteReader; load() into an agent built with the same options gives
//   bit-identical later updates. A checkpoint of another shape throws CorruptData.
// * Kernel: kEager runs the update through torch modules, autograd and torch::optim::Adam (any
//   device; for kTensorFlow its epsilon is set to eps / sqrt(1 - b2^t) before step t, which is
//   the TF form); kFused runs learner/td3/td3_fused.h's hand-written CPU passes on the same
//   parameter tensors (CPU only); kGraph runs learner/td3/td3_graph.h's fixed sequence on
//   static buffers (any device), captured as CUDA graphs on CUDA unless cuda_graphs is off;
//   kAuto picks kFused on the CPU, and on CUDA kGraph (kEager with cuda_graphs off). All
//   follow the contract above and share the checkpoint layout.
// * Precision: kFloat32 (the default) computes in float32 throughout. kBfloat16, a named
//   departure from the reference, has the fused kernel multiply its large products (inner and
//   output dimensions >= 64: at the paper's sizes each network's hidden-to-hidden layer,
//   forward and backward, and the weight gradients of it and of the output layer) in bfloat16 with float32 sums (MKL's cblas_gemm_bf16bf16f32, on AMX
//   where the CPU has it); the thin layers, the bias, ReLU and tanh passes, the losses, Adam,
//   the soft update and every stored weight stay float32. Only the fused kernel has it
//   (UsageError with another kernel, or where LibTorch's BLAS has no bf16 product).
// * cuda_graphs: kAuto captures wherever the graph kernel runs on CUDA; kOn is the same but
//   refuses (UsageError) a setup where nothing would be captured (a CPU device, or the eager
//   or fused kernel); kOff never captures.
// * Threads: the fused kernel runs its tasks on a TaskArena (learner/task_arena.h) of
//   `threads` threads, its own or one given at construction (HiroLearner gives both levels
//   one); the results do not depend on the count. The eager kernel runs on torch's intra-op
//   threads (process-wide; the run driver sets them to learner_threads).
// * Profiling: with a PhaseProfiler (learner/profile.h), update() records its phases critic,
//   actor and target; null (the default) records nothing. The arena's busy time per thread
//   counts under the same phases (update() sets them; act() counts under the caller's).
// * One thread uses an instance. Options are validated once (UsageError).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "common/byte_codec.h"
#include "learner/profile.h"
#include "learner/td3/defaults.h"
#include "common/rng.h"
#include "learner/task_arena.h"

namespace ringrl::td3 {

using learner::TaskArena;
using learner::kMaxTaskThreads;


/// How update() computes (file comment).
enum class Td3Kernel { kAuto, kEager, kFused, kGraph };
/// "auto", "eager", "fused", "graph"; UsageError otherwise.
Td3Kernel parse_td3_kernel(const std::string& name);
const char* td3_kernel_name(Td3Kernel k) noexcept;

/// Whether the graph kernel captures CUDA graphs (file comment).
enum class CudaGraphs { kAuto, kOn, kOff };
/// "auto", "on", "off"; UsageError otherwise.
CudaGraphs parse_cuda_graphs(const std::string& name);

/// Where Adam adds epsilon (file comment).
enum class AdamForm { kTensorFlow, kPyTorch };
/// "tf" or "torch"; UsageError otherwise.
AdamForm parse_adam_form(const std::string& name);

/// The number format of the fused kernel's large products (file comment).
enum class Td3Precision { kFloat32, kBfloat16 };
/// "fp32" or "bf16"; UsageError otherwise.
Td3Precision parse_td3_precision(const std::string& name);

/// Sizes and box of one agent's networks.
struct Td3Shape {
  int input_dim = 0;  // x: obs (+) goal or context
  int action_dim = 0;
  std::vector<float> action_low;  // actor output box
  std::vector<float> action_high;
  int hidden1 = kDefaultHidden;
  int hidden2 = kDefaultHidden;
  int masked_inputs = 0;  // leading x entries multiplied by 0 (ZERO_OBS: 2)
};

struct Td3Options {
  Td3Shape shape;
  double actor_lr = kDefaultActorLr;                   // >= 0 (0 freezes the actor)
  double critic_lr = kDefaultCriticLr;                 // >= 0 (0 freezes the critics)
  double tau = kDefaultTau;                            // in [0, 1]
  double gamma = kDefaultGamma;                        // in [0, 1]
  int update_period = kDefaultUpdatePeriod;            // >= 1
  double target_noise = kDefaultTargetNoise;           // >= 0
  double target_noise_clip = kDefaultTargetNoiseClip;  // >= 0
  std::uint64_t seed = 0;                              // initial weights and the agent's Rng
  Td3Kernel kernel = Td3Kernel::kAuto;
  CudaGraphs cuda_graphs = CudaGraphs::kAuto;
  AdamForm adam_form = AdamForm::kTensorFlow;  // §3: TF's Adam
  bool actor_zero_grad_steps = false;          // §5 quirk: zero-gradient actor steps on off updates
  int threads = 1;                             // the fused kernel's threads, 1 to kMaxTaskThreads
  Td3Precision precision = Td3Precision::kFloat32;  // kBfloat16: a departure, fused kernel only

  /// Throws UsageError naming the first bad value.
  void validate() const;
};

/// Actor network (§4).
class ActorImpl : public torch::nn::Module {
 public:
  explicit ActorImpl(const Td3Shape& shape);
  /// [N, input_dim] -> [N, action_dim] inside the box.
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, out{nullptr};
  torch::Tensor mask, mid, half_range;  // buffers: [input_dim], [action_dim], [action_dim]
};
TORCH_MODULE(Actor);

/// Critic network (§4): the action enters at the input and again after the first layer.
class CriticImpl : public torch::nn::Module {
 public:
  explicit CriticImpl(const Td3Shape& shape);
  /// ([N, input_dim], [N, action_dim]) -> [N].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& a);

  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, out{nullptr};
  torch::Tensor mask;  // buffer [input_dim]
};
TORCH_MODULE(Critic);

/// Huber loss terms with delta 1: 0.5 d^2 where |d| <= 1, |d| - 0.5 elsewhere (elementwise).
torch::Tensor huber(const torch::Tensor& diff);

/// One training batch, on the agent's device.
struct Td3Batch {
  torch::Tensor x;       // [B, input_dim]
  torch::Tensor a;       // [B, action_dim]
  torch::Tensor r;       // [B]
  torch::Tensor x_next;  // [B, input_dim]
};

/// What one update did; losses are device scalars (read them when logging).
struct Td3Stats {
  torch::Tensor critic_loss;
  torch::Tensor actor_loss;  // undefined when the actor step was skipped
  bool actor_step = false;     // actor and targets were updated
  bool actor_changed = false;  // the actor's weights moved: an actor step or a zero-gradient step
};

class FusedTd3;
class GraphTd3;

/// A copy of one optimiser's state: the steps it took and, per parameter (in the order of the
/// network's parameters; Q1's then Q2's for the critics), the moments m and v (host tensors).
struct AdamSnapshot {
  std::int64_t steps = 0;
  std::vector<torch::Tensor> m, v;
};

class Td3Agent {
 public:
  /// `arena`: the threads of the fused kernel, shared with other agents; null = an arena of
  /// options.threads of its own.
  Td3Agent(const Td3Options& options, torch::Device device, std::shared_ptr<TaskArena> arena = nullptr);
  ~Td3Agent();
  Td3Agent(const Td3Agent&) = delete;
  Td3Agent& operator=(const Td3Agent&) = delete;

  /// One TD3 update (file comment) with smoothing noise from the agent's Rng; phases go to
  /// `profiler` when it is not null.
  Td3Stats update(const Td3Batch& batch, learner::PhaseProfiler* profiler = nullptr);
  /// The same with the standard-normal draws `eps` [B, action_dim] given (tests); an
  /// undefined `eps` draws them from the agent's Rng.
  Td3Stats update(const Td3Batch& batch, const torch::Tensor& eps, learner::PhaseProfiler* profiler = nullptr);

  /// y = r + gamma * min(Q1_targ, Q2_targ)(x', mu_targ(x') + clip(sigma * eps, -c, c)), no grad.
  torch::Tensor target_q(const torch::Tensor& r, const torch::Tensor& x_next, const torch::Tensor& eps);
  /// Mean over the 2B Huber terms of (Q1(x,a) - y) and (Q2(x,a) - y).
  torch::Tensor critic_loss(const torch::Tensor& x, const torch::Tensor& a, const torch::Tensor& y);
  /// -mean Q1(x, mu(x)).
  torch::Tensor actor_loss(const torch::Tensor& x);
  /// The online actor's deterministic action, no grad (the fused kernel's chunked pass when
  /// it is in use).
  torch::Tensor act(const torch::Tensor& x);
  /// act() on the rows a[ia[r]] + b[ib[r]] (a, b: [*, input_dim]; ia, ib: int64 [N]): the
  /// fused kernel runs the first layer once on a's and b's rows and adds them per output row
  /// (it is linear), the others form the rows. Equal to act() on the formed rows up to float
  /// rounding.
  torch::Tensor act_on_sums(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& ia,
                            const torch::Tensor& ib);
  /// The kernel in use (kAuto resolved).
  Td3Kernel kernel() const noexcept;
  /// True when the update's phases are (or will be, after their warm-up) CUDA graphs.
  bool captures_cuda_graphs() const noexcept;
  /// theta_targ <- (1 - tau) theta_targ + tau theta for the actor and both critics (the eager
  /// and graph kernels' target phase).
  void soft_update();
  /// Standard-normal draws [rows, action_dim] from the agent's Rng, on the device.
  torch::Tensor draw_normal(std::int64_t rows);

  Actor& actor() noexcept { return actor_; }
  Critic& critic1() noexcept { return critic1_; }
  Critic& critic2() noexcept { return critic2_; }
  Actor& actor_target() noexcept { return actor_target_; }
  Critic& critic1_target() noexcept { return critic1_target_; }
  Critic& critic2_target() noexcept { return critic2_target_; }

  /// The actor's and the critics' Adam state (tests, diagnostics).
  AdamSnapshot actor_adam() const;
  AdamSnapshot critic_adam() const;

  /// Updates taken so far.
  std::int64_t counter() const noexcept { return counter_; }
  const Td3Options& options() const noexcept { return options_; }
  torch::Device device() const noexcept { return device_; }
  Rng& rng() noexcept { return rng_; }
  /// The fused kernel's threads (unused by the eager kernel).
  TaskArena& arena() noexcept { return *arena_; }

  void save(ByteWriter& out) const;
  void load(ByteReader& in);

 private:
  Td3Options options_;
  torch::Device device_;
  Rng rng_;
  std::shared_ptr<TaskArena> arena_;
  Actor actor_{nullptr}, actor_target_{nullptr};
  Critic critic1_{nullptr}, critic2_{nullptr}, critic1_target_{nullptr}, critic2_target_{nullptr};
  std::vector<torch::Tensor> critic_params_;                    // Q1 then Q2
  std::unique_ptr<torch::optim::Adam> actor_opt_, critic_opt_;  // kEager
  std::unique_ptr<FusedTd3> fused_;                             // kFused
  std::unique_ptr<GraphTd3> graph_;                             // kGraph
  std::int64_t counter_ = 0;
};

/// The per-parameter Adam layout every kernel saves: per tensor a flag (1 once a step was
/// taken), then the step count and the moments m and v (any device).
void save_adam_moments(ByteWriter& out, std::int64_t steps, const std::vector<torch::Tensor>& m,
                       const std::vector<torch::Tensor>& v);
/// Reads that layout into `m` and `v` (same shapes, any device; 0 where a flag is 0) and
/// returns the step count; CorruptData on a bad flag or step counts that differ.
std::int64_t load_adam_moments(ByteReader& in, std::vector<torch::Tensor>& m, std::vector<torch::Tensor>& v);

/// Writes a float tensor (any device) as a float block (common/float_block.h).
void save_tensor(ByteWriter& out, const torch::Tensor& t);
/// Reads what save_tensor wrote into `t` (same numel, any device); CorruptData naming `what`
/// otherwise.
void load_tensor(ByteReader& in, torch::Tensor& t, const std::string& what);

}  // namespace ringrl::td3
