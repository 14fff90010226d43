// The bundled demo models (generated at build time by tests/writers): both pass `check`, name the
// same 39 tensors through canonical names, and their values differ only by quantization error.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_process.hpp"

namespace akview::testing {
namespace {

const std::string kDemo = std::string(AKVIEW_DEMO_DIR) + "/demo";
const std::string kDemoHf = std::string(AKVIEW_DEMO_DIR) + "/demo-hf";

TEST(DemoModel, BothFormsPassCheck) {
  for (const auto& path : {kDemo, kDemoHf}) {
    auto r = run_akview({"check", path, "--json"});
    EXPECT_EQ(r.exit_code, 0) << path << r.out << r.err;
    EXPECT_TRUE(nlohmann::json::parse(r.out)["ok"].get<bool>());
  }
  auto info = nlohmann::json::parse(run_akview({"info", kDemo, "--json"}).out);
  EXPECT_EQ(info["format"], "gguf");
  EXPECT_EQ(info["tensors"], 39);
  EXPECT_EQ(info["architecture"], "llama");
}

TEST(DemoModel, QuantizedAgainstOriginalPairsEveryTensor) {
  auto r = run_akview({"diff", kDemo, kDemoHf, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["only_a"], 0);
  EXPECT_EQ(j["only_b"], 0);
  EXPECT_EQ(j["shape_changes"], 0);
  ASSERT_EQ(j["tensors"].size(), 39u);
  int q4_k = 0;
  for (const auto& t : j["tensors"]) {
    EXPECT_TRUE(t["canonical"].get<bool>()) << t["key"];
    const double cos = t["error"]["cosine"].get<double>();
    EXPECT_GT(cos, 0.99) << t["key"];        // quantization keeps the direction
    if (t["type_a"] == "q4_k") {
      EXPECT_LT(cos, 0.9999) << t["key"];   // ... but 4 bits do show
      ++q4_k;
    }
  }
  EXPECT_GT(q4_k, 0);   // the demo model has q4_k tensors: the check above ran
}

}  // namespace
}  // namespace akview::testing
