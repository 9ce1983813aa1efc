// `ringrl env list|rollout|render` and `ringrl bench env`, run as a user would.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "envs/maze/trajectory.h"

namespace {

struct CliRun {
  int status = -1;
  std::string out;
};

// Runs `ringrl <args>` with stderr folded into stdout.
CliRun ringrl(const std::string& args) {
  CliRun r;
  const std::string cmd = std::string(RINGRL_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "ringrl_envcli_" + std::to_string(getpid()) + "_" + name;
}

nlohmann::json last_json_line(const std::string& out) {
  std::istringstream in(out);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty() && line.front() == '{') last = line;
  return nlohmann::json::parse(last);
}

TEST(EnvCli, ListNamesEveryEnv) {
  const CliRun r = ringrl("env list");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* name :
       {"ant-maze", "ant-push", "ant-fall", "point-maze", "kinematic-maze", "kinematic-push", "kinematic-fall"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  const CliRun j = ringrl("env list --json");
  ASSERT_EQ(j.status, 0) << j.out;
  const nlohmann::json all = nlohmann::json::parse(j.out);
  EXPECT_EQ(all.size(), 7u);
  EXPECT_EQ(all[0]["obs_dim"], 30);
}

TEST(EnvCli, RolloutJsonIsDeterministic) {
  const std::string args =
      "env rollout --env kinematic-maze --steps 1200 --policy random "
      "--seed 5 --json";
  const CliRun a = ringrl(args);
  ASSERT_EQ(a.status, 0) << a.out;
  const nlohmann::json ja = last_json_line(a.out);
  EXPECT_EQ(ja["env"], "kinematic-maze");
  EXPECT_EQ(ja["steps"], 1200);
  EXPECT_EQ(ja["episodes"], 3);  // 500 + 500 + 200
  EXPECT_GT(ja["steps_per_s"].get<double>(), 0.0);
  ASSERT_EQ(ja["final_xy"].size(), 2u);
  const CliRun b = ringrl(args);
  EXPECT_EQ(last_json_line(b.out)["final_xy"], ja["final_xy"]);
  const CliRun c = ringrl(
      "env rollout --env kinematic-maze --steps 1200 --policy random "
      "--seed 6 --json");
  EXPECT_NE(last_json_line(c.out)["final_xy"], ja["final_xy"]);
}

TEST(EnvCli, AntRolloutWritesTrajectoryAndRenders) {
  const std::string csv = temp_path("ant.csv");
  const std::string png = temp_path("ant.png");
  const CliRun r = ringrl("env rollout --env ant-maze --steps 30 --policy zero --json --out " + csv);
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = last_json_line(r.out);
  EXPECT_EQ(j["episodes"], 1);
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;  // no MuJoCo warnings
  const std::vector<ringrl::envs::maze::TrajectoryRow> rows = ringrl::envs::maze::read_trajectory_csv(csv);
  ASSERT_EQ(rows.size(), 31u);  // the reset observation plus 30 steps
  EXPECT_EQ(rows.back().t, 30);
  EXPECT_DOUBLE_EQ(rows.back().x, j["final_xy"][0].get<double>());
  const CliRun d = ringrl("env render --env ant-maze --traj " + csv + " --out " + png);
  ASSERT_EQ(d.status, 0) << d.out;
  std::ifstream in(png, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  std::remove(csv.c_str());
  std::remove(png.c_str());
}

TEST(EnvCli, BadInputExitsWithStatusTwo) {
  CliRun r = ringrl("env rollout --env nope --steps 3 --policy zero");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("ringrl: error: unknown env 'nope'"), std::string::npos) << r.out;
  r = ringrl("env rollout --env ant-maze --steps 3 --policy greedy");
  EXPECT_EQ(r.status, 2) << r.out;
  r = ringrl("env rollout --env ant-maze --steps 0 --policy zero");
  EXPECT_EQ(r.status, 2) << r.out;
  r = ringrl("env render --env ant-maze --traj /nonexistent.csv --out " + temp_path("x.png"));
  EXPECT_EQ(r.status, 2) << r.out;
  r = ringrl("bench env --env kinematic-maze --seconds 0");
  EXPECT_EQ(r.status, 2) << r.out;
  r = ringrl("bench env --env kinematic-maze --clock sundial");
  EXPECT_EQ(r.status, 2) << r.out;
}

TEST(EnvCli, BenchJsonHasTheFields) {
  CliRun r = ringrl("bench env --env kinematic-maze --seconds 0.2 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json j = last_json_line(r.out);
  EXPECT_EQ(j["bench"], "env");
  EXPECT_EQ(j["env"], "kinematic-maze");
  EXPECT_GT(j["env_steps_per_s"].get<double>(), 0.0);
  EXPECT_TRUE(j["bare_physics_steps_per_s"].is_null());
  EXPECT_EQ(j["frame_skip"], 1);
  EXPECT_TRUE(j["efficiency"].is_null());
  EXPECT_EQ(j["clock"], "thread_cpu");

  // Fixed work: exactly --steps env steps per round, the same episodes in both phases.
  r = ringrl("bench env --env point-maze --steps 700 --rounds 2 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_GT(last_json_line(r.out)["bare_physics_steps_per_s"].get<double>(), 0.0);
  r = ringrl("bench env --env kinematic-maze --steps -1");
  EXPECT_EQ(r.status, 2) << r.out;

  r = ringrl("bench env --env ant-maze --seconds 0.4 --rounds 1 --clock wall --json");
  ASSERT_EQ(r.status, 0) << r.out;
  j = last_json_line(r.out);
  EXPECT_EQ(j["frame_skip"], 5);
  const double env = j["env_steps_per_s"].get<double>();
  const double bare = j["bare_physics_steps_per_s"].get<double>();
  EXPECT_GT(bare, 0.0);
  EXPECT_NEAR(j["efficiency"].get<double>(), env * 5 / bare, 1e-9);
  EXPECT_EQ(j["clock"], "wall");
}

}  // namespace
