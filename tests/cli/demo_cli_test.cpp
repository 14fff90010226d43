// The bundled demo folder (generated at build time by tests/writers): the same weights as GGUF, BF16
// SafeTensors, MLX 4-bit and an Ollama store of two models. Every model passes `check` and names the
// same 39 logical tensors through canonical names; `akview DEMO` in batch mode lists the five; the
// quantized forms differ from the BF16 original only by quantization error.
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "tests/cli/run_process.hpp"

namespace akview::testing {
namespace {

const std::string kDemo = std::string(AKVIEW_DEMO_DIR) + "/demo";
const std::string kGguf = kDemo + "/llama-demo-q4km.gguf";
const std::string kBf16 = kDemo + "/llama-demo-bf16";
const std::string kMlx = kDemo + "/llama-demo-mlx-4bit";
const std::string kManifests = kDemo + "/ollama/manifests/registry.ollama.ai/library/llama-demo/";
const std::string kOllamaGguf = kManifests + "q4_k_m";
const std::string kOllamaInt4 = kManifests + "int4";

struct DemoModel {
  std::string path, format;
  size_t tensors;   // every tensor listed, companions (scales, biases) included
};
const DemoModel kModels[] = {
    {kGguf, "gguf", 39},
    {kBf16, "safetensors-sharded", 39},
    {kMlx, "mlx", 39 + 2 * 30},   // 30 matrices, each with .scales and .biases
    {kOllamaGguf, "ollama", 39},
    {kOllamaInt4, "ollama", 39 + 2 * 28},   // 28 matrices int4 (not the embedding, not lm_head)
};

TEST(DemoModel, EveryModelPassesCheck) {
  for (const auto& m : kModels) {
    auto r = run_akview({"check", m.path, "--json"});
    EXPECT_EQ(r.exit_code, 0) << m.path << r.out << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j["ok"].get<bool>()) << m.path;
    EXPECT_EQ(j["format"], m.format) << m.path;
  }
  auto info = nlohmann::json::parse(run_akview({"info", kGguf, "--json"}).out);
  EXPECT_EQ(info["format"], "gguf");
  EXPECT_EQ(info["tensors"], 39);
  EXPECT_EQ(info["architecture"], "llama");
}

TEST(DemoModel, EveryModelListsTheSameCanonicalTensors) {
  std::set<std::string> first;
  for (const auto& m : kModels) {
    auto r = run_akview({"tensors", m.path, "--json"});
    ASSERT_EQ(r.exit_code, 0) << m.path << r.err;
    auto rows = nlohmann::json::parse(r.out);
    EXPECT_EQ(rows.size(), m.tensors) << m.path;
    std::set<std::string> canonical;
    for (const auto& t : rows) {
      if (t.contains("companion")) continue;
      EXPECT_FALSE(t.contains("unsupported")) << m.path << " " << t["name"];
      ASSERT_TRUE(t["canonical"].is_string()) << m.path << " " << t["name"];
      canonical.insert(t["canonical"].get<std::string>());
    }
    EXPECT_EQ(canonical.size(), 39u) << m.path;
    if (first.empty()) first = canonical;
    EXPECT_EQ(canonical, first) << m.path;
  }
}

TEST(DemoModel, FolderListsEveryFormatInBatchMode) {
  auto r = run_akview({kDemo, "--json"});   // stdout is a pipe: batch mode
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 5u) << r.out;
  const std::pair<const char*, const char*> want[] = {{"llama-demo-bf16", "safetensors-sharded"},
                                                      {"llama-demo-mlx-4bit", "mlx"},
                                                      {"llama-demo-q4km.gguf", "gguf"},
                                                      {"ollama/llama-demo:int4", "ollama"},
                                                      {"ollama/llama-demo:q4_k_m", "ollama"}};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(j[i]["name"], want[i].first);
    EXPECT_EQ(j[i]["format"], want[i].second) << j[i].dump();
    EXPECT_FALSE(j[i].contains("error")) << j[i].dump();
    EXPECT_EQ(j[i]["parameters"], j[0]["parameters"]) << j[i]["name"];   // the same weights, five ways
    EXPECT_EQ(j[i]["tensors"], j[0]["tensors"]) << j[i]["name"];
    EXPECT_EQ(j[i]["architecture"], "llama") << j[i].dump();
    // The type mix adds up to the tensors, most bytes first, and its first row is the main type.
    uint64_t tensors = 0, last = UINT64_MAX;
    for (const auto& t : j[i]["types"]) {
      tensors += t["tensors"].get<uint64_t>();
      EXPECT_LE(t["bytes"].get<uint64_t>(), last) << j[i].dump();
      last = t["bytes"].get<uint64_t>();
    }
    EXPECT_EQ(tensors, j[i]["tensors"].get<uint64_t>()) << j[i].dump();
    EXPECT_EQ(j[i]["types"][0]["type"], j[i]["main_type"]) << j[i].dump();
  }
  EXPECT_EQ(j[1]["main_type"], "mlx.affine 4-bit g64");
  EXPECT_EQ(j[2]["main_type"], "q4_k");
  EXPECT_EQ(j[3]["source"], "ollama");
  EXPECT_EQ(j[3]["main_type"], "ollama.int4 4-bit g64");

  auto text = run_akview({kDemo});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("llama-demo-mlx-4bit"), std::string::npos) << text.out;
  // A batch command on the folder names its models instead of opening one of them.
  auto tensors = run_akview({"tensors", kDemo});
  EXPECT_NE(tensors.exit_code, 0);
  EXPECT_NE(tensors.err.find("holds 5 models"), std::string::npos) << tensors.err;
}

// `info` names the architecture of every format: GGUF's general.architecture, else config.json's model_type.
TEST(DemoModel, InfoNamesTheArchitectureOfEveryFormat) {
  for (const auto& path : {kGguf, kMlx, kOllamaInt4, kBf16}) {
    auto r = run_akview({"info", path, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["architecture"], "llama") << path;
  }
}

TEST(DemoModel, QuantizedAgainstOriginalPairsEveryTensor) {
  for (const auto& quantized : {kGguf, kMlx, kOllamaInt4}) {
    auto r = run_akview({"diff", quantized, kBf16, "--json"});
    ASSERT_EQ(r.exit_code, 0) << quantized << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["only_a"], 0) << quantized;
    EXPECT_EQ(j["only_b"], 0) << quantized;
    EXPECT_EQ(j["shape_changes"], 0) << quantized;
    ASSERT_EQ(j["tensors"].size(), 39u) << quantized;
    int four_bit = 0;
    for (const auto& t : j["tensors"]) {
      EXPECT_TRUE(t["canonical"].get<bool>()) << t["key"];
      const double cos = t["error"]["cosine"].get<double>();
      EXPECT_GT(cos, 0.99) << quantized << " " << t["key"];   // quantization keeps the direction
      const std::string type = t["type_a"].get<std::string>();
      if (type == "q4_k" || type.find("4-bit") != std::string::npos || type.rfind("mlx.affine", 0) == 0 ||
          type.rfind("ollama.int4", 0) == 0) {
        EXPECT_LT(cos, 0.9999) << quantized << " " << t["key"];   // ... but 4 bits do show
        ++four_bit;
      }
    }
    EXPECT_GT(four_bit, 0) << quantized;   // the model has 4-bit tensors: the check above ran
  }
}

}   // namespace
}   // namespace akview::testing
