// The `fit` estimate's arithmetic, architecture by architecture, on the ground-truth models
// (tests/writers/fit_models.hpp): full caches with GQA, sliding-window layers, MLA's single
// compressed row, MoE (experts change the weights, not the cache); a key missing; hostile keys.
// The expected bytes are worked out by hand in each test from the model's shape.
#include <gtest/gtest.h>

#include "core/fit/fit_estimate.hpp"
#include "core/fit/layer_split.hpp"
#include "core/formats/format.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/fit_models.hpp"

namespace akview::fit {
namespace {

using akview::testing::build_fit_model;
using akview::testing::FitModelSpec;
using akview::testing::GgufWriter;

FitModelSpec spec_named(const std::string& name) {
  for (const auto& s : akview::testing::fit_model_specs())
    if (s.name == name) return s;
  ADD_FAILURE() << "no spec " << name;
  return {};
}

struct Opened {
  akview::testing::TempDir dir;
  Model model;
};

std::unique_ptr<Opened> open_written(const GgufWriter& w) {
  auto o = std::make_unique<Opened>();
  const std::string path = o->dir.file("m.gguf");
  EXPECT_TRUE(w.write(path, /*sparse=*/true));
  auto m = open_model(path);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().to_string());
  if (m) o->model = std::move(*m);
  return o;
}

FitEstimate estimate(const Model& model, uint64_t ctx, TypeId kv = TypeId::f16) {
  FitQuery q;
  q.context = ctx;
  q.kv_type = kv;
  auto e = estimate_fit(model, q);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().to_string());
  return e.ok() ? *e : FitEstimate{};
}

TEST(FitKv, FullCacheWithGqa) {
  auto o = open_written(build_fit_model(spec_named("llama-gqa")));
  // 4 layers x (K + V) x 4096 cells x 2 kv heads x 64 dims x 2 bytes
  FitEstimate e = estimate(o->model, 4096);
  ASSERT_TRUE(e.kv);
  EXPECT_EQ(e.kv->bytes, 4u * 2 * 4096 * 2 * 64 * 2);
  EXPECT_EQ(e.k_bytes, e.v_bytes);
  ASSERT_EQ(e.kv_layers.size(), 4u);
  EXPECT_EQ(e.kv_layers[0].kv_heads, 2u);
  EXPECT_FALSE(e.kv_layers[3].sliding);
  // q8_0 rows: 128 values = 4 blocks of 34 bytes
  FitEstimate q8 = estimate(o->model, 4096, TypeId::q8_0);
  EXPECT_EQ(q8.kv->bytes, 4u * 2 * 4096 * 4 * 34);
  // a context that is not a multiple of 256 is padded up: 5000 -> 5120 cells
  FitEstimate odd = estimate(o->model, 5000);
  EXPECT_EQ(odd.cells, 5120u);
  EXPECT_EQ(odd.kv->bytes, 4u * 2 * 5120 * 2 * 64 * 2);
  // the output buffer holds one row of f32 logits
  ASSERT_TRUE(e.output);
  EXPECT_EQ(e.output->bytes, 320u * 4);
}

TEST(FitKv, SlidingWindowLayersHoldTheWindowAndOneUbatch) {
  auto o = open_written(build_fit_model(spec_named("gemma2")));   // window 1024, period 2
  FitEstimate e = estimate(o->model, 8192);
  ASSERT_EQ(e.kv_layers.size(), 4u);
  EXPECT_TRUE(e.kv_layers[0].sliding);
  EXPECT_FALSE(e.kv_layers[1].sliding);
  EXPECT_EQ(e.kv_layers[0].cells, 1536u);   // 1024 + 512, already a multiple of 256
  EXPECT_EQ(e.kv_layers[1].cells, 8192u);
  const uint64_t row = 2 * 64 * 2;
  EXPECT_EQ(e.kv->bytes, 2 * (2 * 1536 * row + 2 * 8192 * row));
  EXPECT_EQ(e.window, 1024u);
  // below the window the sliding layers hold the whole (smaller) context
  FitEstimate small = estimate(o->model, 1024);
  EXPECT_EQ(small.kv_layers[0].cells, 1024u);

  auto g3 = open_written(build_fit_model(spec_named("gemma3")));   // window 512, period 6, 8 layers
  FitEstimate e3 = estimate(g3->model, 32768);
  int full = 0;
  for (const auto& l : e3.kv_layers) full += !l.sliding;
  EXPECT_EQ(full, 1);   // layer 5 of 0..7
  EXPECT_FALSE(e3.kv_layers[5].sliding);
  EXPECT_EQ(e3.kv_layers[0].cells, 1024u);   // 512 + 512
}

TEST(FitKv, Phi3ReadsItsWindowButCachesEveryLayerInFull) {
  auto o = open_written(build_fit_model(spec_named("phi3")));
  FitEstimate e = estimate(o->model, 4096);
  for (const auto& l : e.kv_layers) EXPECT_FALSE(l.sliding);
  EXPECT_EQ(e.kv->bytes, 4u * 2 * 4096 * 4 * 64 * 2);
}

TEST(FitKv, MlaCachesOneCompressedRowAndNoV) {
  auto o = open_written(build_fit_model(spec_named("deepseek2-mla")));
  FitEstimate e = estimate(o->model, 8192);
  // kv_lora 128 + rope 32 = 160 values per token and layer, one "head", no V
  EXPECT_EQ(e.v_bytes, 0u);
  EXPECT_EQ(e.kv->bytes, 4u * 8192 * 160 * 2);
  EXPECT_EQ(e.kv_layers[0].v_head_dim, 0u);
  EXPECT_EQ(e.kv_layers[0].k_head_dim, 160u);
}

TEST(FitKv, ExpertsChangeTheWeightsNotTheCache) {
  auto dense = open_written(build_fit_model(spec_named("llama-gqa")));
  auto moe = open_written(build_fit_model(spec_named("mixtral-moe")));
  FitEstimate d = estimate(dense->model, 4096), m = estimate(moe->model, 4096);
  EXPECT_EQ(d.kv->bytes, m.kv->bytes);
  // 8 experts x 3 matrices of 256 x 512 f16, plus the f32 router, per layer, replace the 3 dense matrices
  const uint64_t per_layer = 8 * 3 * 256 * 512 * 2 + 256 * 8 * 4 - 3 * 256 * 512 * 2;
  EXPECT_EQ(m.weights.bytes - d.weights.bytes, 4 * per_layer);
  // qwen3moe: expert ffn 128 x 2 used experts widens the compute estimate's ffn term, not the cache
  auto q3 = open_written(build_fit_model(spec_named("qwen3moe")));
  FitEstimate e = estimate(q3->model, 4096);
  EXPECT_EQ(e.kv->bytes, 4u * 2 * 4096 * 2 * 128 * 2);
}

TEST(FitKv, QuantizedCacheNeedsWholeBlocks) {
  FitModelSpec s = spec_named("llama-gqa");
  s.head_dim = 48, s.n_head = 4, s.n_embd = 192, s.n_head_kv = 1;   // K row: 1 x 48 values, not a multiple of 32
  auto o = open_written(build_fit_model(s));
  FitQuery q;
  q.context = 4096;
  q.kv_type = TypeId::q4_0;
  auto e = estimate_fit(o->model, q);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, ErrorCode::usage);
  EXPECT_NE(e.error().message.find("48 values"), std::string::npos) << e.error().message;
}

TEST(FitMissing, AbsentKeyLeavesTheFigureOutAndNamesTheKey) {
  GgufWriter w = build_fit_model(spec_named("llama-gqa"));
  w.remove("llama.attention.head_count");
  auto o = open_written(w);
  FitEstimate e = estimate(o->model, 4096);
  EXPECT_FALSE(e.kv);
  EXPECT_FALSE(e.compute);
  EXPECT_GT(e.weights.bytes, 0u);
  ASSERT_FALSE(e.missing.empty());
  EXPECT_NE(e.missing.front().find("llama.attention.head_count"), std::string::npos) << e.missing.front();
  // no context key and no --ctx: the KV figure needs one of them
  GgufWriter w2 = build_fit_model(spec_named("llama-gqa"));
  w2.remove("llama.context_length");
  auto o2 = open_written(w2);
  FitEstimate e2 = estimate(o2->model, 0);
  EXPECT_FALSE(e2.kv);
  bool named = false;
  for (const auto& m : e2.missing) named = named || m.find("llama.context_length") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(FitMissing, UnknownArchitectureStillGivesTheWeights) {
  GgufWriter w = build_fit_model(spec_named("llama-gqa"));
  w.set("general.architecture", akview::testing::gguf_string("mamba2"));
  auto o = open_written(w);
  FitEstimate e = estimate(o->model, 4096);
  EXPECT_FALSE(e.arch_known);
  EXPECT_FALSE(e.kv);
  EXPECT_EQ(e.weights.bytes, o->model.total_bytes());
  ASSERT_FALSE(e.missing.empty());
  EXPECT_NE(e.missing.front().find("'mamba2' is not modelled"), std::string::npos) << e.missing.front();
}

TEST(FitHostile, HugeContextIsAnErrorNotAnOverflow) {
  GgufWriter w = build_fit_model(spec_named("llama-gqa"));
  w.set("llama.context_length", akview::testing::gguf_u64(uint64_t{1} << 40));
  auto o = open_written(w);
  auto e = estimate_fit(o->model, FitQuery{});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("llama.context_length"), std::string::npos) << e.error().message;
  EXPECT_NE(e.error().offset, kNoOffset);
  // the same context asked with --ctx
  auto good = open_written(build_fit_model(spec_named("llama-gqa")));
  FitQuery q;
  q.context = uint64_t{1} << 40;
  auto e2 = estimate_fit(good->model, q);
  ASSERT_FALSE(e2.ok());
  EXPECT_EQ(e2.error().code, ErrorCode::overflow);
  q.context = 0xffffffffu;   // pads past 32 bits too
  EXPECT_FALSE(estimate_fit(good->model, q).ok());
}

TEST(FitHostile, ZeroOrAbsurdHeadsAreErrors) {
  GgufWriter w = build_fit_model(spec_named("llama-gqa"));
  w.set("llama.attention.head_count", akview::testing::gguf_u32(0));
  auto o = open_written(w);
  auto e = estimate_fit(o->model, FitQuery{});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("llama.attention.head_count"), std::string::npos) << e.error().message;

  GgufWriter w2 = build_fit_model(spec_named("llama-gqa"));
  w2.set("llama.attention.head_count_kv", akview::testing::gguf_u32(0xffffffffu));
  auto o2 = open_written(w2);
  auto e2 = estimate_fit(o2->model, FitQuery{});
  ASSERT_FALSE(e2.ok());
  EXPECT_NE(e2.error().message.find("head_count_kv"), std::string::npos) << e2.error().message;

  GgufWriter w3 = build_fit_model(spec_named("llama-gqa"));
  w3.set("llama.block_count", akview::testing::gguf_u32(100000));
  auto o3 = open_written(w3);
  EXPECT_FALSE(estimate_fit(o3->model, FitQuery{}).ok());
}

TEST(FitSplit, LayersGoToTheGpusInProportionOutputLast) {
  // 4 layers, -ngl 5 (all + output) over 2 equal GPUs: layers 0-1 -> GPU0, 2-3 and the output -> GPU1
  const double split[] = {1.0, 1.0};
  auto d = place_layers(4, 5, split);
  EXPECT_EQ(d, (std::vector<int>{0, 0, 0, 1, 1}));
  // -ngl 2: the last layer and the output on the GPUs, the rest on the CPU
  auto d2 = place_layers(4, 2, split);
  EXPECT_EQ(d2, (std::vector<int>{-1, -1, -1, 0, 1}));
  EXPECT_EQ(place_layers(4, 0, split), (std::vector<int>(5, -1)));
}

TEST(FitSplit, GpuMemoryPicksTheLargestNglThatFits) {
  auto o = open_written(build_fit_model(spec_named("llama3-8b-shape")));
  FitQuery q;
  q.context = 8192;
  q.gpu_gib = {80};
  auto all = estimate_fit(o->model, q);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->gpu_layers, 33u);   // 32 layers + output
  EXPECT_EQ(all->devices[0].layers, 0u);
  q.gpu_gib = {4};
  auto some = estimate_fit(o->model, q);
  ASSERT_TRUE(some.ok());
  EXPECT_LT(some->gpu_layers, 33u);
  EXPECT_GT(some->gpu_layers, 0u);
  EXPECT_LE(some->devices[1].total(), some->devices[1].capacity);
  EXPECT_EQ(some->devices[0].layers + some->devices[1].layers, 32u);
  // the token embedding stays on the CPU
  EXPECT_TRUE(some->devices[0].input_layer);
}

TEST(FitTable, ContextsUpToTheTrainedMaximum) {
  EXPECT_EQ(table_contexts(131072), (std::vector<uint64_t>{4096, 8192, 32768, 131072}));
  EXPECT_EQ(table_contexts(8192), (std::vector<uint64_t>{4096, 8192}));
  EXPECT_EQ(table_contexts(40960), (std::vector<uint64_t>{4096, 8192, 32768, 40960}));
}

}   // namespace
}   // namespace akview::fit
