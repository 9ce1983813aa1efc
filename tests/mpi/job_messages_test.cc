// mpi/job_messages.h: every message round-trips; anything malformed is refused with
// CorruptData and never read past its end (truncations at every length, flipped bytes, a
// random-mutation fuzz); file names cannot leave their directory; the hello check.
#include "mpi/job_messages.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include <gtest/gtest.h>

#include "common/byte_codec.h"

namespace ringrl::mpi {
namespace {

namespace fs = std::filesystem;

constexpr int kFuzzRounds = 20000;  // mutated messages per message kind

StartJob sample_start() {
  StartJob m;
  m.job = 42;
  m.slot = 3;
  m.args = {"train", "pqt", "--run-dir", "trial_3/print", "--set", "lr=0.1"};
  m.dir = "trial_3/print";
  m.seeds = {{"results.jsonl", "{\"global_rep\":0}\n"}, {"checkpoint.bin", std::string("\0\1\2\3", 4)}};
  return m;
}

JobExit sample_exit() {
  JobExit m;
  m.job = 7;
  m.wait_status = 130 << 8;
  m.files = {{"results.jsonl", "{}\n"}, {"train.log", "line\n"}};
  return m;
}

Hello sample_hello() { return {"0.1.0 (job protocol 1)", 0x1234, "node7", {"cpu", "cuda:0"}, true, {}}; }

void expect_same(const StartJob& a, const StartJob& b) {
  EXPECT_EQ(a.job, b.job);
  EXPECT_EQ(a.slot, b.slot);
  EXPECT_EQ(a.args, b.args);
  EXPECT_EQ(a.dir, b.dir);
  ASSERT_EQ(a.seeds.size(), b.seeds.size());
  for (std::size_t i = 0; i < a.seeds.size(); ++i) {
    EXPECT_EQ(a.seeds[i].name, b.seeds[i].name);
    EXPECT_EQ(a.seeds[i].bytes, b.seeds[i].bytes);
  }
}

BridgePlan sample_plan() {
  BridgePlan p;
  p.actors = 2;
  p.ring_capacity = 1 << 20;
  p.blob_bytes = 4096;
  p.record_mask = 0x6;
  p.budget_counter = "env_steps";
  p.config = "{\"env\": \"kinematic-maze\"}\n";
  p.launches = {{"actor", "--kind", "hiro", "--segment", "s", "--slot", "0", "--seed", "7"},
                {"actor", "--kind", "hiro-eval", "--segment", "s", "--slot", "1", "--seed", "8"}};
  return p;
}

BridgeStatus sample_status() {
  BridgeStatus s;
  s.running = 3;
  s.restarts = 1;
  s.final = true;
  s.signal = 15;
  s.lost_units = {12, 40};
  s.error = "rank 0: a second plan";
  return s;
}

const std::string kBlob = std::string("\x01\x02\x00\x7f", 4) + std::string(60, 'w');

std::string sample_weights() {
  return encode_weights(9, 5, 1234, reinterpret_cast<const std::byte*>(kBlob.data()), kBlob.size());
}

TEST(BridgeMessages, EveryMessageRoundTrips) {
  const BridgeControl plan = decode_control(encode(sample_plan()), "rank 0");
  ASSERT_EQ(plan.kind, BridgeControlKind::kPlan);
  EXPECT_EQ(plan.plan.actors, 2u);
  EXPECT_EQ(plan.plan.ring_capacity, 1u << 20);
  EXPECT_EQ(plan.plan.blob_bytes, 4096u);
  EXPECT_EQ(plan.plan.record_mask, 0x6u);
  EXPECT_EQ(plan.plan.budget_counter, "env_steps");
  EXPECT_EQ(plan.plan.config, sample_plan().config);
  EXPECT_EQ(plan.plan.launches, sample_plan().launches);
  const std::string w = sample_weights();
  const BridgeControl weights = decode_control(w, "rank 0");
  ASSERT_EQ(weights.kind, BridgeControlKind::kWeights);
  EXPECT_EQ(weights.channel_version, 9u);
  EXPECT_EQ(weights.count, 5u);
  EXPECT_EQ(weights.budget, 1234u);
  EXPECT_EQ(std::string(weights.blob), kBlob);
  EXPECT_EQ(weights.blob.data() + weights.blob.size(), w.data() + w.size()) << "a view into the message";
  const BridgeControl permits = decode_control(encode_count(BridgeControlKind::kPermits, 77), "rank 0");
  EXPECT_EQ(permits.kind, BridgeControlKind::kPermits);
  EXPECT_EQ(permits.count, 77u);
  EXPECT_EQ(decode_control(encode_count(BridgeControlKind::kBudget, 5), "rank 0").kind, BridgeControlKind::kBudget);
  EXPECT_EQ(decode_control(encode_stop(), "rank 0").kind, BridgeControlKind::kStop);
  const BridgeStatus st = decode_status(encode(sample_status()), "rank 2");
  EXPECT_EQ(st.running, 3u);
  EXPECT_EQ(st.restarts, 1u);
  EXPECT_FALSE(st.failed);
  EXPECT_TRUE(st.final);
  EXPECT_EQ(st.signal, 15);
  EXPECT_EQ(st.lost_units, std::vector<std::uint64_t>({12, 40}));
  EXPECT_EQ(st.error, "rank 0: a second plan");
}

TEST(BridgeMessages, AJobMessageIsNotAControlMessageNorTheReverse) {
  try {
    decode_control(encode(sample_hello()), "rank 0");
    FAIL() << "a hello decoded as a control message";
  } catch (const CorruptData& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0: control message"), std::string::npos) << e.what();
  }
  EXPECT_THROW(decode_status(encode_stop(), "rank 1"), CorruptData);
  EXPECT_THROW(decode_hello(encode(sample_status()), "rank 1"), CorruptData);
}

TEST(JobMessages, EveryMessageRoundTrips) {
  const Hello h = sample_hello();
  const Hello h2 = decode_hello(encode(h), "rank 1");
  EXPECT_EQ(h2.version, h.version);
  EXPECT_EQ(h2.fingerprint, h.fingerprint);
  EXPECT_EQ(h2.host, h.host);
  EXPECT_EQ(h2.slots, h.slots);
  EXPECT_TRUE(h2.shared);
  Hello failed = h;
  failed.error = "tune: trial 3: no such task";
  EXPECT_EQ(decode_hello(encode(failed), "rank 1").error, failed.error);
  EXPECT_EQ(refusal(failed, h, 1), "rank 1 on node7: tune: trial 3: no such task");
  EXPECT_EQ(decode_welcome(encode(Welcome{"refused: x"}), "rank 0").error, "refused: x");
  EXPECT_EQ(decode_welcome(encode(Welcome{}), "rank 0").error, "");
  expect_same(decode_start(encode(sample_start()), "rank 0"), sample_start());
  const JobExit e = decode_exit(encode(sample_exit()), "rank 2");
  EXPECT_EQ(e.job, 7u);
  EXPECT_EQ(e.wait_status, 130 << 8);
  ASSERT_EQ(e.files.size(), 2u);
  EXPECT_EQ(e.files[1].bytes, "line\n");
  const SignalJobs s = decode_signal(encode(SignalJobs{9, 2}), "rank 0");
  EXPECT_EQ(s.job, 9u);
  EXPECT_EQ(s.signal, 2);
  EXPECT_NO_THROW(decode_finish(encode_finish(), "rank 0"));
}

// Every decoder against every proper prefix of its message, and one byte too many.
TEST(JobMessages, TruncatedOrPaddedMessagesAreRefused) {
  const std::vector<std::pair<std::string, std::function<void(std::string_view)>>> cases = {
      {encode(sample_hello()), [](std::string_view b) { decode_hello(b, "rank 1"); }},
      {encode(Welcome{"no"}), [](std::string_view b) { decode_welcome(b, "rank 0"); }},
      {encode(sample_start()), [](std::string_view b) { decode_start(b, "rank 0"); }},
      {encode(sample_exit()), [](std::string_view b) { decode_exit(b, "rank 1"); }},
      {encode(SignalJobs{1, 15}), [](std::string_view b) { decode_signal(b, "rank 0"); }},
      {encode_finish(), [](std::string_view b) { decode_finish(b, "rank 0"); }},
      {encode(sample_plan()), [](std::string_view b) { decode_control(b, "rank 0"); }},
      {sample_weights(), [](std::string_view b) { decode_control(b, "rank 0"); }},
      {encode_count(BridgeControlKind::kPermits, 3), [](std::string_view b) { decode_control(b, "rank 0"); }},
      {encode_stop(), [](std::string_view b) { decode_control(b, "rank 0"); }},
      {encode(sample_status()), [](std::string_view b) { decode_status(b, "rank 1"); }},
  };
  for (const auto& [bytes, decode] : cases) {
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      const std::string prefix = bytes.substr(0, n);  // its own buffer: ASan sees any over-read
      EXPECT_THROW(decode(prefix), CorruptData) << "prefix of " << n << " of " << bytes.size() << " bytes";
    }
    EXPECT_THROW(decode(bytes + 'x'), CorruptData);
    EXPECT_NO_THROW(decode(bytes));
  }
}

TEST(JobMessages, WrongMagicVersionOrKindIsRefusedNamingTheSender) {
  std::string b = encode(sample_exit());
  b[0] ^= 1;
  try {
    decode_exit(b, "rank 5");
    FAIL() << "a wrong magic was accepted";
  } catch (const CorruptData& e) {
    EXPECT_NE(std::string(e.what()).find("rank 5: job message 'exit'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("magic"), std::string::npos) << e.what();
  }
  b = encode(sample_exit());
  b[4] = static_cast<char>(kJobProtocolVersion + 1);
  EXPECT_THROW(decode_exit(b, "rank 1"), CorruptData);
  EXPECT_THROW(decode_start(encode(sample_exit()), "rank 0"), CorruptData) << "an exit is not a start";
}

TEST(JobMessages, FileNamesAndDirectoriesCannotLeaveTheirDirectory) {
  for (const char* bad : {"", ".", "..", "a/b", "../x", "/etc"}) {
    JobExit e = sample_exit();
    e.files[0].name = bad;
    EXPECT_THROW(decode_exit(encode(e), "rank 1"), CorruptData) << bad;
  }
  for (const char* bad : {"", "/abs", "a/../b", "..", "a//b", "a/", "./a"}) {
    StartJob s = sample_start();
    s.dir = bad;
    EXPECT_THROW(decode_start(encode(s), "rank 0"), CorruptData) << bad;
  }
  EXPECT_TRUE(is_plain_relative_path("trial_3/remove-char-tune"));
  EXPECT_TRUE(is_plain_file_name("model-rep0.ckpt"));
  EXPECT_FALSE(is_plain_file_name(std::string("a\0b", 3)));
}

TEST(JobMessages, AHugeLengthPrefixIsRefusedBeforeAnyAllocation) {
  std::string b = encode(sample_exit());
  // job (8) and status (4) follow the 8-byte header; then the file count.
  const std::uint64_t huge = std::uint64_t{1} << 40;
  std::memcpy(b.data() + 8 + 8 + 4, &huge, sizeof huge);
  EXPECT_THROW(decode_exit(b, "rank 1"), CorruptData);
}

// Random mutations (flips, overwrites with extreme bytes, cuts, inserts) of valid messages:
// each decode either succeeds or throws CorruptData; none crashes or reads past the end.
TEST(JobMessages, FuzzedMessagesDecodeOrAreRefused) {
  std::mt19937_64 rng(20261205);
  const std::vector<std::pair<std::string, std::function<void(std::string_view)>>> cases = {
      {encode(sample_start()), [](std::string_view b) { decode_start(b, "rank 0"); }},
      {encode(sample_exit()), [](std::string_view b) { decode_exit(b, "rank 1"); }},
      {encode(sample_hello()), [](std::string_view b) { decode_hello(b, "rank 1"); }},
      {encode(sample_plan()), [](std::string_view b) { decode_control(b, "rank 0"); }},
  };
  for (const auto& [valid, decode] : cases) {
    std::size_t refused = 0;
    for (int round = 0; round < kFuzzRounds; ++round) {
      std::string b = valid;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < edits && !b.empty(); ++k) {
        const std::size_t at = rng() % b.size();
        switch (rng() % 4) {
          case 0: b[at] = static_cast<char>(b[at] ^ (1 << (rng() % 8))); break;
          case 1: b[at] = static_cast<char>((rng() & 1) ? 0xff : 0x00); break;
          case 2: b.resize(at); break;
          default: b.insert(at, 1, static_cast<char>(rng())); break;
        }
      }
      try {
        decode(b);
      } catch (const CorruptData&) {
        ++refused;
      }
    }
    EXPECT_GT(refused, static_cast<std::size_t>(kFuzzRounds / 2)) << "most mutations must be caught";
  }
}

TEST(JobMessages, RefusalNamesTheRankAndWhatDiffers) {
  const Hello mine = sample_hello();
  EXPECT_EQ(refusal(mine, mine, 1), "");
  Hello other = mine;
  other.version = "0.2.0 (job protocol 1)";
  EXPECT_NE(refusal(other, mine, 2).find("rank 2 on node7 runs ringrl 0.2.0"), std::string::npos)
      << refusal(other, mine, 2);
  other = mine;
  other.fingerprint = 99;
  EXPECT_NE(refusal(other, mine, 3).find("other settings"), std::string::npos);
  other = mine;
  other.slots.clear();
  EXPECT_NE(refusal(other, mine, 1).find("no run slot"), std::string::npos);
  EXPECT_NE(build_version().find("job protocol"), std::string::npos);
}

TEST(JobMessages, FingerprintSeesWhereStringsSplit) {
  EXPECT_NE(fingerprint({"ab", "c"}), fingerprint({"a", "bc"}));
  EXPECT_NE(fingerprint({"a"}), fingerprint({"a", ""}));
  EXPECT_EQ(fingerprint({"x", "y"}), fingerprint({"x", "y"}));
}

TEST(RunFiles, ReadAndWriteARunDirectory) {
  const fs::path dir = fs::temp_directory_path() / ("ringrl-runfiles-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "results.jsonl") << "{}\n";
  std::ofstream(dir / "big.bin") << std::string(1000, 'x');
  std::ofstream(dir / "checkpoint.bin.tmp.77") << "partial";
  std::ofstream(dir / "sub" / "inner") << "not shipped";
  std::vector<std::string> left_out;
  const auto files = read_run_files(dir, /*max_total_bytes=*/100, &left_out);
  ASSERT_EQ(files.size(), 1u) << "temporaries and subdirectories stay; the big file passes the bound";
  EXPECT_EQ(files[0].name, "results.jsonl");
  EXPECT_EQ(left_out, std::vector<std::string>{"big.bin"});

  const fs::path out = dir / "copy";
  write_run_files(out, {{"a.txt", "new"}, {"b.txt", "b"}}, false);
  write_run_files(out, {{"a.txt", "newer"}, {"c.txt", "c"}}, /*only_missing=*/true);
  std::ifstream a(out / "a.txt");
  std::string text;
  a >> text;
  EXPECT_EQ(text, "new") << "only_missing leaves an existing file";
  EXPECT_TRUE(fs::exists(out / "c.txt"));
  EXPECT_THROW(write_run_files(out, {{"../escape", "x"}}, false), CorruptData);
  EXPECT_FALSE(fs::exists(dir / "escape"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ringrl::mpi
