// `mpirun -np 2 ringrl bench link --json` on localhost (app/link_bench_cmd.cc): rank 0 alone
// prints one JSON line whose figures hold together: records through the bridge (bytes are the
// records' frames), the 1 MiB blob by broadcast, by sends and over the shared-memory channel,
// and the weight fan-out (at most one weights message in flight per node, never more than
// one per node and publication, every byte counted).
#include <sys/wait.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/mpi/mpirun_util.h"

namespace {

using namespace ringrl::testing;

constexpr double kBlobBytes = 65536;

TEST(BenchLink, TwoRanksPrintOneLineOfConsistentFigures) {
  const Outcome r = run(cat(mpirun(2), {RINGRL_BINARY, "bench", "link", "--seconds", "0.5", "--rounds", "5",
                                        "--blob-bytes", "65536", "--fanout-rate", "500", "--json"}));
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  ASSERT_EQ(count(r.out, "\n"), 1u) << "one line, rank 0's: " << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);

  const nlohmann::json& rec = j.at("records");
  EXPECT_EQ(rec.at("nodes"), 1);
  EXPECT_EQ(rec.at("producers_per_node"), 2);
  EXPECT_EQ(rec.at("record_bytes"), 300);
  EXPECT_GT(rec.at("records_per_s").get<double>(), 0);
  // Each 300-byte record takes a 32-byte frame and pads to 16 bytes: 336 bytes on the wire.
  EXPECT_NEAR(rec.at("bytes_per_s").get<double>() / rec.at("records_per_s").get<double>(), 336.0, 1e-6);

  for (const char* key : {"weights_bcast", "weights_sends"}) {
    const nlohmann::json& w = j.at(key);
    EXPECT_EQ(w.at("blob_bytes"), 65536) << key;
    EXPECT_GT(w.at("p50_us").get<double>(), 0) << key;
    EXPECT_LE(w.at("p50_us").get<double>(), w.at("max_us").get<double>()) << key;
  }
  EXPECT_LE(j.at("weights_shm_channel").at("p50_us").get<double>(), j.at("weights_shm_channel").at("max_us").get<double>());

  const nlohmann::json& f = j.at("weights_fanout");
  EXPECT_EQ(f.at("nodes"), 1);
  const double pubs = f.at("publications").get<double>();
  EXPECT_GE(pubs, 200) << "500/s for 0.5 s";
  EXPECT_LE(f.at("most_in_flight").get<int>(), 1) << "one weights message in flight per node at most";
  const double messages = f.at("weights_messages").get<double>();
  EXPECT_GE(messages, 1);
  EXPECT_LE(messages, pubs) << "never more than one message per node and publication";
  EXPECT_NEAR(f.at("messages_per_node_per_publication").get<double>(), messages / pubs, 1e-9);
  // Each message is the blob and a small header.
  const double per_message = f.at("bytes_per_publication").get<double>() * pubs / messages;
  EXPECT_GT(per_message, kBlobBytes);
  EXPECT_LT(per_message, kBlobBytes + 128);
  EXPECT_FALSE(j.at("host").get<std::string>().empty());
  EXPECT_TRUE(j.at("progress_thread").get<bool>()) << "rank 0 moves its messages as a run does";
}

}  // namespace
