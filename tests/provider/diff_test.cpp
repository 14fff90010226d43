// diff through canonical names: quantized oracle models against their float originals reproduce
// the manifest's error_vs_orig; GGUF vs HF pairs by canonical name; PyTorch pairs by native name.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "core/diff.hpp"
#include "core/formats/format.hpp"
#include "core/names/name_map.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/provider/oracle_util.hpp"

namespace akview {
namespace {

using test::manifest;
using test::oracle;
using test::st_model;

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
    const std::string native =
        want.contains("weight") ? want["weight"]["name"].get<std::string>() : want["name"].get<std::string>();
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

// The value errors made on several threads in chunks equal a per-value loop over both tensors decoded
// whole (max_abs exactly, the sums to 1e-12), and do not depend on the thread count.
TEST(Diff, ValueErrorsEqualPerValueLoopOnAnyThreadCount) {
  auto a = open_model(oracle("st/mlx_q4_g64_f16"));
  auto b = open_model(oracle("st/plain_f16"));
  ASSERT_TRUE(a.ok() && b.ok());
  DiffOptions structure;
  DiffReport pairs = diff_models(*a, *b, structure);
  size_t checked = 0;
  for (const TensorDiff& d : pairs.rows) {
    if (d.a == kNone || d.b == kNone || d.shape_differs) continue;
    const int64_t n = static_cast<int64_t>(a->n_elements(a->tensors[d.a]));
    const int64_t cols = a->shape(a->tensors[d.a]).back(), rows = n / cols;
    std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
    ASSERT_TRUE(decode_tensor_rows(*a, d.a, 0, rows, x.data()).ok());
    ASSERT_TRUE(decode_tensor_rows(*b, d.b, 0, rows, y.data()).ok());
    long double sum_sq = 0, ref_sq = 0, a_sq = 0, dot = 0;
    double max_abs = 0;
    for (size_t k = 0; k < x.size(); ++k) {
      const double e = static_cast<double>(x[k]) - y[k];
      max_abs = std::max(max_abs, std::fabs(e));
      sum_sq += e * e;
      ref_sq += static_cast<long double>(y[k]) * y[k];
      a_sq += static_cast<long double>(x[k]) * x[k];
      dot += static_cast<long double>(x[k]) * y[k];
    }
    const double rmse = std::sqrt(static_cast<double>(sum_sq / n));
    const double cosine = static_cast<double>(dot / std::sqrt(a_sq * ref_sq));
    std::optional<ValueError> first;
    for (int threads : {1, 2, 5}) {
      DiffOptions o;
      o.threads = threads;
      o.chunk_elems = 3 * static_cast<uint64_t>(cols) + 1;   // several chunks of 3 rows
      auto e = compare_values(*a, *b, d, o);
      ASSERT_TRUE(e.ok()) << e.error().to_string();
      EXPECT_EQ(e->max_abs, max_abs) << a->tensors[d.a].name;
      EXPECT_NEAR(e->rmse, rmse, 1e-12 * rmse) << a->tensors[d.a].name;
      EXPECT_NEAR(e->cosine, cosine, 1e-12) << a->tensors[d.a].name;
      EXPECT_EQ(e->elements, static_cast<uint64_t>(n));
      if (!first) first = *e;
      EXPECT_EQ(e->rmse, first->rmse) << threads << " threads";
      EXPECT_EQ(e->rel_rmse, first->rel_rmse) << threads << " threads";
      EXPECT_EQ(e->cosine, first->cosine) << threads << " threads";
    }
    ++checked;
  }
  EXPECT_GT(checked, 5u);
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

}   // namespace
}   // namespace akview

namespace akview {
namespace {

// Plain tensors are read as raw rows copied out of the mapping, and a chunk whose bytes are equal on
// both sides is decoded once: every value error must be the one the mapping path gives (a custom
// RowDecoder, here the default one, takes that path), to the bit. Pairs: quantized against f32
// (types differ), a model against itself (every chunk equal), and against a copy with a byte near
// its end changed (equal chunks, then unequal ones).
TEST(Diff, RawRowsAndEqualChunksGiveTheMappingPathsErrorsToTheBit) {
  const std::string q4 = oracle("gguf/q4_0.gguf");
  // A directory of its own: the same test runs at once in the haswell and x86-64-v2 builds
  // (tests/provider/provider.cmake), which wrote and read one shared file.
  const akview::testing::TempDir dir;
  const std::filesystem::path changed = dir.file("changed_q4_0.gguf");
  std::filesystem::copy_file(q4, changed, std::filesystem::copy_options::overwrite_existing);
  {
    std::fstream f(changed, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-100, std::ios::end);
    const char c = static_cast<char>(f.get());
    f.seekp(-100, std::ios::end);
    f.put(static_cast<char>(c ^ 0x5A));
  }
  const std::pair<std::string, std::string> kPairs[] = {
      {q4, oracle("gguf/f32.gguf")},
      {oracle("gguf/lq_q4_k_m.gguf"), oracle("gguf/f32.gguf")},
      {q4, q4},
      {changed.string(), q4},
  };
  size_t equal_rows = 0, unequal_rows = 0;
  for (const auto& [pa, pb] : kPairs) {
    SCOPED_TRACE(pa + " against " + pb);
    auto a = open_model(pa);
    auto b = open_model(pb);
    ASSERT_TRUE(a.ok() && b.ok());
    DiffOptions fast, mapped;
    fast.values = mapped.values = true;
    fast.chunk_elems = mapped.chunk_elems = 1000;   // several chunks per tensor
    mapped.decode = decode_tensor_rows;
    const DiffReport rf = diff_models(*a, *b, fast), rm = diff_models(*a, *b, mapped);
    ASSERT_EQ(rf.rows.size(), rm.rows.size());
    for (size_t i = 0; i < rf.rows.size(); ++i) {
      const TensorDiff &f = rf.rows[i], &m = rm.rows[i];
      ASSERT_EQ(f.has_values, m.has_values) << f.key;
      if (!f.has_values) continue;
      EXPECT_EQ(std::bit_cast<uint64_t>(f.error.max_abs), std::bit_cast<uint64_t>(m.error.max_abs)) << f.key;
      EXPECT_EQ(std::bit_cast<uint64_t>(f.error.rmse), std::bit_cast<uint64_t>(m.error.rmse)) << f.key;
      EXPECT_EQ(std::bit_cast<uint64_t>(f.error.rel_rmse), std::bit_cast<uint64_t>(m.error.rel_rmse)) << f.key;
      EXPECT_EQ(std::bit_cast<uint64_t>(f.error.cosine), std::bit_cast<uint64_t>(m.error.cosine)) << f.key;
      EXPECT_EQ(f.error.elements, m.error.elements) << f.key;
      if (pa == changed.string()) (f.error.max_abs > 0 ? unequal_rows : equal_rows) += 1;
    }
  }
  EXPECT_GT(equal_rows, 0u);
  EXPECT_GT(unequal_rows, 0u) << "the changed byte changed no value";
}

}   // namespace
}   // namespace akview
