// The oracles' JSON listings are read so that a missing file is an error naming it: an exception
// inside a test (the test fails with the path), an empty listing while tests are discovered (the
// binary still lists its tests), never nlohmann's "unexpected end of input".
#include <gtest/gtest.h>

#include <string>

#include "tests/common/oracle_data.hpp"

namespace akview::testing {
namespace {

TEST(OracleData, MissingFileIsAnErrorNamingIt) {
  const std::string path = oracle_data_path("no/such/listing.json");
  EXPECT_EQ(oracle_json_problem("no/such/listing.json"),
            "missing test data: " + path + " (the oracles live in tests/oracles)");
  try {
    (void)oracle_json("no/such/listing.json");
    ADD_FAILURE() << "no exception";
  } catch (const MissingTestData& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_EQ(oracle_json_or_empty("no/such/listing.json"), nlohmann::json::object());
}

TEST(OracleData, BrokenFileIsAnErrorNamingIt) {
  // A data file that is there but no JSON (a GGUF file of the oracles).
  EXPECT_EQ(oracle_json_problem("gguf/f32.gguf"), "test data is not valid JSON: " + oracle_data_path("gguf/f32.gguf"));
  EXPECT_THROW((void)oracle_json("gguf/f32.gguf"), MissingTestData);
  EXPECT_EQ(oracle_json_or_empty("gguf/f32.gguf"), nlohmann::json::object());
}

TEST(OracleData, TheCarriedOraclesAreThere) {
  EXPECT_EQ(oracle_json_problem("manifest.json"), "");
  EXPECT_EQ(oracle_json("manifest.json")["format"], "akview-oracle-manifest/1");
  EXPECT_NE(std::string(AKVIEW_ORACLES_DIR).find("/tests/oracles"), std::string::npos) << AKVIEW_ORACLES_DIR;
}

}   // namespace
}   // namespace akview::testing
