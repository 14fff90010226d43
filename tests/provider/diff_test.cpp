// diff through canonical names: quantized oracle models against their float originals reproduce
// the manifest's error_vs_orig; GGUF vs HF pairs by canonical name; PyTorch pairs by native name.
#include <gtest/gtest.h>

#include <cmath>

#include "core/diff.hpp"
#include "core/formats/format.hpp"
#include "core/names/name_map.hpp"
#include "tests/provider/oracle_util.hpp"

namespace akview {
namespace {

using test::manifest;
using test::oracle;

const nlohmann::json& st_model(const std::string& name) {
  for (const auto& m : manifest()["safetensors"]["models"])
    if (m["name"] == name) return m;
  throw std::runtime_error("no model " + name);
}

void expect_rel(double got, double want, const std::string& what) {
  const double tol = 1e-6 * std::max(std::fabs(want), 1e-30);
  EXPECT_NEAR(got, want, tol) << what;
}

// `quantized` against the float model its `orig` references come from.
void check_errors(const std::string& quantized, const std::string& original) {
  const auto& entry = st_model(quantized);
  auto a = open_model(oracle(entry["dir"]));
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  auto b = open_model(oracle(st_model(original)["dir"]));
  ASSERT_TRUE(b.ok()) << b.error().to_string();
  DiffOptions options;
  options.values = true;
  options.chunk_elems = 1000;   // several chunks per tensor
  double last_progress = 0;
  options.progress = [&](double p) { last_progress = p; };
  DiffReport report = diff_models(*a, *b, options);
  EXPECT_EQ(report.only_a, 0u);
  EXPECT_EQ(report.only_b, 0u);
  EXPECT_EQ(report.shape_changes, 0u);
  EXPECT_DOUBLE_EQ(last_progress, 1.0);
  NameMap map = build_name_map(*a);
  size_t checked = 0;
  for (const auto& want : entry["tensors"]) {
    if (!want.contains("error_vs_orig")) continue;
    const std::string native = want.contains("weight") ? want["weight"]["name"].get<std::string>() : want["name"].get<std::string>();
    const TensorDiff* row = nullptr;
    for (const auto& d : report.rows)
      if (d.a != kNone && a->tensors[d.a].name == native) row = &d;
    ASSERT_NE(row, nullptr) << native;
    EXPECT_TRUE(row->type_differs);
    ASSERT_TRUE(row->has_values) << native << ": " << row->value_problem;
    const auto& ev = want["error_vs_orig"];
    expect_rel(row->error.max_abs, ev["max_abs"].get<double>(), native + " max_abs");
    expect_rel(row->error.rmse, ev["rmse"].get<double>(), native + " rmse");
    expect_rel(row->error.rel_rmse, ev["rel_rmse"].get<double>(), native + " rel_rmse");
    EXPECT_GT(row->error.cosine, 0.9);
    ++checked;
  }
  EXPECT_GT(checked, 5u);
}

TEST(Diff, MlxQ4AgainstF16ReproducesErrorVsOrig) { check_errors("mlx_q4_g64_f16", "plain_f16"); }
TEST(Diff, MlxQ8AgainstBf16ReproducesErrorVsOrig) { check_errors("mlx_q8_g32_bf16", "plain_bf16"); }
TEST(Diff, OllamaStAgainstBf16ReproducesErrorVsOrig) { check_errors("ollama_st", "plain_bf16"); }

TEST(Diff, Bf16AgainstF32ReproducesErrorVsOrig) { check_errors("plain_bf16", "plain_f32"); }

TEST(Diff, GgufAgainstHfPairsByCanonicalName) {
  auto a = open_model(oracle("gguf/f32.gguf"));
  auto b = open_model(oracle("st/plain_f32"));
  ASSERT_TRUE(a.ok() && b.ok());
  DiffReport report = diff_models(*a, *b);
  EXPECT_EQ(report.only_a, 0u);
  EXPECT_GT(report.only_b, 0u);   // the GGUF oracle holds a subset of the layer
  for (const auto& d : report.rows)
    if (d.a != kNone) {
      EXPECT_NE(d.b, kNone) << d.key;
    }
}

TEST(Diff, PyTorchZipAgainstLegacyIsIdentical) {
  auto a = open_model(oracle("pytorch/conv_linear_zip.pt"));
  auto b = open_model(oracle("pytorch/conv_linear_legacy.pt"));
  ASSERT_TRUE(a.ok() && b.ok());
  DiffOptions options;
  options.values = true;
  DiffReport report = diff_models(*a, *b, options);
  EXPECT_EQ(report.only_a + report.only_b + report.shape_changes + report.type_changes, 0u);
  for (const auto& d : report.rows) {
    EXPECT_FALSE(d.canonical);
    ASSERT_TRUE(d.has_values) << d.key << ": " << d.value_problem;
    EXPECT_EQ(d.error.max_abs, 0.0) << d.key;
  }
}

TEST(Diff, CancelStopsEarly) {
  auto a = open_model(oracle("st/mlx_q4_g64_f16"));
  auto b = open_model(oracle("st/plain_f16"));
  std::atomic<bool> cancel{true};
  DiffOptions options;
  options.values = true;
  options.cancel = &cancel;
  DiffReport report = diff_models(*a, *b, options);
  EXPECT_TRUE(report.cancelled);
}

}  // namespace
}  // namespace akview
