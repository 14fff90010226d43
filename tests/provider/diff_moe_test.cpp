// MoE diff: a GGUF whose experts are stacked in one [E, rows, cols] tensor against an HF checkpoint
// with a tensor per expert pairs expert by expert (the stacked tensor's slice E against expert E),
// in both directions; a change to one expert shows on that expert's row alone, a missing expert is
// reported missing, and the batch diff names the slice "name[E]". `run --ref` (and Compute's "vs ref")
// pairs the same way: an expert's output against its slice of the stacked tensor, a stacked tensor's
// against every expert's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/diff.hpp"
#include "core/formats/format.hpp"
#include "tests/cli/run_process.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "tests/writers/st_writer.hpp"
#include "ui/batch/commands.hpp"

namespace akview {
namespace {

constexpr int64_t kExperts = 3, kRows = 4, kCols = 8;
constexpr uint32_t kGgmlF32 = 0;

float value(int64_t e, int64_t r, int64_t c) { return 0.01f * static_cast<float>(e * 100 + r * 10 + c) - 0.7f; }

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// Writes blk.0.ffn_up_exps.weight [E, rows, cols] to `gguf`, and model.layers.0.mlp.experts.E.up_proj.weight
// [rows, cols] for each expert but `skip` to `st` (expert `changed` with one value moved by `delta`).
void write_pair(const std::string& gguf, const std::string& st, int64_t changed, float delta, int64_t skip) {
  std::vector<float> stacked;
  for (int64_t e = 0; e < kExperts; ++e)
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t c = 0; c < kCols; ++c) stacked.push_back(value(e, r, c));
  testing::GgufWriter w;
  w.set("general.architecture", testing::gguf_string("llama"));
  testing::GgufTensorSpec spec("blk.0.ffn_up_exps.weight", kGgmlF32, {kCols, kRows, kExperts});
  spec.data = f32_bytes(stacked);
  w.add_tensor(spec);
  ASSERT_TRUE(w.write(gguf));
  std::vector<testing::StTensor> tensors;
  for (int64_t e = 0; e < kExperts; ++e) {
    if (e == skip) continue;
    std::vector<float> v(stacked.begin() + e * kRows * kCols, stacked.begin() + (e + 1) * kRows * kCols);
    if (e == changed) v[5] += delta;
    tensors.emplace_back("model.layers.0.mlp.experts." + std::to_string(e) + ".up_proj.weight", "F32",
                         std::vector<int64_t>{kRows, kCols}, f32_bytes(v));
  }
  ASSERT_TRUE(testing::write_safetensors(st, tensors));
}

TEST(DiffMoe, StackedExpertsPairWithPerExpertTensorsBothWays) {
  testing::TempDir dir;
  const std::string gguf = dir.file("moe.gguf"), st = dir.file("moe.safetensors");
  write_pair(gguf, st, /*changed=*/1, /*delta=*/0.5f, /*skip=*/-1);
  auto g = open_model(gguf);
  ASSERT_TRUE(g.ok()) << g.error().to_string();
  auto h = open_model(st);
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  DiffOptions options;
  options.values = true;
  for (bool stacked_first : {true, false}) {
    SCOPED_TRACE(stacked_first ? "gguf vs hf" : "hf vs gguf");
    const Model& a = stacked_first ? *g : *h;
    const Model& b = stacked_first ? *h : *g;
    DiffReport r = diff_models(a, b, options);
    EXPECT_EQ(r.only_a, 0u);
    EXPECT_EQ(r.only_b, 0u);
    EXPECT_EQ(r.shape_changes, 0u);
    ASSERT_EQ(r.rows.size(), static_cast<size_t>(kExperts));
    for (const TensorDiff& d : r.rows) {
      ASSERT_NE(d.a, kNone);
      ASSERT_NE(d.b, kNone);
      const int64_t e = stacked_first ? d.a_expert : d.b_expert;
      EXPECT_EQ(stacked_first ? d.b_expert : d.a_expert, -1);
      ASSERT_GE(e, 0);
      EXPECT_EQ(d.key, "layers.0.ffn.experts." + std::to_string(e) + ".up.weight");
      ASSERT_TRUE(d.has_values) << d.value_problem;
      EXPECT_EQ(d.error.elements, static_cast<uint64_t>(kRows * kCols));
      if (e == 1) {
        EXPECT_FLOAT_EQ(static_cast<float>(d.error.max_abs), 0.5f);
      } else {
        EXPECT_EQ(d.error.max_abs, 0.0) << "expert " << e;
        EXPECT_EQ(d.error.cosine, 1.0);
      }
    }
  }
}

TEST(DiffMoe, AMissingExpertIsReportedMissingAndTheBatchDiffNamesTheSlice) {
  testing::TempDir dir;
  const std::string gguf = dir.file("moe.gguf"), st = dir.file("moe.safetensors");
  write_pair(gguf, st, /*changed=*/-1, 0, /*skip=*/2);
  auto g = open_model(gguf);
  auto h = open_model(st);
  ASSERT_TRUE(g.ok() && h.ok());
  DiffReport r = diff_models(*g, *h);
  EXPECT_EQ(r.only_a, 1u);
  EXPECT_EQ(r.only_b, 0u);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[2].key, "layers.0.ffn.experts.2.up.weight");
  EXPECT_EQ(r.rows[2].b, kNone);

  auto out = testing::run_akview({"diff", gguf, st, "--json"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("\"blk.0.ffn_up_exps.weight[1]\""), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("\"model.layers.0.mlp.experts.1.up_proj.weight\""), std::string::npos);
}

// y of one run against the reference model's: expert 1's value at (row 0, col 5) is off by 0.5, so
// y differs by 0.5·x[5] on that expert's row 0 and nowhere else.
TEST(DiffMoe, RunRefComparesAnExpertWithItsSliceAndAStackedTensorWithEveryExpert) {
  testing::TempDir dir;
  const std::string gguf = dir.file("moe.gguf"), st = dir.file("moe.safetensors");
  write_pair(gguf, st, /*changed=*/1, /*delta=*/0.5f, /*skip=*/-1);
  auto g = open_model(gguf);
  auto h = open_model(st);
  ASSERT_TRUE(g.ok() && h.ok());
  RunQuery query;
  query.options.backend = "reference";
  query.options.repeat = 1;
  // Each expert of the HF side against its slice of the GGUF's stacked tensor.
  auto per_expert = make_run_report(*h, &*g, query, {});
  ASSERT_TRUE(per_expert.ok()) << per_expert.error().to_string();
  EXPECT_TRUE(per_expert->ref_missing.empty());
  EXPECT_TRUE(per_expert->failures.empty()) << per_expert->failures.front().error.to_string();
  ASSERT_EQ(per_expert->runs.size(), static_cast<size_t>(kExperts));
  for (const compute::TensorRun& run : per_expert->runs) {
    SCOPED_TRACE(run.name);
    ASSERT_TRUE(run.vs_second.has_value());
    EXPECT_EQ(run.vs_second->n, kRows);
    const bool changed = run.name.find(".experts.1.") != std::string::npos;
    EXPECT_NEAR(run.vs_second->max_abs, changed ? 0.5 * std::fabs(run.x[5]) : 0.0, 1e-6);
  }
  // The GGUF's stacked tensor against the three experts laid end to end.
  auto stacked = make_run_report(*g, &*h, query, {});
  ASSERT_TRUE(stacked.ok()) << stacked.error().to_string();
  EXPECT_TRUE(stacked->ref_missing.empty());
  ASSERT_EQ(stacked->runs.size(), 1u);
  const compute::TensorRun& run = stacked->runs[0];
  ASSERT_TRUE(run.vs_second.has_value());
  EXPECT_EQ(run.vs_second->n, kExperts * kRows);
  EXPECT_NEAR(run.vs_second->max_abs, 0.5 * std::fabs(run.x[5]), 1e-6);
  EXPECT_NEAR(run.vs_second->rms, 0.5 * std::fabs(run.x[5]) / std::sqrt(static_cast<double>(kExperts * kRows)), 1e-6);
  // A missing expert leaves the stacked tensor without a counterpart (not a wrong one).
  const std::string st2 = dir.file("moe2.safetensors");
  write_pair(dir.file("unused.gguf"), st2, -1, 0, /*skip=*/2);
  auto h2 = open_model(st2);
  ASSERT_TRUE(h2.ok());
  auto partial = make_run_report(*g, &*h2, query, {});
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->ref_missing, std::vector<std::string>{"blk.0.ffn_up_exps.weight"});
}

TEST(DiffMoe, ExpertKeysSplitAndJoin) {
  auto k = split_expert_key("layers.3.ffn.experts.17.down.weight");
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->stacked, "layers.3.ffn.experts.down.weight");
  EXPECT_EQ(k->expert, 17);
  EXPECT_EQ(expert_key(k->stacked, 17), "layers.3.ffn.experts.17.down.weight");
  EXPECT_FALSE(split_expert_key("layers.3.ffn.experts.down.weight").has_value());
  EXPECT_FALSE(split_expert_key("layers.3.ffn.shared_expert.up.weight").has_value());
  EXPECT_EQ(expert_key("layers.3.ffn.experts.2.down.weight", 1), "");
  EXPECT_EQ(expert_key("layers.3.attention.q.weight", 1), "");
}

}   // namespace
}   // namespace akview
