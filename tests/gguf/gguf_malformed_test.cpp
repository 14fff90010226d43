// Every malformed/gguf_* case of the oracles gets the verdict malformed.json gives it:
// controls open; broken files are refused with GGUF's own error naming the file and a byte offset.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/formats/format.hpp"
#include "tests/common/oracle_data.hpp"

namespace akview {
namespace {

using nlohmann::json;

// Read while the tests are discovered: a missing listing gives no cases, and HasGgufCases names it.
std::vector<json> gguf_cases() {
  const json listing = testing::oracle_json_or_empty("malformed/malformed.json");
  std::vector<json> cases;
  if (!listing.contains("cases")) return cases;
  for (const auto& c : listing["cases"])
    if (c["path"].get<std::string>().find("malformed/gguf_") == 0) cases.push_back(c);
  return cases;
}

class GgufMalformed : public ::testing::TestWithParam<json> {};

TEST_P(GgufMalformed, GetsItsVerdict) {
  const json& c = GetParam();
  const std::string path = std::string(AKVIEW_ORACLES_DIR) + "/" + c["path"].get<std::string>();
  const std::string expect = c["expect"].get<std::string>();
  SCOPED_TRACE(c["reason"].get<std::string>());
  auto model = open_model(path);
  if (expect == "accept") {
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    EXPECT_EQ(model->format, "gguf");
    EXPECT_FALSE(model->tensors.empty());
    return;
  }
  ASSERT_TRUE(expect == "reject" || expect == "reject_strict") << expect;
  if (expect == "reject_strict" && model.ok()) return;   // lenient acceptance is allowed
  ASSERT_FALSE(model.ok()) << "accepted a file that must be refused";
  const Error& e = model.error();
  // Refused by the GGUF parser (not "unrecognised"), at a position in the file.
  EXPECT_NE(e.code, ErrorCode::not_recognized);
  EXPECT_NE(e.code, ErrorCode::io);
  EXPECT_EQ(e.file, path);
  ASSERT_NE(e.offset, kNoOffset) << e.to_string();
  EXPECT_LE(e.offset, c["size"].get<uint64_t>());
  EXPECT_NE(e.to_string().find(path + "@0x"), std::string::npos) << e.to_string();
  EXPECT_FALSE(e.message.empty());
}

std::string case_name(const ::testing::TestParamInfo<json>& info) {
  std::string s = info.param["path"].get<std::string>();
  s = s.substr(s.find('/') + 1);
  for (auto& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Oracles, GgufMalformed, ::testing::ValuesIn(gguf_cases()), case_name);

TEST(GgufMalformedListing, HasGgufCases) {
  ASSERT_EQ(testing::oracle_json_problem("malformed/malformed.json"), "");
  EXPECT_GE(gguf_cases().size(), 15u);
}

}   // namespace
}   // namespace akview
