// The transport on its own: `ringrl demo` (the demo wing on the run driver: common/demo,
// actors/demo, learner/demo) and `ringrl bench ring`.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/demo/demo_actor.h"
#include "app/actor_registry.h"
#include "app/cli_numbers.h"
#include "app/commands.h"
#include "bench/ring_bench.h"
#include "common/errors.h"
#include "common/run_segment.h"
#include "common/shm_segment.h"
#include "learner/demo/demo_algorithm.h"

namespace ringrl::app {
namespace {

namespace fs = std::filesystem;

struct DemoCli {
  demo::DemoOptions run;
  double seconds = 10;
  bool json = false;
};

// Runs the demo and prints its summary. Without --run-dir its run files go to a temporary
// directory named after the run id, removed at the end (and at the start, when a demo of the
// same id was killed before it could): the demo is a look at the transport, not a run to keep.
void run_demo_command(DemoCli c) {
  demo::DemoOptions& o = c.run;
  if (!(c.seconds > 0)) throw UsageError(fmt::format("--seconds {}: expected a positive number", c.seconds));
  o.max_seconds = c.seconds;
  o.quiet = c.json;
  if (o.run_id.empty()) o.run_id = fmt::format("demo-{}", getpid());
  (void)segment_name(o.run_id);  // a bad id is refused (UsageError) before it names a directory
  struct RemoveOnExit {
    fs::path dir;
    ~RemoveOnExit() {
      std::error_code ec;
      if (!dir.empty()) fs::remove_all(dir, ec);
    }
  } temporary;
  if (o.run_dir.empty()) {
    temporary.dir = fs::temp_directory_path() / fmt::format("ringrl-{}", o.run_id);
    std::error_code ec;
    fs::remove_all(temporary.dir, ec);
    o.run_dir = temporary.dir.string();
  }
  const demo::DemoSummary s = demo::run_demo(o);
  const learner::DriverSummary& d = s.driver;
  const double seconds = d.seconds > 0 ? d.seconds : 1e-9;
  const nlohmann::json out = {{"demo", "done"},
                              {"actors", o.actors},
                              {"seconds", d.seconds},
                              {"records", d.budget},
                              {"records_per_s", static_cast<double>(d.budget) / seconds},
                              {"mb_per_s", static_cast<double>(s.bytes) / seconds / 1e6},
                              {"weight_versions", s.versions},
                              {"stale", s.stale},
                              {"lag_p50", d.lag_p50},
                              {"lag_max", d.lag_max},
                              {"rms_distance", s.rms_distance},
                              {"restarts", d.actor_restarts},
                              {"interrupted", d.interrupted}};
  if (c.json) {
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf(
        "demo: %llu records in %.1f s = %.2f M records/s (%.0f MB/s), %llu weight versions, lag p50 %llu max %llu "
        "(%llu stale, dropped), rms distance %.4f, restarts %u\n",
        static_cast<unsigned long long>(d.budget), d.seconds, static_cast<double>(d.budget) / seconds / 1e6,
        static_cast<double>(s.bytes) / seconds / 1e6, static_cast<unsigned long long>(s.versions),
        static_cast<unsigned long long>(d.lag_p50), static_cast<unsigned long long>(d.lag_max),
        static_cast<unsigned long long>(s.stale), s.rms_distance,
        d.actor_restarts);
  }
  std::fflush(stdout);
}

void add_transport_commands(CommandTree& tree) {
  register_actor_kind("demo", demo::run_demo_actor);

  auto c = std::make_shared<DemoCli>();
  CLI::App* cmd = tree.root.add_subcommand(
      "demo", "Run the actor -> ring -> learner -> weights loop without a model and print throughput");
  add_unsigned(*cmd, "--actors", c->run.actors, "Actor processes", 1, kMaxActors)->capture_default_str();
  add_real(*cmd, "--seconds", c->seconds, "How long to run", 0)->capture_default_str();
  add_unsigned(*cmd, "--record-bytes", c->run.record_bytes, "Payload bytes per record")->capture_default_str();
  add_unsigned(*cmd, "--dim", c->run.dim, "Weight vector length (floats)")->capture_default_str();
  cmd->add_option("--run-id", c->run.run_id, "Run id for the segment name (default demo-<pid>)");
  cmd->add_option("--run-dir", c->run.run_dir,
                  "Keep the run files (metrics.csv, results.jsonl, checkpoints) here (default: a temporary "
                  "directory, removed at the end)");
  cmd->add_flag("--json", c->json, "Print the summary as one JSON object");
  cmd->callback([c] { run_demo_command(*c); });

  add_ring_bench_command(tree.bench);
}

const CommandFamily kRegistration(kOrderTransport, add_transport_commands);

}  // namespace
}  // namespace ringrl::app
