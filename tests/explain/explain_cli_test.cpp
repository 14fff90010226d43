// `akview explain` through the real binary: the JSON has exactly the documented keys, its values
// equal the oracle's deq for a GGUF and an MLX tensor, text output is escaped, and bad elements fail
// with exit 1 naming the range (a ROW that is no number is a usage error, exit 2).
#include <gtest/gtest.h>

#include <set>

#include "tests/cli/cli_util.hpp"
#include "tests/cli/run_process.hpp"
#include "tests/decode/oracle_helpers.hpp"

namespace akview::testing {
namespace {

using nlohmann::json;

std::string fmt_hex(uint8_t b) {
  static constexpr char kHex[] = "0123456789abcdef";
  return {kHex[b >> 4], kHex[b & 15]};
}

std::set<std::string> keys_of(const json& j) {
  std::set<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.insert(it.key());
  return k;
}

void expect_values_equal_deq(const json& j, const std::string& deq_rel, int64_t n_cols) {
  const auto ref = read_f32(kOracles + "/" + deq_rel);
  const int64_t row = j["group"]["row"], col0 = j["group"]["col"];
  ASSERT_EQ(j["values"].size(), j["group"]["n"].get<size_t>());
  for (size_t k = 0; k < j["values"].size(); ++k) {
    const float want = ref[static_cast<size_t>(row * n_cols + col0) + k];
    EXPECT_TRUE(test::same_bits(j["values"][k].get<float>(), want))
        << "column " << col0 + static_cast<int64_t>(k) << ": " << j["values"][k] << " vs " << want;
  }
}

TEST(ExplainCli, Q4kJsonHasExactlyTheDocumentedKeysAndDeqValues) {
  auto r = run_akview({"explain", kOracles + "/gguf/lq_q4_k_m.gguf", "blk.0.attn_k.weight", "3", "300", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(keys_of(j), (std::set<std::string>{"name", "type", "row", "col", "group", "bytes", "steps", "values"}));
  EXPECT_EQ(keys_of(j["group"]), (std::set<std::string>{"row", "col", "n"}));
  EXPECT_EQ(keys_of(j["bytes"]), (std::set<std::string>{"offset", "hex"}));
  EXPECT_EQ(j["type"], "q4_k");
  EXPECT_EQ(j["row"], 3);
  EXPECT_EQ(j["col"], 300);
  EXPECT_EQ(j["group"]["col"], 288);
  EXPECT_EQ(j["group"]["n"], 32);
  EXPECT_EQ(j["bytes"]["hex"].get<std::string>().size(), 2u * 144);
  for (const auto& s : j["steps"]) EXPECT_EQ(keys_of(s), (std::set<std::string>{"label", "formula", "values"}));
  // The block's bytes are the file's bytes at the offset.
  const auto file = read_bytes(kOracles + "/gguf/lq_q4_k_m.gguf");
  const uint64_t off = j["bytes"]["offset"];
  std::string hex;
  for (size_t k = 0; k < 144; ++k) hex += fmt_hex(static_cast<uint8_t>(file[off + k]));
  EXPECT_EQ(hex, j["bytes"]["hex"]);
  for (const auto& f : test::manifest()["gguf"]["files"])
    if (f["path"] == "gguf/lq_q4_k_m.gguf")
      for (const auto& t : f["tensors"])
        if (t["name"] == "blk.0.attn_k.weight") expect_values_equal_deq(j, t["deq"]["path"], 512);
}

TEST(ExplainCli, MlxAffineByCanonicalNameEqualsDeq) {
  auto r =
      run_akview({"explain", kOracles + "/st/mlx_q4_g64_f16", "layers.0.attention.q.weight", "4", "127", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["type"], "mlx.affine");
  EXPECT_EQ(j["group"]["col"], 64);
  EXPECT_EQ(j["group"]["n"], 64);
  expect_values_equal_deq(j, "st/ref/mlx_q4_g64_f16/model.layers.0.self_attn.q_proj.deq.f32", 128);
  bool scales = false, biases = false;
  for (const auto& s : j["steps"]) {
    scales = scales || s["label"].get<std::string>().rfind("scales", 0) == 0;
    biases = biases || s["label"].get<std::string>().rfind("biases", 0) == 0;
  }
  EXPECT_TRUE(scales && biases);
}

TEST(ExplainCli, TextNamesTheStepsAndTheFamily) {
  auto r = run_akview({"explain", kOracles + "/gguf/lq_iq2_xxs.gguf", "blk.0.attn_v.weight", "0", "40"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* want :
       {"iq2_xxs", "grid indices", "grid values", "sign bytes", "formula", "family: ggml i-quants", "bits per weight"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
}

TEST(ExplainCli, ElementOutsideTheTensorIsExit1NamingTheRange) {
  auto r = run_akview({"explain", kOracles + "/gguf/q4_0.gguf", "token_embd.weight", "40", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("row 40 is outside the tensor's rows [0, 40)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("out_of_bounds"), std::string::npos) << r.err;
  auto c = run_akview({"explain", kOracles + "/gguf/q4_0.gguf", "token_embd.weight", "0", "512", "--json"});
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_NE(c.err.find("column 512 is outside the tensor's columns [0, 512)"), std::string::npos) << c.err;
  EXPECT_TRUE(c.out.empty());
  auto n = run_akview({"explain", kOracles + "/gguf/q4_0.gguf", "token_embd.weight", "one", "0"});
  EXPECT_EQ(n.exit_code, 2) << "a ROW that is no number is a usage error";
  auto t = run_akview({"explain", kOracles + "/gguf/q4_0.gguf", "no.such.tensor", "0", "0"});
  EXPECT_EQ(t.exit_code, 1);
}

}   // namespace
}   // namespace akview::testing
