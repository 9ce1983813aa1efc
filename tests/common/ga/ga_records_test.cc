// The GA's record and request blob (common/ga/): the decoder refuses every malformed record
// without reading past it, and a request survives the blob both ways.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/ga/fitness_record.h"
#include "common/ga/request_layout.h"

namespace {

using namespace ringrl;

GaFitnessRecord good() {
  GaFitnessRecord r{};
  r.request_index = 3;
  r.correct = 1;
  r.reward = 0.5;
  r.genome_hash = 42;
  return r;
}

std::string decode_error(const GaFitnessRecord& r, std::uint32_t bytes, std::uint32_t count) {
  std::vector<std::byte> buf(std::max<std::size_t>(bytes, sizeof r));
  std::memcpy(buf.data(), &r, sizeof r);
  GaFitnessRecord out;
  std::string error;
  return decode_ga_fitness(buf.data(), bytes, count, &out, &error) ? std::string() : error;
}

TEST(GaFitnessRecord, DecodesAGoodRecordAndRefusesBadOnes) {
  EXPECT_EQ(decode_error(good(), sizeof(GaFitnessRecord), 4), "");
  EXPECT_NE(decode_error(good(), sizeof(GaFitnessRecord) - 1, 4).find("bytes"), std::string::npos);
  EXPECT_NE(decode_error(good(), sizeof(GaFitnessRecord) + 8, 4).find("bytes"), std::string::npos);
  EXPECT_NE(decode_error(good(), sizeof(GaFitnessRecord), 3).find("row 3"), std::string::npos);
  GaFitnessRecord r = good();
  r.correct = 2;
  EXPECT_NE(decode_error(r, sizeof r, 4), "");
  r = good();
  r.reserved = 1;
  EXPECT_NE(decode_error(r, sizeof r, 4), "");
  r = good();
  r.reward = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(decode_error(r, sizeof r, 4).find("non-finite"), std::string::npos);
}

TEST(GaRequest, RoundTripsThroughTheBlobAndRefusesBadGenes) {
  const BlobLayout layout = ga_request_layout(4, 5);
  std::vector<float> payload(layout.num_floats());
  const std::vector<std::string> sent = {"><+-[", "].,><"};
  write_ga_request(payload.data(), layout, sent);
  std::vector<std::string> got;
  std::string error;
  ASSERT_TRUE(read_ga_request(payload.data(), layout, &got, &error)) << error;
  EXPECT_EQ(got, sent);
  EXPECT_NE(ga_request_layout(4, 5).fingerprint(), ga_request_layout(5, 4).fingerprint());
  payload[layout.tensor(1).offset + 2] = 8.f;  // not an op
  EXPECT_FALSE(read_ga_request(payload.data(), layout, &got, &error));
  EXPECT_NE(error.find("row 0 gene 2"), std::string::npos) << error;
  write_ga_request(payload.data(), layout, sent);
  payload[layout.tensor(0).offset] = 5.f;  // more rows than the population
  EXPECT_FALSE(read_ga_request(payload.data(), layout, &got, &error));
}

}  // namespace
