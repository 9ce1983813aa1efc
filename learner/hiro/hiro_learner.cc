#include "learner/hiro/hiro_learner.h"

#include <cmath>
#include <cstring>
#include <optional>

#include <torch/torch.h>

#include "common/errors.h"
#include "common/hiro/state_format.h"
#include "common/seeds.h"
#include "envs/maze/factory.h"
#include "learner/hiro/hiro_ops.h"
#include "learner/td3/fifo_replay.h"
#include "learner/td3/td3.h"

namespace ringrl::hiro {

using td3::Actor;
using td3::FifoReplay;
using td3::Td3Agent;
using td3::Td3Batch;
using td3::Td3Options;
using td3::Td3Stats;

namespace {

constexpr std::uint64_t kLowSeedSalt = 1;  // stream seeds: mix_seed(options.seed, salt)
constexpr std::uint64_t kHighSeedSalt = 2;
constexpr std::uint64_t kLearnerSeedSalt = 3;

torch::Device resolve_device(const std::string& name) {
  if (name == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  if (name != "cpu" && name.rfind("cuda", 0) != 0)
    throw UsageError("device '" + name + "' (expected auto, cpu or cuda:N)");
  torch::Device d(torch::kCPU);
  try {
    d = torch::Device(name);
  } catch (const std::exception&) {
    throw UsageError("device '" + name + "' (expected auto, cpu or cuda:N)");
  }
  if (d.is_cuda() &&
      (!torch::cuda::is_available() || (d.has_index() && d.index() >= static_cast<int>(torch::cuda::device_count()))))
    throw UsageError("device " + name + " is not available here (CUDA devices: " +
                     std::to_string(torch::cuda::is_available() ? torch::cuda::device_count() : 0) + ")");
  return d;
}

// device_replay: "on", "off", or "auto" (on exactly when the learner's device is CUDA).
bool replay_on_device(const std::string& mode, const torch::Device& device) {
  if (mode == "on") return true;
  if (mode == "off") return false;
  return device.is_cuda();
}

Td3Options agent_options(const HiroOptions& o, bool low) {
  Td3Options t;
  t.shape.input_dim = o.obs_dim + (low ? o.goal_space.dim : o.context_dim);
  t.shape.action_dim = low ? o.action_dim() : o.goal_space.dim;
  t.shape.action_low = low ? o.action_low : o.goal_space.low;
  t.shape.action_high = low ? o.action_high : o.goal_space.high;
  t.shape.hidden1 = o.hidden;
  t.shape.hidden2 = o.hidden;
  t.shape.masked_inputs = low && o.goal_space.mask_xy ? hiro::kMaskedInputDims : 0;
  t.actor_lr = o.actor_lr;
  t.critic_lr = o.critic_lr;
  t.tau = o.tau;
  t.gamma = low ? o.gamma_low : o.gamma_high;
  t.update_period = o.update_period;
  t.target_noise = o.target_noise;
  t.target_noise_clip = o.target_noise_clip;
  const HiroStreamSeeds seeds = hiro_stream_seeds(o.seed);
  t.seed = low ? seeds.low : seeds.high;
  t.kernel = td3::parse_td3_kernel(o.td3_kernel);
  t.cuda_graphs = td3::parse_cuda_graphs(o.cuda_graphs);
  t.adam_form = td3::parse_adam_form(o.adam_form);
  t.actor_zero_grad_steps = o.actor_zero_grad_steps;
  t.precision = td3::parse_td3_precision(o.precision);
  t.threads = o.threads;
  return t;
}

HiroUpdateStats read_stats(const Td3Stats& s, bool read) {
  HiroUpdateStats out;
  out.actor_step = s.actor_step;
  out.actor_changed = s.actor_changed;
  if (read) {
    out.critic_loss = s.critic_loss.item<double>();
    if (s.actor_step) out.actor_loss = s.actor_loss.item<double>();
  }
  return out;
}

}  // namespace

HiroStreamSeeds hiro_stream_seeds(std::uint64_t seed) noexcept {
  return {mix_seed(seed, kLowSeedSalt), mix_seed(seed, kHighSeedSalt), mix_seed(seed, kLearnerSeedSalt)};
}

void HiroOptions::validate() const {
  const hiro::GoalSpace& gs = goal_space;
  if (gs.dim < 1 || gs.low.size() != static_cast<std::size_t>(gs.dim) || gs.high.size() != gs.low.size())
    throw UsageError("hiro: goal space of dim " + std::to_string(gs.dim) + " with " + std::to_string(gs.low.size()) +
                     " bounds (build it with make_goal_space)");
  if (obs_dim < gs.dim)
    throw UsageError("hiro: obs_dim " + std::to_string(obs_dim) + " is below the goal dim " + std::to_string(gs.dim));
  if (gs.mask_xy && obs_dim < hiro::kMaskedInputDims)
    throw UsageError("hiro: x,y masking needs obs_dim >= 2, got " + std::to_string(obs_dim));
  if (context_dim < 1) throw UsageError("hiro: context_dim must be >= 1, got " + std::to_string(context_dim));
  if (action_low.empty() || action_low.size() != action_high.size())
    throw UsageError("hiro: action box has " + std::to_string(action_low.size()) + "/" +
                     std::to_string(action_high.size()) + " bounds");
  if (meta_period < 1) throw UsageError("hiro: meta_period must be >= 1, got " + std::to_string(meta_period));
  if (batch_size < 1) throw UsageError("hiro: batch_size must be >= 1, got " + std::to_string(batch_size));
  if (replay_capacity < 1) throw UsageError("hiro: replay_capacity must be >= 1, got 0");
  if (threads < 1 || threads > learner::kMaxTaskThreads)
    throw UsageError("hiro: threads must be in [1, " + std::to_string(learner::kMaxTaskThreads) + "], got " +
                     std::to_string(threads));
  (void)parse_relabel_strategy(relabel);
  (void)td3::parse_td3_kernel(td3_kernel);
  (void)td3::parse_cuda_graphs(cuda_graphs);
  (void)td3::parse_adam_form(adam_form);
  (void)td3::parse_td3_precision(precision);
  if (device_replay != "auto" && device_replay != "on" && device_replay != "off")
    throw UsageError("hiro: device_replay '" + device_replay + "': expected auto, on or off");
  for (const int d : {obs_dim, action_dim(), goal_space.dim, context_dim, meta_period})
    if (d > hiro::kMaxRecordDim)
      throw UsageError("hiro: dimension " + std::to_string(d) + " exceeds what the records carry (at most " +
                       std::to_string(hiro::kMaxRecordDim) + ")");
}

int hiro_torch_threads(const HiroOptions& o) {
  const td3::Td3Kernel kernel = td3::parse_td3_kernel(o.td3_kernel);
  const bool fused =
      kernel == td3::Td3Kernel::kFused || (kernel == td3::Td3Kernel::kAuto && resolve_device(o.device).is_cpu());
  return fused ? 1 : o.threads;
}

HiroOptions make_hiro_options(const std::string& env_name, hiro::GoalSpaceKind kind,
                              const envs::maze::MazeEnvOptions& env_options) {
  const envs::EnvSpec spec = envs::maze::maze_env_spec(env_name, env_options);
  const envs::Box full = envs::maze::maze_subgoal_box(env_name, env_options);
  HiroOptions o;
  o.goal_space = hiro::make_goal_space(kind, spec.obs_dim, full.low, full.high, env_name);
  o.obs_dim = spec.obs_dim;
  o.context_dim = spec.task.context_dim();
  o.action_low = spec.action.low;
  o.action_high = spec.action.high;
  return o;
}

HiroOptions make_hiro_options(const std::string& env_name, hiro::GoalSpaceKind kind) {
  return make_hiro_options(env_name, kind, envs::maze::MazeEnvOptions{});
}

// A replay's rows on the learner's device: each added row is copied up once, and a batch is
// an index_select there instead of a host gather and a host-to-device copy per update. The
// host FifoReplay stays the source of truth (sampling draws, checkpoints), so both forms
// sample the same rows from the same stream and give the same batches.
class DeviceRows {
 public:
  DeviceRows(const FifoReplay& replay, torch::Device device)
      : rows_(torch::empty({static_cast<std::int64_t>(replay.capacity()), replay.row_floats()},
                           torch::TensorOptions().dtype(torch::kFloat).device(device))) {}

  // After replay.add(): the newest row.
  void add(const FifoReplay& replay) {
    const std::size_t slot = static_cast<std::size_t>((replay.added() - 1) % replay.capacity());
    upload(replay, slot, 1);
  }
  // After replay.load(): every row held.
  void reload(const FifoReplay& replay) { upload(replay, 0, replay.size()); }

  torch::Tensor gather(const std::int64_t* slots, int n) const {
    const auto index = torch::from_blob(const_cast<std::int64_t*>(slots), {n}, torch::kLong).to(rows_.device());
    return rows_.index_select(0, index);
  }

 private:
  void upload(const FifoReplay& replay, std::size_t first, std::size_t count) {
    if (count == 0) return;
    const auto host = torch::from_blob(const_cast<float*>(replay.row(first)),
                                       {static_cast<std::int64_t>(count), replay.row_floats()}, torch::kFloat);
    rows_.narrow(0, static_cast<std::int64_t>(first), static_cast<std::int64_t>(count)).copy_(host);
  }

  torch::Tensor rows_;  // [capacity, row_floats] on the device
};

struct HiroLearner::Impl {
  explicit Impl(const HiroOptions& o)
      : options((o.validate(), o)),
        device(resolve_device(o.device)),
        arena(std::make_shared<learner::TaskArena>(o.threads)),
        low(agent_options(o, true), device, arena),
        high(agent_options(o, false), device, arena),
        low_replay(o.replay_capacity, hiro::TransitionLayout(o.transition_dims()).floats()),
        high_replay(o.replay_capacity, hiro::MetaTransitionLayout(o.meta_transition_dims()).floats()),
        relabeller(parse_relabel_strategy(o.relabel), o.goal_space, o.action_low, o.action_high, device),
        rng(hiro_stream_seeds(o.seed).learner),
        blob_layout(o.actor_blob_shape()),
        blob_gaps(payload_gaps(blob_layout)) {
    if (replay_on_device(o.device_replay, device)) {
      low_rows.emplace(low_replay, device);
      high_rows.emplace(high_replay, device);
    }
  }

  // B rows of `replay` on the device: [B, row_floats].
  torch::Tensor sample_rows(const FifoReplay& replay, const std::optional<DeviceRows>& rows) {
    const int B = options.batch_size;
    std::vector<std::int64_t> slots(static_cast<std::size_t>(B));
    replay.sample(rng, B, slots.data());
    if (rows) return rows->gather(slots.data(), B);
    auto host = torch::empty({B, replay.row_floats()},
                             torch::TensorOptions().dtype(torch::kFloat).pinned_memory(device.is_cuda()));
    replay.gather(slots.data(), B, host.data_ptr<float>());
    return host.to(device, /*non_blocking=*/true);
  }

  HiroOptions options;
  torch::Device device;
  std::shared_ptr<learner::TaskArena> arena;  // both agents' and the relabel pass's threads
  Td3Agent low;
  Td3Agent high;
  FifoReplay low_replay;
  FifoReplay high_replay;
  std::optional<DeviceRows> low_rows, high_rows;  // device_replay
  Relabeller relabeller;
  Rng rng;
  std::vector<float> row;  // staging for one decoded record
  hiro::ActorBlobLayout blob_layout;                          // of the published blob, made once
  std::vector<std::pair<std::size_t, std::size_t>> blob_gaps;  // [first, end) floats no tensor covers

  // The payload's floats that no tensor of `layout` covers (alignment padding): the only ones
  // write_blob() zeroes.
  static std::vector<std::pair<std::size_t, std::size_t>> payload_gaps(const hiro::ActorBlobLayout& layout) {
    std::vector<bool> covered(layout.blob().num_bytes() / sizeof(float), false);
    for (const hiro::MlpOffsets* m : {&layout.meta(), &layout.low()}) {
      const auto mark = [&](std::size_t offset, std::size_t n) {
        for (std::size_t i = offset; i < offset + n && i < covered.size(); ++i) covered[i] = true;
      };
      const auto in = static_cast<std::size_t>(m->in), h1 = static_cast<std::size_t>(m->hidden1),
                 h2 = static_cast<std::size_t>(m->hidden2), out = static_cast<std::size_t>(m->out);
      mark(m->w1, h1 * in);
      mark(m->b1, h1);
      mark(m->w2, h2 * h1);
      mark(m->b2, h2);
      mark(m->w3, out * h2);
      mark(m->b3, out);
      mark(m->mask, in);
      mark(m->mid, out);
      mark(m->half_range, out);
    }
    std::vector<std::pair<std::size_t, std::size_t>> gaps;
    for (std::size_t i = 0; i < covered.size();) {
      if (covered[i]) {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < covered.size() && !covered[j]) ++j;
      gaps.emplace_back(i, j);
      i = j;
    }
    return gaps;
  }
};

HiroLearner::HiroLearner(const HiroOptions& options) : impl_(std::make_unique<Impl>(options)) {}
HiroLearner::~HiroLearner() = default;

const HiroOptions& HiroLearner::options() const noexcept { return impl_->options; }
Td3Agent& HiroLearner::low_agent() noexcept { return impl_->low; }
Td3Agent& HiroLearner::high_agent() noexcept { return impl_->high; }
const FifoReplay& HiroLearner::low_replay() const noexcept { return impl_->low_replay; }
const FifoReplay& HiroLearner::high_replay() const noexcept { return impl_->high_replay; }
learner::TaskArena& HiroLearner::arena() noexcept { return *impl_->arena; }

bool HiroLearner::add_transition(const std::byte* data, std::uint32_t bytes, std::string* error) {
  hiro::TransitionView view;
  if (!hiro::decode_transition(data, bytes, impl_->options.transition_dims(), &view, error)) return false;
  impl_->row.resize(static_cast<std::size_t>(view.count));
  view.copy_floats(impl_->row.data());
  impl_->low_replay.add(impl_->row.data());
  if (impl_->low_rows) impl_->low_rows->add(impl_->low_replay);
  return true;
}

bool HiroLearner::add_meta_transition(const std::byte* data, std::uint32_t bytes, std::string* error) {
  hiro::MetaTransitionView view;
  if (!hiro::decode_meta_transition(data, bytes, impl_->options.meta_transition_dims(), &view, error)) return false;
  impl_->row.resize(static_cast<std::size_t>(view.count));
  view.copy_floats(impl_->row.data());
  impl_->high_replay.add(impl_->row.data());
  if (impl_->high_rows) impl_->high_rows->add(impl_->high_replay);
  return true;
}

HiroUpdateStats HiroLearner::update_low(bool read_losses, learner::PhaseProfiler* profiler) {
  Impl& m = *impl_;
  if (m.low_replay.empty()) throw UsageError("hiro: update_low() before any low-level transition was added");
  const hiro::TransitionLayout L(m.options.transition_dims());
  Td3Batch batch;
  {
    auto scope = learner::profile_scope(profiler, learner::Phase::kSample);
    batch = low_level_batch(m.sample_rows(m.low_replay, m.low_rows), L);
  }
  return read_stats(m.low.update(batch, profiler), read_losses);
}

HiroUpdateStats HiroLearner::update_high(bool read_losses, learner::PhaseProfiler* profiler) {
  Impl& m = *impl_;
  if (m.high_replay.empty()) throw UsageError("hiro: update_high() before any meta transition was added");
  const hiro::MetaTransitionLayout L(m.options.meta_transition_dims());
  HighLevelBatch hb;  // its action, the relabelled goal, comes below
  {
    auto scope = learner::profile_scope(profiler, learner::Phase::kSample);
    hb = high_level_batch(m.sample_rows(m.high_replay, m.high_rows), L);
  }
  {
    // Scored with the online low-level actor (act()), not its target (§9.1).
    auto scope = learner::profile_scope(profiler, learner::Phase::kRelabel);
    m.arena->set_phase(learner::Phase::kRelabel);
    Td3Agent& low = m.low;
    const LowPolicy policy = LowPolicy::on_sums(
        [&low](const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& ia, const torch::Tensor& ib) {
          return low.act_on_sums(a, b, ia, ib);
        });
    hb.td3.a = m.relabeller.relabel(hb.relabel, policy, m.rng).goals;
  }
  return read_stats(m.high.update(hb.td3, profiler), read_losses);
}

namespace {

// Copies one network's tensors into the payload at `m`'s offsets: straight from a contiguous
// float CPU tensor (no torch call: this runs after every update), else through a host copy.
void write_actor(Actor& actor, const hiro::MlpOffsets& m, float* payload) {
  torch::NoGradGuard no_grad;
  const auto put = [payload](const torch::Tensor& t, std::size_t offset) {
    const auto n = sizeof(float) * static_cast<std::size_t>(t.numel());
    if (t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.is_contiguous()) {
      std::memcpy(payload + offset, t.data_ptr<float>(), n);
      return;
    }
    const auto host = t.detach().to(torch::kCPU, torch::kFloat).contiguous();
    std::memcpy(payload + offset, host.data_ptr<float>(), n);
  };
  put(actor->fc1->weight, m.w1);
  put(actor->fc1->bias, m.b1);
  put(actor->fc2->weight, m.w2);
  put(actor->fc2->bias, m.b2);
  put(actor->out->weight, m.w3);
  put(actor->out->bias, m.b3);
  put(actor->mask, m.mask);
  put(actor->mid, m.mid);
  put(actor->half_range, m.half_range);
}

}  // namespace

std::size_t HiroLearner::blob_bytes() const { return impl_->blob_layout.channel_bytes(); }

void HiroLearner::write_blob(std::byte* dst) const {
  const hiro::ActorBlobLayout& layout = impl_->blob_layout;
  write_blob_header(dst, layout.blob());
  auto* payload = reinterpret_cast<float*>(dst + sizeof(BlobHeader));
  for (const auto& [first, end] : impl_->blob_gaps) std::fill(payload + first, payload + end, 0.0f);  // padding is 0
  write_actor(impl_->high.actor(), layout.meta(), payload);
  write_actor(impl_->low.actor(), layout.low(), payload);
}

void HiroLearner::save(ByteWriter& out) const {
  hiro_format::write_learner_head(out, impl_->rng.state());
  impl_->low.save(out);
  impl_->high.save(out);
  impl_->low_replay.save(out);
  impl_->high_replay.save(out);
}

void HiroLearner::load(ByteReader& in) {
  const std::uint64_t rng_state = hiro_format::read_learner_head(in);
  impl_->low.load(in);
  impl_->high.load(in);
  impl_->low_replay.load(in);
  impl_->high_replay.load(in);
  if (impl_->low_rows) impl_->low_rows->reload(impl_->low_replay);
  if (impl_->high_rows) impl_->high_rows->reload(impl_->high_replay);
  impl_->rng.set_state(rng_state);
}

}  // namespace ringrl::hiro
