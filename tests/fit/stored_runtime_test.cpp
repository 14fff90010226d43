// `fit` for a SafeTensors model folder: weights at the stored dtypes, a KV cache of every layer's
// K and V in the config's torch_dtype, sliding-window layers (config layer_types) holding the
// window, the runtime named, and no compute or output figure claimed.
#include <gtest/gtest.h>

#include "core/fit/fit_estimate.hpp"
#include "core/formats/format.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/st_writer.hpp"

namespace akview::fit {
namespace {

using akview::testing::StTensor;

TEST(FitStored, SafetensorsFolderUsesTheConfigAndTheStoredDtypes) {
  akview::testing::TempDir dir;
  std::vector<StTensor> tensors = {
      StTensor("model.embed_tokens.weight", "BF16", {320, 256}, {}, 320 * 256 * 2),
      StTensor("lm_head.weight", "F32", {320, 256}, {}, 320 * 256 * 4),
      StTensor("model.norm.weight", "BF16", {256}, {}, 256 * 2),
  };
  ASSERT_TRUE(akview::testing::write_safetensors(dir.file("model.safetensors"), tensors));
  ASSERT_TRUE(akview::testing::write_text(dir.file("config.json"), R"({
    "model_type": "gemma3_text", "torch_dtype": "bfloat16", "hidden_size": 256, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "max_position_embeddings": 8192,
    "sliding_window": 512,
    "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"]})"));
  auto model = open_model(dir.path());
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  FitQuery q;
  q.context = 4096;
  auto e = estimate_fit(*model, q);
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_NE(e->runtime.find("stored tensors as they are"), std::string::npos) << e->runtime;
  EXPECT_EQ(e->weights.bytes, uint64_t{320 * 256 * 2 + 320 * 256 * 4 + 256 * 2});
  EXPECT_EQ(e->kv_type, TypeId::bf16);
  ASSERT_TRUE(e->kv);
  // 3 sliding layers hold 512 tokens, the full one 4096; K and V each 2 heads x 64 x 2 bytes per token
  const uint64_t row = 2 * 64 * 2;
  EXPECT_EQ(e->kv->bytes, 2 * row * (3 * 512 + 4096));
  EXPECT_NE(e->kv->source.find("config.json: torch_dtype"), std::string::npos) << e->kv->source;
  EXPECT_FALSE(e->compute);
  EXPECT_FALSE(e->output);
  EXPECT_EQ(e->total, e->weights.bytes + e->kv->bytes);
  EXPECT_EQ(e->output_layer.bytes, uint64_t{320 * 256 * 4});
}

}   // namespace
}   // namespace akview::fit
