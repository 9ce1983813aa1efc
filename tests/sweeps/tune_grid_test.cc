// `ringrl tune` without processes: the §6.3 grids, trial decoding, subsets, settings,
// the child command line, aggregation and ordering.
#include "sweeps/tune_grid.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/errors.h"

namespace ringrl::sweeps {
namespace {

using nlohmann::json;

// The UsageError message of `fn`, or "" when it throws none.
template <class Fn>
std::string usage_error(Fn&& fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(TuneGrid, SpaceSizesMatchTheSpec) {
  EXPECT_EQ(tune_space("pg").num_trials(), 12u);
  EXPECT_EQ(tune_space("pg-topk").num_trials(), 48u);
  EXPECT_EQ(tune_space("topk").num_trials(), 60u);
  EXPECT_EQ(tune_space("is").num_trials(), 144u);
  EXPECT_EQ(tune_space("ga").num_trials(), 125u);
  EXPECT_EQ(tune_space_names(), (std::vector<std::string>{"pg", "pg-topk", "topk", "is", "ga"}));
}

TEST(TuneGrid, SpacesMapToTrainModes) {
  EXPECT_EQ(tune_space("pg").mode, "pg");
  EXPECT_EQ(tune_space("pg-topk").mode, "pg+pqt");
  EXPECT_EQ(tune_space("topk").mode, "pqt");
  EXPECT_EQ(tune_space("is").mode, "pg");
  EXPECT_EQ(tune_space("ga").mode, "");
}

TEST(TuneGrid, AxesAreSorted) {
  for (const auto& name : tune_space_names()) {
    const TuneSpace s = tune_space(name);
    for (std::size_t i = 1; i < s.axes.size(); ++i) EXPECT_LT(s.axes[i - 1].name, s.axes[i].name) << name;
  }
}

TEST(TuneGrid, UnknownSpaceNamesTheValue) {
  const std::string msg = usage_error([] { tune_space("pgg"); });
  EXPECT_TRUE(contains(msg, "'pgg'")) << msg;
  EXPECT_TRUE(contains(msg, "pg-topk")) << msg;
}

// Worked by hand: pg's sorted keys are entropy_beta (4 values, least significant), lr (3).
TEST(TuneGrid, PgDecoding) {
  const TuneSpace s = tune_space("pg");
  EXPECT_EQ(s.trial_hparams(0), (json{{"entropy_beta", 0.005}, {"lr", 1e-5}}));
  EXPECT_EQ(s.trial_hparams(1), (json{{"entropy_beta", 0.01}, {"lr", 1e-5}}));
  EXPECT_EQ(s.trial_hparams(4), (json{{"entropy_beta", 0.005}, {"lr", 1e-4}}));
  EXPECT_EQ(s.trial_hparams(5), (json{{"entropy_beta", 0.01}, {"lr", 1e-4}}));
  EXPECT_EQ(s.trial_hparams(11), (json{{"entropy_beta", 0.1}, {"lr", 1e-3}}));
}

// entropy_beta (4), lr (3), topk (1), topk_loss_hparam (4). 13 = 1 + 4·(0 + 3·(0 + 1·1)).
TEST(TuneGrid, PgTopkDecoding) {
  const TuneSpace s = tune_space("pg-topk");
  EXPECT_EQ(s.trial_hparams(13),
            (json{{"entropy_beta", 0.01}, {"lr", 1e-5}, {"topk", 10}, {"topk_loss_hparam", 10.0}}));
  EXPECT_EQ(s.trial_hparams(47),
            (json{{"entropy_beta", 0.1}, {"lr", 1e-3}, {"topk", 10}, {"topk_loss_hparam", 200.0}}));
  EXPECT_TRUE(s.trial_hparams(0)["topk"].is_number_integer());  // the config's topk slot is an integer
}

// entropy_beta (5, includes 0), lr (3), topk (1), topk_loss_hparam (4).
TEST(TuneGrid, TopkDecoding) {
  const TuneSpace s = tune_space("topk");
  EXPECT_EQ(s.trial_hparams(0), (json{{"entropy_beta", 0.0}, {"lr", 1e-5}, {"topk", 10}, {"topk_loss_hparam", 1.0}}));
  // 17 = 2 + 5·(0 + 3·1)
  EXPECT_EQ(s.trial_hparams(17),
            (json{{"entropy_beta", 0.01}, {"lr", 1e-5}, {"topk", 10}, {"topk_loss_hparam", 10.0}}));
  // 59 = 4 + 5·(2 + 3·3)
  EXPECT_EQ(s.trial_hparams(59),
            (json{{"entropy_beta", 0.1}, {"lr", 1e-3}, {"topk", 10}, {"topk_loss_hparam", 200.0}}));
}

// alpha (3), entropy_beta (4), lr (3), replay_temperature (4). 100 = 1 + 3·(1 + 4·(2 + 3·2)).
TEST(TuneGrid, IsDecoding) {
  const TuneSpace s = tune_space("is");
  EXPECT_EQ(s.trial_hparams(100),
            (json{{"alpha", 0.75}, {"entropy_beta", 0.01}, {"lr", 1e-3}, {"replay_temperature", 1.0}}));
  EXPECT_EQ(s.trial_hparams(143),
            (json{{"alpha", 63.0 / 64.0}, {"entropy_beta", 0.1}, {"lr", 1e-3}, {"replay_temperature", 2.0}}));
}

// crossover_rate (5), mutation_rate (5), population (5).
TEST(TuneGrid, GaDecoding) {
  const TuneSpace s = tune_space("ga");
  EXPECT_EQ(s.trial_hparams(7), (json{{"crossover_rate", 0.7}, {"mutation_rate", 0.03}, {"population", 10}}));
  EXPECT_EQ(s.trial_hparams(31), (json{{"crossover_rate", 0.5}, {"mutation_rate", 0.03}, {"population", 25}}));
  EXPECT_EQ(s.trial_hparams(124), (json{{"crossover_rate", 0.95}, {"mutation_rate", 0.15}, {"population", 500}}));
}

TEST(TuneGrid, EveryTrialIsDistinctAndOutOfRangeIsAnError) {
  for (const auto& name : tune_space_names()) {
    const TuneSpace s = tune_space(name);
    std::set<std::string> seen;
    for (std::size_t i = 0; i < s.num_trials(); ++i) seen.insert(s.trial_hparams(i).dump());
    EXPECT_EQ(seen.size(), s.num_trials()) << name;
    const std::string msg = usage_error([&] { s.trial_hparams(s.num_trials()); });
    EXPECT_TRUE(contains(msg, std::to_string(s.num_trials()))) << msg;
  }
}

TEST(TuneSubset, ListsRangesAndUnion) {
  EXPECT_EQ(select_trials(12, "0,5,7", ""), (std::vector<std::size_t>{0, 5, 7}));
  EXPECT_EQ(select_trials(12, "7, 0,5,5", ""), (std::vector<std::size_t>{0, 5, 7}));
  EXPECT_EQ(select_trials(12, "", "2:5"), (std::vector<std::size_t>{2, 3, 4}));
  EXPECT_EQ(select_trials(12, "0,3", "2:5"), (std::vector<std::size_t>{0, 2, 3, 4}));
  EXPECT_EQ(select_trials(12, "", ":3"), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(select_trials(12, "", "10:"), (std::vector<std::size_t>{10, 11}));
  EXPECT_EQ(select_trials(4, "", ""), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(select_trials(12, "11", "0:12").size(), 12u);
}

TEST(TuneSubset, BadInputNamesTheValue) {
  EXPECT_TRUE(contains(usage_error([] { select_trials(12, "a", ""); }), "'a'"));
  EXPECT_TRUE(contains(usage_error([] { select_trials(12, "1,,2", ""); }), "--trials 1,,2"));
  EXPECT_TRUE(contains(usage_error([] { select_trials(12, "-1", ""); }), "'-1'"));
  const std::string past = usage_error([] { select_trials(12, "12", ""); });
  EXPECT_TRUE(contains(past, "trial 12")) << past;
  EXPECT_TRUE(contains(past, "0..11")) << past;
  EXPECT_TRUE(contains(usage_error([] { select_trials(12, "", "5:5"); }), "empty"));
  EXPECT_TRUE(contains(usage_error([] { select_trials(12, "", "6:2"); }), "empty"));
  EXPECT_TRUE(contains(usage_error([] { select_trials(12, "", "0:13"); }), "B <= 12"));
  EXPECT_TRUE(contains(usage_error([] { select_trials(12, "", "3"); }), "expected A:B"));
  EXPECT_TRUE(contains(usage_error([] { select_trials(12, "", "1:2:3"); }), "expected A:B"));
  EXPECT_TRUE(contains(usage_error([] { select_trials(12, "", "x:4"); }), "--trial-range x:4"));
}

TEST(TuneSettings, PaperDefaults) {
  const TuneSettings s = TuneSettings::paper();
  EXPECT_EQ(s.task_cycle, (std::vector<std::string>{"reverse-tune", "remove-char-tune"}));
  EXPECT_EQ(s.repetitions, 50u);
  EXPECT_EQ(s.max_npe, 5'000'000u);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"timestep_limit", "50"},     {"batch_size", "64"},           {"grad_clip_threshold", "50.0"},
      {"param_init_factor", "0.5"}, {"ema_baseline_decay", "0.99"}, {"eos_token", "false"}};
  EXPECT_EQ(s.sets, expected);
}

TEST(TuneSettings, UserSetsOverrideAndAreChecked) {
  const TuneSpace pg = tune_space("pg");
  TuneSettings s = TuneSettings::paper();
  apply_user_sets(s, pg, {"timestep_limit=10", "seed=3", "repetitions=4", "max_npe=2e3"});
  EXPECT_EQ(s.sets[0], (std::pair<std::string, std::string>{"timestep_limit", "10"}));
  EXPECT_EQ(s.sets.back(), (std::pair<std::string, std::string>{"seed", "3"}));
  EXPECT_EQ(s.repetitions, 4u);
  EXPECT_EQ(s.max_npe, 2000u);

  EXPECT_TRUE(contains(usage_error([&] { apply_user_sets(s, pg, {"lr=0.1"}); }), "hyper-parameter of space 'pg'"));
  EXPECT_TRUE(contains(usage_error([&] { apply_user_sets(s, pg, {"task=reverse"}); }), "--tasks"));
  EXPECT_TRUE(contains(usage_error([&] { apply_user_sets(s, pg, {"mode=pqt"}); }), "mode 'pg'"));
  EXPECT_TRUE(contains(usage_error([&] { apply_user_sets(s, pg, {"device=cpu"}); }), "devices"));
  EXPECT_TRUE(contains(usage_error([&] { apply_user_sets(s, pg, {"noequals"}); }), "key=value"));
  EXPECT_TRUE(contains(usage_error([&] { apply_user_sets(s, pg, {"repetitions=0"}); }), "at least 1"));
  EXPECT_TRUE(contains(usage_error([&] { apply_user_sets(s, pg, {"max_npe=-5"}); }), "non-negative integer"));
  // topk is a grid key of pg-topk but a plain setting for pg.
  TuneSettings t = TuneSettings::paper();
  EXPECT_EQ(usage_error([&] { apply_user_sets(t, pg, {"topk=3"}); }), "");
  EXPECT_NE(usage_error([&] { apply_user_sets(t, tune_space("pg-topk"), {"topk=3"}); }), "");
}

TEST(TuneSettings, TaskListAndRepetitionSplit) {
  EXPECT_EQ(parse_task_list("reverse-tune, remove-char-tune"),
            (std::vector<std::string>{"reverse-tune", "remove-char-tune"}));
  EXPECT_TRUE(contains(usage_error([] { parse_task_list("a,,b"); }), "'a,,b'"));
  EXPECT_TRUE(contains(usage_error([] { parse_task_list(""); }), "--tasks"));
  // Repetition r → task r % len.
  EXPECT_EQ(repetitions_for_task(50, 0, 2), 25u);
  EXPECT_EQ(repetitions_for_task(50, 1, 2), 25u);
  EXPECT_EQ(repetitions_for_task(5, 0, 2), 3u);
  EXPECT_EQ(repetitions_for_task(5, 1, 2), 2u);
  EXPECT_EQ(repetitions_for_task(1, 1, 2), 0u);
  EXPECT_EQ(repetitions_for_task(2, 0, 3), 1u);
  EXPECT_EQ(repetitions_for_task(2, 2, 3), 0u);
  EXPECT_EQ(repetitions_for_task(7, 0, 1), 7u);
}

TEST(TuneCommand, TrainArguments) {
  const TuneSpace pg = tune_space("pg");
  TuneSettings s = TuneSettings::paper();
  apply_user_sets(s, pg, {"timestep_limit=10"});
  TrialTaskRun run;
  run.task = "reverse-tune";
  run.repetitions = 25;
  run.run_dir = "/tmp/t/trial_5/reverse-tune";
  run.device = "cuda:1";
  run.actors = 2;
  run.resume = true;
  const std::vector<std::string> expected = {"train",
                                             "pqt",
                                             "--task",
                                             "reverse-tune",
                                             "--mode",
                                             "pg",
                                             "--repetitions",
                                             "25",
                                             "--max-npe",
                                             "5000000",
                                             "--run-dir",
                                             "/tmp/t/trial_5/reverse-tune",
                                             "--device",
                                             "cuda:1",
                                             "--actors",
                                             "2",
                                             "--resume",
                                             "--set",
                                             "timestep_limit=10",
                                             "--set",
                                             "batch_size=64",
                                             "--set",
                                             "grad_clip_threshold=50.0",
                                             "--set",
                                             "param_init_factor=0.5",
                                             "--set",
                                             "ema_baseline_decay=0.99",
                                             "--set",
                                             "eos_token=false",
                                             "--set",
                                             "entropy_beta=0.01",
                                             "--set",
                                             "lr=0.0001"};
  EXPECT_EQ(train_arguments(pg, pg.trial_hparams(5), s, run), expected);
}

// Space ga runs `train ga` (no mode, no device) with the GA's share of the paper settings.
TEST(TuneCommand, GaTrainArguments) {
  const TuneSpace ga = tune_space("ga");
  EXPECT_EQ(ga.trainer, "ga");
  EXPECT_EQ(tune_space("pg").trainer, "pqt");
  const TuneSettings s = TuneSettings::paper_for(ga);
  TrialTaskRun run;
  run.task = "remove-char-tune";
  run.repetitions = 25;
  run.run_dir = "/tmp/t/trial_7/remove-char-tune";
  run.device = "cpu";
  const std::vector<std::string> expected = {"train",         "ga",
                                             "--task",        "remove-char-tune",
                                             "--repetitions", "25",
                                             "--max-npe",     "5000000",
                                             "--run-dir",     "/tmp/t/trial_7/remove-char-tune",
                                             "--set",         "timestep_limit=50",
                                             "--set",         "crossover_rate=0.7",
                                             "--set",         "mutation_rate=0.03",
                                             "--set",         "population=10"};
  EXPECT_EQ(train_arguments(ga, ga.trial_hparams(7), s, run), expected);
}

TEST(TuneCommand, FormatHparams) {
  EXPECT_EQ(format_hparams(tune_space("pg").trial_hparams(5)), "entropy_beta=0.01 lr=0.0001");
  EXPECT_EQ(format_hparams(tune_space("pg-topk").trial_hparams(47)),
            "entropy_beta=0.1 lr=0.001 topk=10 topk_loss_hparam=200.0");
}

json record(const char* task, bool solved, std::uint64_t npe) {
  return {{"task", task}, {"found_solution", solved}, {"npe", npe}, {"max_npe", 1000}};
}

// Budget 1000. Failed runs count 1000 whatever their npe; a solved run counts its npe
// (capped at the budget).
TEST(TuneAggregate, MetricsOnAFabricatedResultSet) {
  const std::vector<std::string> cycle = {"reverse-tune", "remove-char-tune"};
  const std::vector<json> records = {record("reverse-tune", true, 200), record("remove-char-tune", false, 1064),
                                     record("reverse-tune", false, 640), record("remove-char-tune", true, 400),
                                     record("reverse-tune", true, 300)};
  const json hp = {{"lr", 1e-4}};
  const TrialResult r = aggregate_trial(3, hp, records, 1000, cycle);
  EXPECT_EQ(r.trial, 3u);
  EXPECT_EQ(r.hparams, hp);
  EXPECT_EQ(r.total.num_runs, 5u);
  EXPECT_EQ(r.total.num_succeeded, 3u);
  EXPECT_DOUBLE_EQ(r.total.success_rate, 0.6);
  EXPECT_DOUBLE_EQ(r.total.programs_seen_fraction, 2900.0 / 5000.0);  // 200+1000+1000+400+300
  EXPECT_DOUBLE_EQ(r.total.avg_programs, 580.0);
  EXPECT_DOUBLE_EQ(r.objective, 0.6);
  ASSERT_EQ(r.per_task.size(), 2u);
  const TaskMetrics& rev = r.per_task.at("reverse-tune");
  EXPECT_EQ(rev.num_runs, 3u);
  EXPECT_EQ(rev.num_succeeded, 2u);
  EXPECT_DOUBLE_EQ(rev.success_rate, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(rev.programs_seen_fraction, 0.5);  // 1500 / 3000
  EXPECT_DOUBLE_EQ(rev.avg_programs, 500.0);
  const TaskMetrics& rem = r.per_task.at("remove-char-tune");
  EXPECT_EQ(rem.num_runs, 2u);
  EXPECT_DOUBLE_EQ(rem.success_rate, 0.5);
  EXPECT_DOUBLE_EQ(rem.programs_seen_fraction, 0.7);  // 1400 / 2000
  EXPECT_DOUBLE_EQ(rem.avg_programs, 700.0);

  const auto j = trial_result_json(r, "pg", 12);
  EXPECT_EQ(j["trial_name"], "trial_3");
  EXPECT_EQ(j["num_trials"], 12);
  EXPECT_EQ(j["space"], "pg");
  EXPECT_DOUBLE_EQ(j["success_rate"].get<double>(), 0.6);
  EXPECT_EQ(j["num_runs"], 5);
  EXPECT_EQ(j["num_succeeded"], 3);
  EXPECT_DOUBLE_EQ(j["programs_seen_fraction"].get<double>(), 0.58);
  EXPECT_DOUBLE_EQ(j["avg_programs"].get<double>(), 580.0);
  EXPECT_DOUBLE_EQ(j["reverse-tune__success_rate"].get<double>(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(j["remove-char-tune__programs_seen_fraction"].get<double>(), 0.7);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_FALSE(j.contains("error"));
}

TEST(TuneAggregate, EmptyAndUnlimitedBudgetsNeverGiveNaN) {
  const std::vector<std::string> cycle = {"reverse-tune", "remove-char-tune"};
  const TrialResult empty = aggregate_trial(0, json::object(), {}, 1000, cycle);
  EXPECT_EQ(empty.total.num_runs, 0u);
  EXPECT_EQ(empty.total.success_rate, 0.0);
  EXPECT_EQ(empty.total.programs_seen_fraction, 0.0);
  EXPECT_EQ(empty.per_task.count("remove-char-tune"), 1u);  // every task of the cycle is reported
  const TrialResult unlimited = aggregate_trial(
      0, json::object(), {record("reverse-tune", false, 640), record("reverse-tune", true, 100)}, 0, cycle);
  EXPECT_EQ(unlimited.total.programs_seen_fraction, 0.0);
  EXPECT_DOUBLE_EQ(unlimited.total.avg_programs, 370.0);
}

TEST(TuneAggregate, MalformedRecordIsAUsageError) {
  const std::vector<json> bad = {{{"task", "reverse-tune"}, {"npe", 5}}};
  EXPECT_TRUE(contains(usage_error([&] { aggregate_trial(0, json::object(), bad, 10, {}); }), "found_solution"));
  const std::vector<json> negative = {{{"task", "reverse-tune"}, {"npe", -5}, {"found_solution", true}}};
  EXPECT_NE(usage_error([&] { aggregate_trial(0, json::object(), negative, 10, {}); }), "");
}

TEST(TuneAggregate, SortByObjectiveDescendingThenTrial) {
  std::vector<TrialResult> rs(4);
  const std::size_t trials[] = {3, 1, 0, 7};
  const double objectives[] = {0.2, 0.6, 0.2, 0.9};
  for (std::size_t i = 0; i < rs.size(); ++i) {
    rs[i].trial = trials[i];
    rs[i].objective = objectives[i];
  }
  sort_by_objective(rs);
  std::vector<std::size_t> order;
  for (const auto& r : rs) order.push_back(r.trial);
  EXPECT_EQ(order, (std::vector<std::size_t>{7, 1, 0, 3}));
}

TEST(TuneAggregate, SummaryTableKeepsTheGivenOrder) {
  const std::vector<std::string> cycle = {"reverse-tune"};
  std::vector<TrialResult> rs = {aggregate_trial(2, {{"lr", 1e-3}}, {record("reverse-tune", false, 1000)}, 1000, cycle),
                                 aggregate_trial(9, {{"lr", 1e-4}}, {record("reverse-tune", true, 250)}, 1000, cycle)};
  sort_by_objective(rs);
  const std::string table = format_summary_table(rs);
  EXPECT_TRUE(contains(table, "success_rate")) << table;
  EXPECT_TRUE(contains(table, "succeeded/runs")) << table;
  EXPECT_TRUE(contains(table, "lr=0.0001")) << table;
  EXPECT_TRUE(contains(table, "1/1")) << table;
  EXPECT_LT(table.find("lr=0.0001"), table.find("lr=0.001 ")) << table;
}

}  // namespace
}  // namespace ringrl::sweeps
