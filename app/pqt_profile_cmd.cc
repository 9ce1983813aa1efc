// `ringrl profile learner`: one learner alone on synthetic data, with a Chrome trace: PQT
// (--algo pqt, the default) on sampled batches, or HIRO (--algo hiro) on replays filled by the
// collector loop.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli_numbers.h"
#include "app/commands.h"
#include "config/hiro_config.h"
#include "config/pqt_config.h"
#include "bench/hiro/hiro_bench.h"
#include "bench/pqt/npe_bench.h"
#include "common/errors.h"
#include "common/weight_channel.h"
#include "learner/cuda_support.h"
#include "learner/pqt/pqt_update.h"
#include "learner/profile.h"
#include "common/process_modes.h"
#include "learner/threads.h"

namespace ringrl::app {
using namespace ringrl::config;  // the config mappers
namespace {

constexpr int kProfileSyntheticBatches = 8;  // distinct sampled batches cycled through

struct ProfileCli {
  std::string algo = "pqt", mode = "pqt", task = "reverse", env = "kinematic-maze", device = "auto", trace, config;
  std::vector<std::string> sets;
  int steps = 100;
};

// A 64-byte aligned weight channel for blobs of `blob_bytes` bytes.
struct ProfileChannel {
  explicit ProfileChannel(std::size_t blob_bytes)
      : bytes(weight_channel_bytes(blob_bytes)),
        memory(static_cast<std::byte*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)), &std::free),
        writer(init_weight_channel(memory.get(), blob_bytes)) {}
  std::size_t bytes;
  std::unique_ptr<std::byte, decltype(&std::free)> memory;
  WeightWriter writer;
};

std::string device_line(const std::string& dev) {
  return dev.rfind("cuda", 0) == 0
             ? learner::describe_cuda_device(dev.size() > 5 ? std::stoi(dev.substr(5)) : 0)
             : (learner::built_with_cuda() ? "cpu (CUDA build, no device visible)" : "cpu (LibTorch without CUDA)");
}

// Per learner thread and phase: the fused kernel's tasks and their busy time, against the
// phase's wall time from the profiler (the relabel pass's and the updates' threads).
std::string hiro_thread_table(hiro::HiroLearner& learner, const learner::PhaseProfiler& profiler) {
  const int threads = learner.arena().threads();
  std::uint64_t tasks = 0;
  for (int p = 0; p < learner::kNumPhases; ++p)
    for (const learner::ThreadBusy& b : learner.arena().busy(static_cast<learner::Phase>(p))) tasks += b.tasks;
  if (tasks == 0) return "(no tasks: the eager kernel runs on torch's intra-op threads)\n";
  std::string out = fmt::format("{:<10}{:>10}", "phase", "wall_ms");
  for (int t = 0; t < threads; ++t)
    out += fmt::format("{:>11}{:>7}{:>7}", fmt::format("t{}_busy_ms", t), "busy%", "tasks");
  out += '\n';
  for (const learner::PhaseSummary& p : profiler.summary()) {
    if (p.count == 0 || (p.phase != learner::Phase::kRelabel && p.phase != learner::Phase::kCritic &&
                         p.phase != learner::Phase::kActor && p.phase != learner::Phase::kTarget))
      continue;
    const double wall_ms = 1e3 * p.total_s;
    out += fmt::format("{:<10}{:>10.1f}", learner::phase_name(p.phase), wall_ms);
    for (const learner::ThreadBusy& b : learner.arena().busy(p.phase))
      out += fmt::format("{:>11.1f}{:>6.1f}%{:>7}", 1e3 * b.seconds, wall_ms > 0 ? 100e3 * b.seconds / wall_ms : 0.0,
                         b.tasks);
    out += '\n';
  }
  return out;
}

// HIRO: `steps` low-level updates, a high-level update (with its relabel pass) every
// high_every of them, a publish after every publish_every, as the training wing schedules them,
// on the learner's threads (learner_threads; 0 = auto, as the wing resolves it).
void run_hiro_profile(const ProfileCli& c) {
  std::vector<std::string> sets{"env=" + c.env, "device=" + c.device};
  sets.insert(sets.end(), c.sets.begin(), c.sets.end());
  const nlohmann::json cfg = resolve_hiro_config(c.config, sets);
  const hiro::HiroTrainOptions t = hiro_train_options_from(cfg);
  learner::set_torch_threads(hiro::hiro_torch_threads(t.learner));  // as the wing has the driver set them
  keep_freed_memory();
  hiro::HiroLearner learner(t.learner);
  bench::fill_replays(learner, hiro_actor_options_from(cfg), t.initial_steps);
  const std::size_t blob_bytes = learner.blob_bytes();
  std::unique_ptr<std::byte, decltype(&std::free)> blob(
      static_cast<std::byte*>(std::aligned_alloc(64, (blob_bytes + 63) / 64 * 64)), &std::free);
  ProfileChannel channel(blob_bytes);
  const std::string dev = bench::hiro_learner_device(learner);

  learner::PhaseProfiler profiler;
  profiler.set_device_sync(bench::hiro_device_sync(learner));
  learner.arena().reset_busy();  // the replay fill ran none of the counted phases; start clean
  for (int s = 1; s <= c.steps; ++s) {
    learner.update_low(/*read_losses=*/true, &profiler);
    if (s % static_cast<int>(t.high_every) == 0) learner.update_high(/*read_losses=*/true, &profiler);
    if (s % static_cast<int>(t.publish_every) == 0) {
      auto scope = learner::profile_scope(&profiler, learner::Phase::kPublish);
      learner.write_blob(blob.get());
      channel.writer.publish(blob.get(), blob_bytes);
    }
  }
  profiler.write_chrome_trace(c.trace);
  std::printf(
      "profile learner: hiro, %d low / %d high updates, env %s (%s), device %s, B=%d hidden=%d, relabel %s, %d "
      "learner thread%s\n%s",
      c.steps, c.steps / static_cast<int>(t.high_every), t.env.c_str(),
      hiro::goal_space_name(t.learner.goal_space.kind), device_line(dev).c_str(), t.learner.batch_size,
      t.learner.hidden, t.learner.relabel.c_str(), t.learner.threads, t.learner.threads == 1 ? "" : "s",
      profiler.summary_table().c_str());
  std::printf("per thread (the fused kernel's tasks; busy%% of the phase's wall time):\n%s",
              hiro_thread_table(learner, profiler).c_str());
  std::printf("trace: %s (open in Perfetto or chrome://tracing)\n", c.trace.c_str());
}

void run_profile(const ProfileCli& c) {
  if (c.trace.empty()) throw UsageError("--trace FILE is required: expected the Chrome trace output path");
  if (c.steps < 1) throw UsageError(fmt::format("--steps {}: expected at least 1", c.steps));
  if (c.algo == "hiro") return run_hiro_profile(c);
  if (c.algo != "pqt") throw UsageError(fmt::format("--algo {}: expected pqt or hiro", c.algo));
  std::vector<std::string> sets{"task=" + c.task, "device=" + c.device};
  sets.insert(sets.end(), c.sets.begin(), c.sets.end());
  const nlohmann::json cfg = resolve_pqt_config(c.config, c.mode, sets);
  const learner::PqtTrainOptions t = train_options_from(cfg);
  const std::uint32_t threads = learner::resolve_learner_threads(t.learner_threads, t.actors);
  learner::set_torch_threads(static_cast<int>(threads));
  keep_freed_memory();
  learner::PqtLearner learner(learner_options_from(cfg));
  const auto batches = bench::synthetic_batches(learner, actor_options_from(cfg), kProfileSyntheticBatches);
  std::vector<float> blob(learner.layout().num_floats());
  const std::size_t channel_bytes = weight_channel_bytes(blob.size() * sizeof(float));
  std::unique_ptr<std::byte, decltype(&std::free)> channel_mem(
      static_cast<std::byte*>(std::aligned_alloc(64, (channel_bytes + 63) / 64 * 64)), &std::free);
  WeightWriter channel(init_weight_channel(channel_mem.get(), blob.size() * sizeof(float)));

  learner::PhaseProfiler profiler;
  profiler.set_device_sync(learner.device_synchronizer());
  for (int s = 0; s < c.steps; ++s) {
    const learner::EpisodeBatch* batch = nullptr;
    {
      auto scope = learner::profile_scope(&profiler, learner::Phase::kWaitData);
      batch = &batches[static_cast<std::size_t>(s) % batches.size()];
    }
    learner.step(*batch, &profiler);
    {
      auto scope = learner::profile_scope(&profiler, learner::Phase::kPublish);
      learner.write_blob(blob.data());
      channel.publish(blob.data(), blob.size() * sizeof(float));
    }
  }
  profiler.write_chrome_trace(c.trace);
  const std::string dev_line = device_line(learner.device());
  std::printf("profile learner: %d steps, mode %s, device %s, B=%d T=%d, %u learner thread%s\n%s", c.steps,
              learner::train_mode_name(learner.options().mode), dev_line.c_str(), learner.options().batch_size,
              learner.options().max_len, threads, threads == 1 ? "" : "s", profiler.summary_table().c_str());
  std::printf("trace: %s (open in Perfetto or chrome://tracing)\n", c.trace.c_str());
}

void add_profile_commands(CommandTree& tree) {
  CLI::App* profile = &tree.profile;
  auto p = std::make_shared<ProfileCli>();
  CLI::App* pl = profile->add_subcommand("learner", "Run the learner alone on synthetic data; write a Chrome trace");
  pl->add_option("--algo", p->algo, "pqt or hiro")->capture_default_str();
  pl->add_option("--mode", p->mode, "pqt: pqt, pg, pg+pqt (config preset)")->capture_default_str();
  pl->add_option("--task", p->task, "pqt: task whose rewards the batches carry")->capture_default_str();
  pl->add_option("--env", p->env, "hiro: maze env whose collector fills the replays")->capture_default_str();
  add_unsigned(*pl, "--steps", p->steps, "Learner steps (hiro: low-level updates)", 1)->capture_default_str();
  pl->add_option("--device", p->device, "auto, cpu or cuda:N")->capture_default_str();
  pl->add_option("--trace", p->trace, "Chrome trace output (JSON)")->required();
  pl->add_option("--config", p->config, "Config file (default: configs/pqt.json or configs/hiro.json)");
  pl->add_option("--set", p->sets, "Override a config key (repeatable)");
  pl->callback([p] { run_profile(*p); });
}

const CommandFamily kRegistration(kOrderProfile, add_profile_commands);

}  // namespace
}  // namespace ringrl::app
