#include "common/runfiles/tb_events.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "tests/common/runfiles/temp_dir.h"

namespace ringrl::runfiles {
namespace {

using testing::read_file;
using testing::TempDir;

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

uint64_t read_le(const std::string& s, size_t pos, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<unsigned char>(s[pos + i])} << (8 * i);
  return v;
}

// Splits a TFRecord stream into payloads, checking both CRCs of every record.
std::vector<std::string> read_records(const std::string& file) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < file.size()) {
    EXPECT_LE(pos + 12, file.size());
    uint64_t len = read_le(file, pos, 8);
    EXPECT_EQ(read_le(file, pos + 8, 4), masked_crc32c(file.substr(pos, 8)));
    std::string data = file.substr(pos + 12, len);
    EXPECT_EQ(read_le(file, pos + 12 + len, 4), masked_crc32c(data));
    out.push_back(data);
    pos += 16 + len;
  }
  return out;
}

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc32c(descending), 0x113FDB5Cu);
}

TEST(Crc32c, ExtendsAcrossChunks) { EXPECT_EQ(crc32c("6789", crc32c("12345")), crc32c("123456789")); }

TEST(Crc32c, MaskMatchesTheTfRecordDefinition) {
  // Values from an independent implementation (TensorBoard's reader).
  EXPECT_EQ(mask_crc(0xE3069283u), 0xC78AB0E5u);
  EXPECT_EQ(masked_crc32c(bytes({24, 0, 0, 0, 0, 0, 0, 0})), 0x224B7FA3u);
  uint32_t c = 0x12345678u;
  EXPECT_EQ(mask_crc(c), static_cast<uint32_t>(((c >> 15) | (c << 17)) + 0xa282ead8u));
}

TEST(TbEvents, ScalarEventEncodingIsExact) {
  std::string expected = bytes({0x09, 0,    0,    0,    0,   0, 0, 0, 0,  // wall_time = 0.0
                                0x10, 0x01,                               // step = 1
                                0x2A, 0x0A,                               // summary, 10 bytes
                                0x0A, 0x08,                               // value, 8 bytes
                                0x0A, 0x01, 'a',                          // tag = "a"
                                0x15, 0x00, 0x00, 0x80, 0x3F});           // simple_value = 1.0f
  EXPECT_EQ(encode_scalar_event("a", 1, 1.0f, 0.0), expected);
}

TEST(TbEvents, NegativeStepIsTenByteVarintAndWallTimeIsLittleEndian) {
  std::string e = encode_scalar_event("t", -1, 0.0f, 1.5);
  // 1.5 = 0x3FF8000000000000
  EXPECT_EQ(e.substr(0, 9), bytes({0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F}));
  EXPECT_EQ(e.substr(9, 11), bytes({0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
}

TEST(TbEvents, FileVersionEventEncoding) {
  std::string e = encode_file_version_event(0.0);
  EXPECT_EQ(e.substr(9), bytes({0x1A, 13}) + "brain.Event:2");
}

TEST(TbEvents, RecordFraming) {
  std::string rec = tf_record("hello");
  ASSERT_EQ(rec.size(), 16u + 5u);
  EXPECT_EQ(read_le(rec, 0, 8), 5u);
  EXPECT_EQ(read_le(rec, 8, 4), masked_crc32c(rec.substr(0, 8)));
  EXPECT_EQ(rec.substr(12, 5), "hello");
  EXPECT_EQ(read_le(rec, 17, 4), masked_crc32c("hello"));
}

TEST(TbEvents, WriterFileNameFirstRecordAndScalars) {
  TempDir dir;
  std::filesystem::path file;
  {
    TbWriter w(dir / "tb");
    file = w.file_path();
    w.add_scalar("loss", 7, 0.25f, 100.0);
    // No explicit flush: the destructor must flush.
  }
  EXPECT_EQ(file.parent_path(), dir / "tb");
  EXPECT_EQ(file.filename().string().rfind("events.out.tfevents.", 0), 0u) << file;
  std::vector<std::string> records = read_records(read_file(file));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_NE(records[0].find("brain.Event:2"), std::string::npos);
  EXPECT_EQ(records[1], encode_scalar_event("loss", 7, 0.25f, 100.0));
}

TEST(TbEvents, FlushMakesRecordsVisible) {
  TempDir dir;
  TbWriter w(dir.path());
  size_t before = read_file(w.file_path()).size();
  w.add_scalar("x", 1, 1.0f);
  w.flush();
  EXPECT_GT(read_file(w.file_path()).size(), before);
}

TEST(TbEvents, TwoWritersInOneDirectoryUseDistinctFiles) {
  TempDir dir;
  TbWriter a(dir.path());
  TbWriter b(dir.path());
  EXPECT_NE(a.file_path(), b.file_path());
}

TEST(TbEvents, EmptyTagIsUsageError) {
  TempDir dir;
  TbWriter w(dir.path());
  EXPECT_THROW(w.add_scalar("", 0, 1.0f), UsageError);
}

constexpr const char* kReadBackScript = R"(
import json, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
acc = EventAccumulator(sys.argv[1], size_guidance={'scalars': 0})
acc.Reload()
out = {'file_version': acc.file_version, 'scalars': {}}
for tag in acc.Tags()['scalars']:
    out['scalars'][tag] = [[e.step, e.value, e.wall_time] for e in acc.Scalars(tag)]
print(json.dumps(out))
)";

bool python_has_tensorboard() { return std::system("python3 -c 'import tensorboard' >/dev/null 2>&1") == 0; }

TEST(TbEvents, TensorBoardReadsTheFileBack) {
  if (!python_has_tensorboard()) GTEST_SKIP() << "python3 with tensorboard not available";
  TempDir dir;
  const std::vector<float> losses = {1.5f, 0.75f, -3.0e-7f, 42.0f};
  {
    TbWriter w(dir / "tb");
    for (size_t i = 0; i < losses.size(); ++i) {
      w.add_scalar("train/loss", static_cast<int64_t>(i) * 10, losses[i], 1000.0 + i);
    }
    w.add_scalar("reward", int64_t{1} << 40, 0.5f, 2000.25);
  }
  testing::write_file(dir / "read.py", kReadBackScript);
  std::string cmd =
      "python3 " + (dir / "read.py").string() + " " + (dir / "tb").string() + " 2>" + (dir / "stderr.txt").string();
  std::FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
  int status = ::pclose(pipe);
  ASSERT_EQ(status, 0) << read_file(dir / "stderr.txt");

  nlohmann::json got = nlohmann::json::parse(output);
  EXPECT_EQ(got["file_version"], 2.0);  // the accumulator parses "brain.Event:2"
  const auto& scalars = got["scalars"];
  ASSERT_EQ(scalars.size(), 2u) << output;
  const auto& loss = scalars["train/loss"];
  ASSERT_EQ(loss.size(), losses.size()) << output;
  for (size_t i = 0; i < losses.size(); ++i) {
    EXPECT_EQ(loss[i][0].get<int64_t>(), static_cast<int64_t>(i) * 10);
    EXPECT_EQ(loss[i][1].get<double>(), static_cast<double>(losses[i]));
    EXPECT_EQ(loss[i][2].get<double>(), 1000.0 + i);
  }
  const auto& reward = scalars["reward"];
  ASSERT_EQ(reward.size(), 1u);
  EXPECT_EQ(reward[0][0].get<int64_t>(), int64_t{1} << 40);
  EXPECT_EQ(reward[0][1].get<double>(), 0.5);
  EXPECT_EQ(reward[0][2].get<double>(), 2000.25);
}

}  // namespace
}  // namespace ringrl::runfiles
