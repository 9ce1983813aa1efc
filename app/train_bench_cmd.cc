// `ringrl profile learner` and `ringrl bench npe`.
#include "app/train_bench_cmd.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/lstm_sampler.h"
#include "actors/pqt_actor.h"
#include "actors/sampler_bench.h"
#include "app/pqt_config.h"
#include "common/errors.h"
#include "common/program_record.h"
#include "common/runfiles/config.h"
#include "common/weight_channel.h"
#include "envs/bf/scorer.h"
#include "learner/cuda_support.h"
#include "learner/learner_bench.h"
#include "learner/profile.h"
#include "learner/pqt_trainer.h"
#include "learner/threads.h"

namespace ringrl::app {
namespace {

namespace fs = std::filesystem;

constexpr int kProfileSyntheticBatches = 8;  // distinct sampled batches cycled through

// Batches sampled from `learner`'s initial policy and scored on the task: realistic data for
// the learner alone.
std::vector<learner::EpisodeBatch> synthetic_batches(const learner::PqtLearner& learner,
                                                     const actors::PqtActorOptions& ao, int count) {
  actors::SamplerOptions so;
  so.batch_size = ao.batch_size;
  so.max_len = static_cast<int>(ao.score.max_code_length);
  so.eos_token = ao.eos_token;
  so.softmax_tr = ao.softmax_tr;
  actors::LstmSampler sampler(ao.shape, so);
  std::vector<float> blob(learner.layout().num_floats());
  learner.write_blob(blob.data());
  sampler.set_weights(blob.data(), blob.size());
  bf::Scorer scorer = bf::make_task(ao.task, ao.score);
  actors::SampledBatch sb;
  sb.resize(so.batch_size, so.max_len);
  std::vector<learner::EpisodeBatch> out(static_cast<std::size_t>(count));
  for (int k = 0; k < count; ++k) {
    sampler.sample(static_cast<std::uint64_t>(k) + 1, &sb);
    auto& b = out[static_cast<std::size_t>(k)];
    b.resize(so.batch_size, so.max_len);
    b.tokens = sb.tokens;
    b.lengths = sb.lengths;
    b.behaviour_log_probs = sb.log_probs;
    for (int i = 0; i < so.batch_size; ++i) {
      const auto n = static_cast<std::size_t>(sb.lengths[static_cast<std::size_t>(i)]);
      b.rewards[static_cast<std::size_t>(i)] =
          static_cast<float>(scorer.score(program_string(sb.row(i), n)).total_reward);
      b.policy_versions[static_cast<std::size_t>(i)] = 0;
    }
  }
  return out;
}

struct ProfileCli {
  std::string mode = "pqt", task = "reverse", device = "auto", trace, config;
  std::vector<std::string> sets;
  int steps = 100;
};

void run_profile(const ProfileCli& c) {
  if (c.trace.empty()) throw UsageError("--trace FILE is required: expected the Chrome trace output path");
  if (c.steps < 1) throw UsageError(fmt::format("--steps {}: expected at least 1", c.steps));
  std::vector<std::string> sets{"task=" + c.task, "device=" + c.device};
  sets.insert(sets.end(), c.sets.begin(), c.sets.end());
  const nlohmann::json cfg = resolve_pqt_config(c.config, c.mode, sets);
  learner::set_torch_threads();
  learner::PqtLearner learner(learner_options_from(cfg));
  const auto batches = synthetic_batches(learner, actor_options_from(cfg), kProfileSyntheticBatches);
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
  const std::string dev = learner.device();
  const std::string dev_line =
      dev.rfind("cuda", 0) == 0
          ? learner::describe_cuda_device(dev.size() > 5 ? std::stoi(dev.substr(5)) : 0)
          : (learner::built_with_cuda() ? "cpu (CUDA build, no device visible)" : "cpu (LibTorch without CUDA)");
  std::printf("profile learner: %d steps, mode %s, device %s, B=%d T=%d\n%s", c.steps,
              learner::train_mode_name(learner.options().mode), dev_line.c_str(), learner.options().batch_size,
              learner.options().max_len, profiler.summary_table().c_str());
  std::printf("trace: %s (open in Perfetto or chrome://tracing)\n", c.trace.c_str());
}

struct NpeCli {
  std::string task = "reverse", mode = "pqt", config, device = "auto";
  std::vector<std::string> sets;
  std::uint32_t actors = 1;
  double seconds = 20;
  bool json = false;
};

// Actor-only ceiling: `actors` processes sampling and scoring with fixed weights, at once.
double actor_only_ceiling(const actors::PqtActorOptions& ao, const std::vector<float>& weights, std::uint32_t n,
                          double seconds) {
  std::vector<pid_t> pids;
  std::vector<int> fds;
  for (std::uint32_t i = 0; i < n; ++i) {
    int p[2];
    if (pipe(p) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      close(p[0]);
      actors::PqtActorOptions mine = ao;
      mine.seed = ao.seed + i;
      const double rate = actors::actor_only_programs_per_s(mine, weights.data(), seconds);
      const ssize_t w = write(p[1], &rate, sizeof rate);
      _exit(w == static_cast<ssize_t>(sizeof rate) ? 0 : 1);
    }
    close(p[1]);
    pids.push_back(pid);
    fds.push_back(p[0]);
  }
  double total = 0;
  for (std::size_t i = 0; i < pids.size(); ++i) {
    double rate = 0;
    if (read(fds[i], &rate, sizeof rate) != static_cast<ssize_t>(sizeof rate)) rate = 0;
    close(fds[i]);
    waitpid(pids[i], nullptr, 0);
    total += rate;
  }
  return total;
}

void run_npe_bench(const NpeCli& c) {
  if (!(c.seconds > 0)) throw UsageError(fmt::format("--seconds {}: expected a positive number", c.seconds));
  std::vector<std::string> sets{"task=" + c.task, "device=" + c.device, fmt::format("actors={}", c.actors),
                                "max_npe=0", "stop_on_success=false", "repetitions=1",
                                fmt::format("max_seconds={}", c.seconds), "checkpoint_every_s=0"};
  sets.insert(sets.end(), c.sets.begin(), c.sets.end());
  const nlohmann::json cfg = resolve_pqt_config(c.config, c.mode, sets);

  // 1. End to end: actors + rings + learner + weight broadcast.
  const fs::path dir = fs::temp_directory_path() / fmt::format("ringrl-bench-npe-{}", getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  learner::PqtTrainOptions t = train_options_from(cfg);
  t.run_dir = dir.string();
  t.config_path = runfiles::write_resolved(cfg, dir).string();
  t.quiet = true;
  learner::TrainSummary e2e;
  try {
    e2e = learner::run_pqt_training(t);
  } catch (...) {
    fs::remove_all(dir);
    throw;
  }
  fs::remove_all(dir);

  // 2. Actor-only ceiling with the same actors, the initial policy, no learner, no transport.
  const actors::PqtActorOptions ao = actor_options_from(cfg);
  learner::PqtLearner fresh(t.learner);
  std::vector<float> weights(fresh.layout().num_floats());
  fresh.write_blob(weights.data());
  const double ceiling = actor_only_ceiling(ao, weights, c.actors, c.seconds);

  // 3. Learner alone on synthetic batches.
  learner::LearnerBenchOptions lb;
  lb.learner = t.learner;
  lb.seconds = std::min(c.seconds / 2, 5.0);
  const learner::LearnerBenchResult lr = learner::bench_learner_step(lb);

  const double efficiency = ceiling > 0 ? e2e.steady_npe_per_s / ceiling : 0;
  const nlohmann::json out = {{"bench", "npe"},
                              {"task", c.task},
                              {"mode", c.mode},
                              {"actors", c.actors},
                              {"npe_per_s", e2e.steady_npe_per_s},
                              {"npe_per_s_with_startup", e2e.npe_per_s},
                              {"actor_only_npe_per_s", ceiling},
                              {"efficiency", efficiency},
                              {"learner_updates_per_s", lr.ours_updates_per_s},
                              {"learner_steps_per_s_in_run", e2e.learner_steps_per_s},
                              {"lag_p50", e2e.lag_p50},
                              {"lag_max", e2e.lag_max},
                              {"device", lr.device},
                              {"seconds", c.seconds}};
  if (c.json) {
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("npe: %u actor(s), task %s, mode %s: end to end %.0f NPE/s, actor-only ceiling %.0f NPE/s, efficiency %.1f%%\n"
                "     learner alone %.1f updates/s (%.1f in the run), lag p50 %llu max %llu\n",
                c.actors, c.task.c_str(), c.mode.c_str(), e2e.steady_npe_per_s, ceiling, 100 * efficiency,
                lr.ours_updates_per_s, e2e.learner_steps_per_s, static_cast<unsigned long long>(e2e.lag_p50),
                static_cast<unsigned long long>(e2e.lag_max));
  }
  std::fflush(stdout);
}

}  // namespace

void add_profile_and_npe_bench_commands(CLI::App& root, CLI::App& bench) {
  CLI::App* profile = root.add_subcommand("profile", "Profile a component");
  profile->require_subcommand(1);
  auto p = std::make_shared<ProfileCli>();
  CLI::App* pl = profile->add_subcommand("learner", "Run the learner alone on sampled batches; write a Chrome trace");
  pl->add_option("--mode", p->mode, "pqt, pg, pg+pqt (config preset)")->capture_default_str();
  pl->add_option("--task", p->task, "Task whose rewards the batches carry")->capture_default_str();
  pl->add_option("--steps", p->steps, "Learner steps")->capture_default_str();
  pl->add_option("--device", p->device, "auto, cpu or cuda:N")->capture_default_str();
  pl->add_option("--trace", p->trace, "Chrome trace output (JSON)")->required();
  pl->add_option("--config", p->config, "Config file (default: configs/pqt.json)");
  pl->add_option("--set", p->sets, "Override a config key (repeatable)");
  pl->callback([p] { run_profile(*p); });

  auto n = std::make_shared<NpeCli>();
  CLI::App* npe = bench.add_subcommand("npe", "End-to-end programs executed per second vs the actor-only ceiling");
  npe->add_option("--task", n->task, "BF task")->capture_default_str();
  npe->add_option("--mode", n->mode, "pqt, pg, pg+pqt")->capture_default_str();
  npe->add_option("--actors", n->actors, "Actor processes")->check(CLI::Range(1u, 256u))->capture_default_str();
  npe->add_option("--seconds", n->seconds, "Seconds per measurement")->capture_default_str();
  npe->add_option("--device", n->device, "auto, cpu or cuda:N")->capture_default_str();
  npe->add_option("--config", n->config, "Config file (default: configs/pqt.json)");
  npe->add_option("--set", n->sets, "Override a config key (repeatable)");
  npe->add_flag("--json", n->json, "Print one JSON object");
  npe->callback([n] { run_npe_bench(*n); });
}

}  // namespace ringrl::app
