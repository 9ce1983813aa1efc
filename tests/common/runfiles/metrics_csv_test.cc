#include "common/runfiles/metrics_csv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/errors.h"
#include "tests/common/runfiles/temp_dir.h"

namespace ringrl::runfiles {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

TEST(MetricsCsv, WritesHeaderAndRowsFlushedImmediately) {
  TempDir dir;
  MetricsCsv csv(dir / "metrics.csv", {"loss", "reward"});
  EXPECT_FALSE(csv.resumed());
  EXPECT_EQ(csv.header(), "step,wall_s,loss,reward");
  EXPECT_EQ(read_file(dir / "metrics.csv"), "step,wall_s,loss,reward\n");
  csv.write_row(1, 0.5, {0.1, -2.0});
  // Visible before the writer is closed.
  EXPECT_EQ(read_file(dir / "metrics.csv"), "step,wall_s,loss,reward\n1,0.5,0.1,-2\n");
}

TEST(MetricsCsv, NumberFormatting) {
  TempDir dir;
  {
    MetricsCsv csv(dir / "m.csv", {"a", "b", "c", "d"});
    csv.write_row(-3, 12.25,
                  {1e-5, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), 1.0 / 3.0});
  }
  EXPECT_EQ(read_file(dir / "m.csv"), "step,wall_s,a,b,c,d\n-3,12.25,1e-05,nan,inf,0.3333333333333333\n");
}

TEST(MetricsCsv, NamedRowLeavesMissingCellsEmpty) {
  TempDir dir;
  MetricsCsv csv(dir / "m.csv", {"a", "b", "c"});
  csv.write_named_row(2, 1.0, {{"c", 3.0}, {"a", 1.0}});
  EXPECT_EQ(read_file(dir / "m.csv"), "step,wall_s,a,b,c\n2,1,1,,3\n");
  EXPECT_THROW(csv.write_named_row(3, 1.0, {{"nope", 1.0}}), std::invalid_argument);
}

TEST(MetricsCsv, WrongRowWidthIsRejected) {
  TempDir dir;
  MetricsCsv csv(dir / "m.csv", {"a", "b"});
  EXPECT_THROW(csv.write_row(1, 0.0, std::vector<double>{1.0}), std::invalid_argument);
  EXPECT_THROW(csv.write_row(1, 0.0, std::vector<double>{1.0, 2.0, 3.0}), std::invalid_argument);
}

TEST(MetricsCsv, BadColumnNamesAreRejected) {
  TempDir dir;
  EXPECT_THROW(MetricsCsv(dir / "1.csv", {"a", "a"}), std::invalid_argument);
  EXPECT_THROW(MetricsCsv(dir / "2.csv", {"step"}), std::invalid_argument);
  EXPECT_THROW(MetricsCsv(dir / "3.csv", {"a,b"}), std::invalid_argument);
  EXPECT_THROW(MetricsCsv(dir / "4.csv", {""}), std::invalid_argument);
}

TEST(MetricsCsv, ResumeWithSameHeaderAppends) {
  TempDir dir;
  { MetricsCsv(dir / "m.csv", {"x"}).write_row(1, 1.0, {10.0}); }
  {
    MetricsCsv csv(dir / "m.csv", {"x"});
    EXPECT_TRUE(csv.resumed());
    csv.write_row(2, 2.0, {20.0});
  }
  EXPECT_EQ(read_file(dir / "m.csv"), "step,wall_s,x\n1,1,10\n2,2,20\n");
}

TEST(MetricsCsv, ResumeCutsATornLastRow) {
  TempDir dir;
  write_file(dir / "m.csv", "step,wall_s,x\n1,1,10\n2,2,2");
  MetricsCsv(dir / "m.csv", {"x"}).write_row(2, 2.0, {20.0});
  EXPECT_EQ(read_file(dir / "m.csv"), "step,wall_s,x\n1,1,10\n2,2,20\n");
}

TEST(MetricsCsv, EmptyOrTornHeaderFileStartsOver) {
  TempDir dir;
  write_file(dir / "a.csv", "");
  write_file(dir / "b.csv", "step,wa");
  MetricsCsv(dir / "a.csv", {"x"}).write_row(1, 1.0, {1.0});
  MetricsCsv(dir / "b.csv", {"x"}).write_row(1, 1.0, {1.0});
  EXPECT_EQ(read_file(dir / "a.csv"), "step,wall_s,x\n1,1,1\n");
  EXPECT_EQ(read_file(dir / "b.csv"), "step,wall_s,x\n1,1,1\n");
}

TEST(MetricsCsv, ResumeWithDifferentHeaderIsUsageErrorNamingBoth) {
  TempDir dir;
  { MetricsCsv(dir / "m.csv", {"x"}); }
  try {
    MetricsCsv csv(dir / "m.csv", {"x", "y"});
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("'step,wall_s,x'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'step,wall_s,x,y'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("m.csv"), std::string::npos) << msg;
  }
  EXPECT_EQ(read_file(dir / "m.csv"), "step,wall_s,x\n");  // untouched
}

}  // namespace
}  // namespace ringrl::runfiles
