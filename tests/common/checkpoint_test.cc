// Tests for common/checkpoint.h: round trips, the on-disk layout, and every way a file can be
// bad (truncated at each boundary, a flipped byte, foreign, older, not a checkpoint).
#include "common/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace ringrl {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBigBytes = 5u << 20;  // written in chunks, larger than the I/O buffer
constexpr std::uint64_t kEndRecordBytes = 32;
constexpr std::uint64_t kFixedHeaderBytes = 12;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_all(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << p;
}

template <class T>
T at(const std::string& bytes, std::uint64_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

std::uint64_t fnv1a64(const std::string& bytes, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(bytes[i]);
    h *= 0x100000001b3ULL;
  }
  return h;
}

/// Deterministic payload bytes.
std::vector<char> pattern(std::size_t n, std::uint64_t seed) {
  std::vector<char> v(n);
  std::mt19937_64 rng(seed);
  for (auto& c : v) c = static_cast<char>(rng());
  return v;
}

/// Expects `fn` to throw CorruptData whose message names `path` and contains `part`.
template <class Fn>
void expect_corrupt(Fn&& fn, const fs::path& path, const std::string& part, const std::string& context) {
  try {
    fn();
    ADD_FAILURE() << context << ": no CorruptData";
  } catch (const CorruptData& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("checkpoint " + path.string()), std::string::npos) << context << ": " << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << context << ": expected '" << part << "' in: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << context << ": not one line: " << msg;
  }
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ringrl-checkpoint-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Sections: "meta" (small values), "big" (kBigBytes in uneven chunks), "empty", "tail".
  /// Returns the payload bytes of each section, in order.
  std::vector<std::uint64_t> write_sample(const fs::path& path, const std::string& algorithm = "pqt") {
    CheckpointWriter w(path, algorithm);
    std::vector<std::uint64_t> sizes;
    {
      ByteWriter& m = w.section("meta");
      m.put<std::uint64_t>(42);
      m.put<double>(0.25);
      m.put_string("hello");
      m.put_vector(std::vector<std::int32_t>{1, -2, 3});
      sizes.push_back(m.bytes_written());
    }
    {
      ByteWriter& b = w.section("big");
      const std::vector<char> data = pattern(kBigBytes, 7);
      std::size_t done = 0, chunk = 1;
      while (done < data.size()) {  // chunk sizes 1, 3, 7, ... wrapping: small and large writes
        const std::size_t n = std::min(chunk, data.size() - done);
        b.put_bytes(data.data() + done, n);
        done += n;
        chunk = (chunk * 3 + 1) % (3u << 20);
      }
      sizes.push_back(b.bytes_written());
    }
    sizes.push_back(w.section("empty").bytes_written());
    {
      ByteWriter& t = w.section("tail");
      t.put<std::uint32_t>(0xabcdef01u);
      sizes.push_back(t.bytes_written());
    }
    w.commit();
    return sizes;
  }

  fs::path dir_;
};

TEST_F(CheckpointTest, RoundTripOfSeveralSectionsIncludingAMultiMegabyteOne) {
  const fs::path path = dir_ / "checkpoint.bin";
  const auto sizes = write_sample(path);
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));

  CheckpointReader r(path, "pqt");
  EXPECT_EQ(r.algorithm(), "pqt");
  EXPECT_EQ(r.format_version(), kCheckpointFormatVersion);
  EXPECT_EQ(r.section_names(), (std::vector<std::string>{"meta", "big", "empty", "tail"}));
  EXPECT_TRUE(r.has_section("big"));
  EXPECT_FALSE(r.has_section("bigger"));
  EXPECT_EQ(r.section_bytes("meta"), sizes[0]);
  EXPECT_EQ(r.section_bytes("big"), kBigBytes);
  EXPECT_EQ(r.section_bytes("empty"), 0u);
  EXPECT_EQ(r.section_bytes("tail"), sizeof(std::uint32_t));

  // Out of order, and the big one in uneven reads.
  {
    ByteReader& t = r.section("tail");
    EXPECT_EQ(t.get<std::uint32_t>(), 0xabcdef01u);
    t.expect_end();
  }
  {
    ByteReader& b = r.section("big");
    EXPECT_EQ(b.remaining(), kBigBytes);
    const std::vector<char> want = pattern(kBigBytes, 7);
    std::vector<char> got(kBigBytes);
    std::size_t done = 0, chunk = 5;
    while (done < got.size()) {
      const std::size_t n = std::min(chunk, got.size() - done);
      b.get_bytes(got.data() + done, n);
      done += n;
      chunk = (chunk * 7 + 3) % (2u << 20);
    }
    b.expect_end();
    EXPECT_TRUE(got == want);
  }
  {
    ByteReader& m = r.section("meta");
    EXPECT_EQ(m.get<std::uint64_t>(), 42u);
    EXPECT_EQ(m.get<double>(), 0.25);
    EXPECT_EQ(m.get_string(), "hello");
    EXPECT_EQ(m.get_vector<std::int32_t>(), (std::vector<std::int32_t>{1, -2, 3}));
    m.expect_end();
  }
  EXPECT_EQ(r.section("empty").remaining(), 0u);
  // Any algorithm is accepted when none is expected.
  EXPECT_EQ(CheckpointReader(path, "").algorithm(), "pqt");
}

TEST_F(CheckpointTest, FileLayoutIsTheDocumentedOne) {
  const fs::path path = dir_ / "layout.bin";
  {
    CheckpointWriter w(path, "hiro");
    w.section("a").put<std::uint16_t>(7);
    w.section("bb").put_string("xyz");
    w.commit();
  }
  const std::string f = read_all(path);
  const std::uint64_t header = kFixedHeaderBytes + 8 + 4;  // "hiro"
  const std::uint64_t payloads = 2 + (8 + 3);
  const std::uint64_t table = 8 + (8 + 1 + 8) + (8 + 2 + 8);
  ASSERT_EQ(f.size(), header + payloads + table + kEndRecordBytes);
  EXPECT_EQ(f.substr(0, 8), "RINGRLCK");
  EXPECT_EQ(at<std::uint32_t>(f, 8), 1u);
  EXPECT_EQ(at<std::uint64_t>(f, 12), 4u);
  EXPECT_EQ(f.substr(20, 4), "hiro");
  EXPECT_EQ(at<std::uint16_t>(f, header), 7u);
  const std::uint64_t table_offset = header + payloads;
  EXPECT_EQ(at<std::uint64_t>(f, table_offset), 2u);  // sections
  EXPECT_EQ(at<std::uint64_t>(f, table_offset + 8), 1u);
  EXPECT_EQ(f.substr(table_offset + 16, 1), "a");
  EXPECT_EQ(at<std::uint64_t>(f, table_offset + 17), 2u);
  const std::uint64_t end = f.size();
  EXPECT_EQ(at<std::uint64_t>(f, end - 32), table_offset);
  EXPECT_EQ(at<std::uint64_t>(f, end - 24), f.size());
  EXPECT_EQ(at<std::uint64_t>(f, end - 16), fnv1a64(f, f.size() - 16));
  EXPECT_EQ(f.substr(end - 8), "RINGRLEN");
}

TEST_F(CheckpointTest, TruncationAtEverySectionBoundaryAndInsideIsReported) {
  const fs::path good = dir_ / "good.bin";
  const auto sizes = write_sample(good);
  const std::string f = read_all(good);

  // Boundaries: inside the magic and version, the header's end, every section's start and
  // end, the table, each end-record field; plus offsets inside each part.
  const std::uint64_t header_end = kFixedHeaderBytes + 8 + 3;  // "pqt"
  std::set<std::uint64_t> cuts = {0, 1, 7, 8, 11, 12, 19, header_end};
  std::uint64_t offset = header_end;
  for (const std::uint64_t n : sizes) {
    cuts.insert(offset + n / 2);
    offset += n;
    cuts.insert(offset);
    cuts.insert(offset - 1);
  }
  for (std::uint64_t back = 1; back <= kEndRecordBytes; back += 7) cuts.insert(f.size() - back);
  for (std::uint64_t back = 8; back <= kEndRecordBytes; back += 8) cuts.insert(f.size() - back);

  const fs::path cut_path = dir_ / "cut.bin";
  for (const std::uint64_t cut : cuts) {
    ASSERT_LT(cut, f.size());
    write_all(cut_path, f.substr(0, cut));
    expect_corrupt([&] { CheckpointReader(cut_path, "pqt"); }, cut_path, "truncated", "cut at " + std::to_string(cut));
  }
}

TEST_F(CheckpointTest, AFlippedByteAnywhereIsReported) {
  // A small file: every byte position, two different flips each.
  const fs::path good = dir_ / "small.bin";
  {
    CheckpointWriter w(good, "pqt");
    w.section("params").put_vector(std::vector<float>(40, 0.5f));
    w.section("rng").put_string("12345 67890");
    w.section("queue").put<std::uint64_t>(3);
    w.commit();
  }
  const std::string f = read_all(good);
  const fs::path bad = dir_ / "flipped.bin";
  for (std::size_t pos = 0; pos < f.size(); ++pos) {
    for (const unsigned char mask : {0x01, 0xa5}) {
      std::string g = f;
      g[pos] = static_cast<char>(g[pos] ^ mask);
      write_all(bad, g);
      expect_corrupt([&] { CheckpointReader(bad, "pqt"); }, bad, "",
                     "flip at " + std::to_string(pos) + " mask " + std::to_string(mask));
    }
  }

  // The big file: a spread of positions across the multi-MB payload, and the last byte
  // before the checksum field.
  const fs::path big = dir_ / "big.bin";
  write_sample(big);
  const std::string b = read_all(big);
  std::mt19937_64 rng(3);
  std::vector<std::size_t> positions = {b.size() - 17, b.size() / 2};
  for (int k = 0; k < 12; ++k) positions.push_back(static_cast<std::size_t>(rng() % b.size()));
  for (const std::size_t pos : positions) {
    std::string g = b;
    g[pos] = static_cast<char>(g[pos] ^ 0x10);
    write_all(bad, g);
    expect_corrupt([&] { CheckpointReader(bad, "pqt"); }, bad, "", "flip at " + std::to_string(pos));
  }
  // Inside a payload the checksum is what catches it.
  std::string g = b;
  g[b.size() / 2] = static_cast<char>(g[b.size() / 2] ^ 0x10);
  write_all(bad, g);
  expect_corrupt([&] { CheckpointReader(bad, "pqt"); }, bad, "checksum mismatch", "payload flip");
}

TEST_F(CheckpointTest, TheWrongAlgorithmIsReported) {
  const fs::path path = dir_ / "hiro.bin";
  {
    CheckpointWriter w(path, "hiro");
    w.section("state").put<int>(1);
    w.commit();
  }
  expect_corrupt([&] { CheckpointReader(path, "pqt"); }, path, "written by algorithm 'hiro', expected 'pqt'",
                 "wrong algorithm");
  EXPECT_EQ(CheckpointReader(path, "hiro").algorithm(), "hiro");
}

TEST_F(CheckpointTest, OlderFormatsAreNamed) {
  const fs::path path = dir_ / "old.bin";
  // The PQT trainer's checkpoints before format version 1.
  write_all(path, std::string("RRLPQTC1") + std::string(64, '\x01'));
  expect_corrupt([&] { CheckpointReader(path, "pqt"); }, path, "older build", "RRLPQTC1");
  expect_corrupt([&] { CheckpointReader(path, "pqt"); }, path, "before format version 1", "RRLPQTC1");

  // Our magic with another format version.
  std::string f = std::string("RINGRLCK") + std::string(4, '\0') + std::string(100, 'x');
  write_all(path, f);
  expect_corrupt([&] { CheckpointReader(path, "pqt"); }, path,
                 "format version 0 (from an older build); this build reads version 1", "version 0");
  f[8] = 2;
  write_all(path, f);
  expect_corrupt([&] { CheckpointReader(path, "pqt"); }, path, "format version 2 (from a newer build)", "version 2");
}

TEST_F(CheckpointTest, OtherFilesAreNotCheckpoints) {
  const fs::path path = dir_ / "notes.txt";
  write_all(path, "these are my notes, not a checkpoint\n");
  expect_corrupt([&] { CheckpointReader(path, ""); }, path, "not a ringrl checkpoint", "text file");
  write_all(path, "xy");
  expect_corrupt([&] { CheckpointReader(path, ""); }, path, "not a ringrl checkpoint", "short file");
  expect_corrupt([&] { CheckpointReader(dir_, ""); }, dir_, "not a regular file", "directory");
  try {
    CheckpointReader(dir_ / "missing.bin", "");
    ADD_FAILURE() << "no error for a missing file";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), ENOENT);
  }
}

TEST_F(CheckpointTest, WriterWithoutCommitLeavesNoFileAndNoTemp) {
  const fs::path path = dir_ / "never.bin";
  {
    CheckpointWriter w(path, "pqt");
    EXPECT_TRUE(fs::exists(w.temp_path()));
    EXPECT_EQ(w.temp_path(), fs::path(path.string() + ".tmp"));
    w.section("a").put_bytes(pattern(3u << 20, 1).data(), 3u << 20);
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(CheckpointTest, AGoodFileSurvivesAWriterThatThrowsBeforeCommit) {
  const fs::path path = dir_ / "checkpoint.bin";
  {
    CheckpointWriter w(path, "pqt");
    w.section("step").put<std::uint64_t>(100);
    w.commit();
  }
  const std::string before = read_all(path);
  EXPECT_THROW(
      {
        CheckpointWriter w(path, "pqt");
        w.section("step").put<std::uint64_t>(200);
        w.section("more").put_bytes(pattern(2u << 20, 2).data(), 2u << 20);
        throw std::runtime_error("the learner failed mid-save");
      },
      std::runtime_error);
  EXPECT_EQ(read_all(path), before);
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
  CheckpointReader r(path, "pqt");
  EXPECT_EQ(r.section("step").get<std::uint64_t>(), 100u);

  // A committed writer replaces it.
  {
    CheckpointWriter w(path, "pqt");
    w.section("step").put<std::uint64_t>(300);
    w.commit();
  }
  CheckpointReader r2(path, "pqt");
  EXPECT_EQ(r2.section("step").get<std::uint64_t>(), 300u);
}

TEST_F(CheckpointTest, MisuseAndSectionErrors) {
  const fs::path path = dir_ / "misuse.bin";
  EXPECT_THROW(CheckpointWriter(path, ""), std::invalid_argument);
  EXPECT_THROW(CheckpointWriter(path, std::string(kCheckpointMaxNameBytes + 1, 'a')), std::invalid_argument);
  {
    CheckpointWriter w(path, "pqt");
    w.section("a").put<std::uint32_t>(5);
    EXPECT_THROW(w.section("a"), std::invalid_argument);
    EXPECT_THROW(w.section(""), std::invalid_argument);
    w.commit();
    EXPECT_THROW(w.section("b"), std::logic_error);
    EXPECT_THROW(w.commit(), std::logic_error);
  }
  CheckpointReader r(path, "pqt");
  expect_corrupt([&] { r.section("b"); }, path, "no section 'b' (it holds: a)", "missing section");
  expect_corrupt([&] { r.section_bytes("b"); }, path, "no section 'b'", "missing section bytes");
  // A section reader is bounded to its section and names it.
  ByteReader& a = r.section("a");
  EXPECT_EQ(a.get<std::uint32_t>(), 5u);
  expect_corrupt([&] { a.get<std::uint32_t>(); }, path, ", section a: truncated", "read past a section");
}

}  // namespace
}  // namespace ringrl
