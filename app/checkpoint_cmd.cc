// `ringrl checkpoint show FILE`: what a checkpoint or final model holds, verified.
//
// Opening the file checks its magic, format version, section table and checksum; a damaged,
// foreign or old file is one error line and exit status 1. For a PQT file next to its run's
// config.json, the model is also loaded into a learner made from that config, which proves
// that a later command can use it.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/pqt_config.h"
#include "common/checkpoint.h"
#include "common/errors.h"
#include "common/runfiles/config.h"
#include "learner/pqt/pqt_trainer.h"

namespace ringrl::app {
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
  const fs::path config = fs::path(c.file).parent_path() / "config.json";
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

void add_checkpoint_commands(CommandTree& tree) {
  CLI::App* ck = tree.root.add_subcommand("checkpoint", "Inspect checkpoints and final models of a run directory");
  ck->require_subcommand(1);
  auto c = std::make_shared<ShowCli>();
  CLI::App* show = ck->add_subcommand("show", "Verify a checkpoint file and print what it holds (loads PQT models)");
  show->add_option("file", c->file, "checkpoint.bin or model-rep<R>.ckpt")->required();
  show->add_flag("--json", c->json, "Print one JSON object");
  show->callback([c] { run_show(*c); });
}

const CommandFamily kRegistration(kOrderTune + 1, add_checkpoint_commands);

}  // namespace
}  // namespace ringrl::app
