// `ringrl checkpoint show FILE`: what a checkpoint or final model holds, verified.
// `ringrl checkpoint export --policy CKPT --out FILE`: a HIRO checkpoint's two acting networks
// as a policy file (common/hiro/policy_file.h), for `env render --policy` and Python.
//
// Opening the file checks its magic, format version, section table and checksum; a damaged,
// foreign or old file is one error line and exit status 1. For a PQT file next to its run's
// config.json, the model is also loaded into a learner made from that config, which proves
// that a later command can use it.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/hiro/hiro_policy.h"
#include "app/commands.h"
#include "config/hiro_config.h"
#include "config/pqt_config.h"
#include "common/checkpoint.h"
#include "common/errors.h"
#include "common/hiro/policy_file.h"
#include "common/runfiles/run_files.h"
#include "learner/hiro/hiro_algorithm.h"
#include "common/runfiles/config.h"
#include "learner/pqt/pqt_trainer.h"

namespace ringrl::app {
using namespace ringrl::config;  // the config mappers
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMaxRunMetaBytes = std::uint64_t{1} << 20;

struct ShowCli {
  std::string file;
  bool json = false;
};

void run_show(const ShowCli& c) {
  if (!fs::is_regular_file(c.file))
    throw UsageError(
        fmt::format("checkpoint '{}' is not a file: expected a checkpoint.bin or model-rep<R>.ckpt", c.file));
  CheckpointReader in(c.file, "");
  nlohmann::json out = {{"file", c.file}, {"algorithm", in.algorithm()}, {"format_version", in.format_version()}};
  nlohmann::json sections = nlohmann::json::object();
  for (const auto& name : in.section_names()) sections[name] = in.section_bytes(name);
  out["sections"] = sections;
  if (in.has_section("run")) {
    ByteReader& r = in.section("run");
    try {
      out["run"] = nlohmann::json::parse(r.get_string(kMaxRunMetaBytes));
    } catch (const nlohmann::json::exception& e) {
      r.fail(std::string("run metadata is not JSON: ") + e.what());
    }
  }
  const fs::path config = fs::path(c.file).parent_path() / runfiles::kResolvedConfigName;
  if (in.algorithm() == "pqt" && fs::exists(config)) {
    const auto learner = learner::load_pqt_model(in, learner_options_from(runfiles::load_config(config)));
    out["model"] = {{"loaded", true},
                    {"version", learner->version()},
                    {"parameters", learner->layout().num_parameters()},
                    {"queue", learner->queue().size()}};
  }
  if (c.json) {
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("%s: %s checkpoint, format version %u\n", c.file.c_str(), in.algorithm().c_str(), in.format_version());
    for (const auto& [name, bytes] : sections.items())
      std::printf("  section %-8s %llu bytes\n", name.c_str(),
                  static_cast<unsigned long long>(bytes.get<std::uint64_t>()));
    if (out.contains("run")) std::printf("  run: %s\n", out["run"].dump().c_str());
    if (out.contains("model")) std::printf("  model: %s\n", out["model"].dump().c_str());
  }
  std::fflush(stdout);
}

struct ExportCli {
  std::string policy, out;
};

// The run metadata of a checkpoint file (its "run" section), or an empty object.
nlohmann::json run_meta(CheckpointReader& in) {
  if (!in.has_section("run")) return nlohmann::json::object();
  ByteReader& r = in.section("run");
  try {
    return nlohmann::json::parse(r.get_string(kMaxRunMetaBytes));
  } catch (const nlohmann::json::exception& e) {
    r.fail(std::string("run metadata is not JSON: ") + e.what());
  }
}

void run_export(const ExportCli& c) {
  if (!fs::is_regular_file(c.policy))
    throw UsageError(fmt::format("--policy '{}' is not a file: expected a HIRO checkpoint.bin or model-rep<R>.ckpt",
                                 c.policy));
  const fs::path config = fs::path(c.policy).parent_path() / runfiles::kResolvedConfigName;
  if (!fs::is_regular_file(config))
    throw UsageError(fmt::format("--policy '{}': no config.json beside it (export from inside its run directory)",
                                 c.policy));
  CheckpointReader in(c.policy, "hiro");
  const nlohmann::json meta = run_meta(in);
  // The networks come from the wing's own load on the CPU: the checkpoint's layout has one reader.
  nlohmann::json cfg = runfiles::load_config(config);
  hiro::HiroTrainOptions t = hiro_train_options_from(cfg);
  t.learner.device = "cpu";
  t.learner.threads = 1;
  const actors::HiroActorOptions ao = hiro_actor_options_from(cfg);
  const auto algo = hiro::make_hiro_algorithm(t);
  algo->begin_repetition(meta.value("rep", 0u));
  algo->load(in);
  hiro::PolicyFile f;
  f.blob.resize(algo->blob_bytes());
  algo->write_blob(f.blob.data());
  hiro::PolicyInfo& i = f.info;
  i.env = ao.env;
  i.multi_target = ao.env_options.task_mode == envs::maze::TaskMode::kMulti;
  i.compact = ao.env_options.compact;
  i.observe_block = ao.env_options.observe_block;
  i.kinematic_max_step = ao.env_options.max_step;
  i.goal_space = ao.goal_space;
  i.meta_period = ao.meta_period;
  i.shape = actors::HiroCollector::blob_shape(ao);
  i.source = c.policy;
  i.env_steps = algo->budget_used();
  (void)actors::policy_actor_options(i);  // the file can rebuild its env
  hiro::write_policy_file(c.out, f);
  std::printf("exported %s (%s, %s, %llu env steps) to %s: %llu bytes\n", c.policy.c_str(), i.env.c_str(),
              hiro::goal_space_name(i.goal_space), static_cast<unsigned long long>(i.env_steps), c.out.c_str(),
              static_cast<unsigned long long>(fs::file_size(c.out)));
  std::fflush(stdout);
}

void add_checkpoint_commands(CommandTree& tree) {
  CLI::App* ck = tree.root.add_subcommand("checkpoint", "Inspect checkpoints and final models of a run directory");
  ck->require_subcommand(1);
  auto c = std::make_shared<ShowCli>();
  CLI::App* show = ck->add_subcommand("show", "Verify a checkpoint file and print what it holds (loads PQT models)");
  show->add_option("file", c->file, "checkpoint.bin or model-rep<R>.ckpt")->required();
  show->add_flag("--json", c->json, "Print one JSON object");
  show->callback([c] { run_show(*c); });
  auto e = std::make_shared<ExportCli>();
  CLI::App* ex = ck->add_subcommand("export", "Write a HIRO checkpoint's acting networks as a small policy file");
  ex->add_option("--policy", e->policy, "HIRO checkpoint.bin or model-rep<R>.ckpt, inside its run directory")
      ->required();
  ex->add_option("--out", e->out, "the policy file to write (checksummed like a checkpoint)")->required();
  ex->callback([e] { run_export(*e); });
}

const CommandFamily kRegistration(kOrderTune + 1, add_checkpoint_commands);

}  // namespace
}  // namespace ringrl::app
