#include "common/runfiles/results_jsonl.h"

#include <gtest/gtest.h>

#include <string>

#include "common/errors.h"
#include "tests/common/runfiles/temp_dir.h"

namespace ringrl::runfiles {
namespace {

using nlohmann::json;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

TEST(ResultsJsonl, AppendCreatesDirectoriesAndReadsBack) {
  TempDir dir;
  std::filesystem::path file = dir / "run" / "logs" / kResultsFileName;
  append_json_line(file, {{"global_rep", 0}, {"found_solution", true}});
  append_json_line(file, {{"global_rep", 1}, {"found_solution", false}});
  EXPECT_EQ(read_file(file),
            "{\"found_solution\":true,\"global_rep\":0}\n"
            "{\"found_solution\":false,\"global_rep\":1}\n");
  std::vector<json> records = read_json_lines(file);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1]["global_rep"], 1);
}

TEST(ResultsJsonl, MissingFileReadsAsEmpty) {
  TempDir dir;
  EXPECT_TRUE(read_json_lines(dir / "none.jsonl").empty());
}

TEST(ResultsJsonl, TornFinalLineIsIgnoredOnReadAndCutOnAppend) {
  TempDir dir;
  std::filesystem::path file = dir / "r.jsonl";
  write_file(file, "{\"global_rep\":0}\n\n{\"global_rep\":1,\"np");
  EXPECT_EQ(read_json_lines(file).size(), 1u);
  append_json_line(file, {{"global_rep", 1}});
  EXPECT_EQ(read_file(file), "{\"global_rep\":0}\n\n{\"global_rep\":1}\n");
}

TEST(ResultsJsonl, CompleteFinalLineWithoutNewlineIsKept) {
  TempDir dir;
  std::filesystem::path file = dir / "r.jsonl";
  write_file(file, "{\"global_rep\":0}");
  EXPECT_EQ(read_json_lines(file).size(), 1u);
  append_json_line(file, {{"global_rep", 1}});
  EXPECT_EQ(read_file(file), "{\"global_rep\":0}\n{\"global_rep\":1}\n");
}

TEST(ResultsJsonl, BadMiddleLineIsUsageErrorNamingFileAndLine) {
  TempDir dir;
  std::filesystem::path file = dir / "r.jsonl";
  write_file(file, "{\"a\":1}\nnot json\n{\"a\":2}\n");
  try {
    read_json_lines(file);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("r.jsonl:2:"), std::string::npos) << e.what();
  }
}

TEST(ResultsJsonl, CompletedRepetitionsForResume) {
  std::vector<json> records = {json{{"global_rep", 3}}, json{{"global_rep", 0}}, json{{"other", 1}},
                               json{{"global_rep", "x"}}, json(5)};
  EXPECT_EQ(completed_values(records), (std::set<int64_t>{0, 3}));
  EXPECT_EQ(completed_values(records, "other"), (std::set<int64_t>{1}));
}

TEST(ResultsJsonl, CheckConsistentRejectsChangedSettings) {
  std::vector<json> records = {json{{"max_npe", 100}, {"global_rep", 0}}, json{{"max_npe", 200}, {"global_rep", 1}}};
  EXPECT_NO_THROW(check_consistent({records[0]}, json{{"max_npe", 100}, {"absent", 1}}, "r"));
  try {
    check_consistent(records, json{{"max_npe", 100}}, "run/results.jsonl");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "run/results.jsonl: record 2 has max_npe=200 but this run has max_npe=100 "
              "(use a fresh run directory)");
  }
}

TEST(ResultsJsonl, SolutionsAreOneJsonLineEach) {
  TempDir dir;
  std::filesystem::path file = dir / kSolutionsFileName;
  append_solution(file, "+[>,.<]\"\\", 0.935, 1280);
  append_solution(file, "++.", 1.0, 2560);
  std::vector<json> lines = read_json_lines(file);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["code"], "+[>,.<]\"\\");
  EXPECT_EQ(lines[0]["reward"], 0.935);
  EXPECT_EQ(lines[0]["npe"], 1280);
  EXPECT_EQ(lines[1]["code"], "++.");
}

}  // namespace
}  // namespace ringrl::runfiles
