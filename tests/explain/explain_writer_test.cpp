// `explain` on files and views built here: every ggml block type in a GGUF written by the project's
// writer (random block bytes, rows of three blocks, a 3-D tensor), every composite mode and bit width
// over odd shapes, the last group of each row; values equal decode_rows bit for bit. Bad elements
// fail naming the range.
#include <gtest/gtest.h>

#include <random>

#include "core/decode/decode.hpp"
#include "core/formats/format.hpp"
#include "core/tensor_view.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/explain/explain_checks.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "tests/writers/quantize.hpp"

namespace akview::test {
namespace {

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// Explains columns `cols` of every row and checks them against decode_rows.
void check_view_elements(const TensorView& v, const std::vector<int64_t>& cols, const std::string& what,
                         const Model* m = nullptr, const Tensor* t = nullptr, const SpanOrigins& origins = {}) {
  std::vector<float> decoded(static_cast<size_t>(v.n_rows * v.n_cols));
  ASSERT_TRUE(decode_rows(v, 0, v.n_rows, decoded.data()).ok()) << what;
  for (int64_t r = 0; r < v.n_rows; ++r)
    for (int64_t c : cols) {
      auto e = explain_element(v, r, c, origins);
      ASSERT_TRUE(e.ok()) << what << ": " << e.error().to_string();
      const std::string at = what + " [" + std::to_string(r) + "," + std::to_string(c) + "]";
      check_explanation(*e, v.type, decoded.data() + r * v.n_cols + e->group_col, at);
      if (m != nullptr) check_bytes_in_file(*m, *t, *e, at);
      if (::testing::Test::HasFailure()) return;
    }
}

TEST(ExplainWriter, EveryGgmlBlockTypeLastGroupOfEachRow) {
  testing::TempDir dir;
  int types = 0;
  for (const TypeInfo& info : all_types()) {
    if (info.kind != TypeKind::block_quant || info.ggml_id < 0 || !can_decode(info.id)) continue;
    testing::GgufWriter w;
    w.set("general.architecture", testing::gguf_string("llama"));
    testing::GgufTensorSpec rows2d("blk.0.ffn_up.weight", static_cast<uint32_t>(info.ggml_id),
                                   {3 * info.block_elems, 5});
    rows2d.data = random_bytes(15 * info.block_bytes, info.ggml_id * 17u + 1);
    testing::GgufTensorSpec rows3d("blk.0.attn_q.weight", static_cast<uint32_t>(info.ggml_id),
                                   {info.block_elems, 3, 2});
    rows3d.data = random_bytes(6 * info.block_bytes, info.ggml_id * 17u + 2);
    w.add_tensor(rows2d).add_tensor(rows3d);
    const std::string path = dir.file(std::string(info.name) + ".gguf");
    ASSERT_TRUE(w.write(path));
    auto m = open_model(path);
    ASSERT_TRUE(m.ok()) << info.name << ": " << m.error().to_string();
    for (const char* name : {"blk.0.ffn_up.weight", "blk.0.attn_q.weight"}) {
      const Tensor* t = m->find(name);
      ASSERT_NE(t, nullptr);
      auto v = make_tensor_view(*m, *t);
      ASSERT_TRUE(v.ok()) << v.error().to_string();
      SpanOrigins origins;
      origins.data = t->offset;
      const int64_t n = v->n_cols;
      check_view_elements(*v, {0, n / 2 + 1, n - 1}, std::string(info.name) + " " + name, &*m, t, origins);
      if (HasFailure()) return;
    }
    ++types;
  }
  EXPECT_GE(types, 27);
}

struct CompositeCase {
  TypeId type;
  uint8_t bits;
  uint32_t group;
  TypeId param_type;
  bool global_scale;
};

TEST(ExplainWriter, EveryCompositeModeAndWidthOverOddShapes) {
  const std::vector<CompositeCase> cases = {
      {TypeId::mlx_affine, 2, 32, TypeId::f16, false},   {TypeId::mlx_affine, 3, 32, TypeId::bf16, false},
      {TypeId::mlx_affine, 4, 64, TypeId::f16, false},   {TypeId::mlx_affine, 5, 32, TypeId::f32, false},
      {TypeId::mlx_affine, 6, 128, TypeId::bf16, false}, {TypeId::mlx_affine, 8, 32, TypeId::f16, false},
      {TypeId::mlx_mxfp4, 4, 32, TypeId::u8, false},     {TypeId::mlx_nvfp4, 4, 16, TypeId::u8, true},
      {TypeId::mlx_mxfp8, 8, 32, TypeId::u8, false},     {TypeId::ollama_int4, 4, 32, TypeId::bf16, false},
      {TypeId::ollama_int8, 8, 64, TypeId::bf16, false}, {TypeId::ollama_nvfp4, 4, 16, TypeId::u8, true},
      {TypeId::ollama_mxfp4, 4, 32, TypeId::u8, false},  {TypeId::ollama_mxfp8, 8, 32, TypeId::u8, false},
  };
  std::mt19937 rng(7);
  for (const auto& c : cases) {
    const int64_t rows = 3, cols = 3 * c.group;   // three groups per row
    const size_t groups = static_cast<size_t>(rows * cols / c.group);
    std::vector<uint8_t> weight = random_bytes(static_cast<size_t>(rows * cols * c.bits / 8), c.bits * 100u + c.group);
    std::vector<uint8_t> scales, biases, global;
    std::uniform_real_distribution<float> uni(-0.05f, 0.05f);
    auto put_param = [&](std::vector<uint8_t>& out, float x) {
      if (c.param_type == TypeId::f32) {
        uint32_t b;
        std::memcpy(&b, &x, 4);
        for (int k = 0; k < 4; ++k) out.push_back(static_cast<uint8_t>(b >> (8 * k)));
        return;
      }
      const uint16_t h = c.param_type == TypeId::bf16 ? testing::f32_to_bf16(x) : testing::f32_to_f16(x);
      out.push_back(static_cast<uint8_t>(h));
      out.push_back(static_cast<uint8_t>(h >> 8));
    };
    for (size_t g = 0; g < groups; ++g) {
      if (c.param_type == TypeId::u8) {
        scales.push_back(
            static_cast<uint8_t>(c.group == 16 ? 0x20 + rng() % 0x40 : 110 + rng() % 30));   // E4M3 / E8M0 scales
      } else {
        put_param(scales, uni(rng));
        put_param(biases, uni(rng));
      }
    }
    if (c.global_scale) {
      for (int64_t r = 0; r < rows; ++r) {
        const float x = 0.5f + static_cast<float>(r);
        uint32_t b;
        std::memcpy(&b, &x, 4);
        for (int k = 0; k < 4; ++k) global.push_back(static_cast<uint8_t>(b >> (8 * k)));
      }
    }
    TensorView v;
    v.type = c.type;
    v.n_rows = rows;
    v.n_cols = cols;
    v.data = weight;
    v.row_bytes = static_cast<uint64_t>(cols * c.bits / 8);
    v.bits = c.bits;
    v.group_size = c.group;
    v.scales_type = c.param_type;
    v.biases_type = c.param_type;
    v.scales = scales;
    v.biases = biases;
    v.global_scale = global;
    const std::string what =
        std::string(type_info(c.type).name) + " " + std::to_string(c.bits) + "-bit g" + std::to_string(c.group);
    check_view_elements(v, {0, c.group + 3, cols - 1}, what);
    if (HasFailure()) return;
    auto e = explain_element(v, 1, cols - 1);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->group_col, cols - c.group) << what << ": the last group of the row";
    EXPECT_EQ(e->bytes.size(), c.group * c.bits / 8u) << what;
    EXPECT_EQ(e->bytes_offset, static_cast<uint64_t>(cols * c.bits / 8 + 2 * c.group * c.bits / 8)) << what;
  }
}

TEST(ExplainWriter, ElementsOutsideTheTensorNameTheRange) {
  std::vector<uint8_t> data = random_bytes(2 * 3 * 18, 3);
  TensorView v;
  v.type = TypeId::q4_0;
  v.n_rows = 2;
  v.n_cols = 96;
  v.data = data;
  v.row_bytes = 3 * 18;
  auto bad_row = explain_element(v, 2, 0);
  ASSERT_FALSE(bad_row.ok());
  EXPECT_EQ(bad_row.error().code, ErrorCode::out_of_bounds);
  EXPECT_NE(bad_row.error().message.find("row 2 is outside the tensor's rows [0, 2)"), std::string::npos)
      << bad_row.error().message;
  auto bad_col = explain_element(v, 0, 96);
  ASSERT_FALSE(bad_col.ok());
  EXPECT_NE(bad_col.error().message.find("column 96 is outside the tensor's columns [0, 96)"), std::string::npos);
  EXPECT_FALSE(explain_element(v, -1, 0).ok());
  EXPECT_FALSE(explain_element(v, 0, -5).ok());
  // A view whose data is short is refused, not read past its end.
  v.data = std::span<const uint8_t>(data).first(data.size() - 1);
  EXPECT_FALSE(explain_element(v, 1, 95).ok());
}

TEST(ExplainWriter, EveryTypeHasAFamilyParagraph) {
  for (const TypeInfo& info : all_types()) {
    const QuantFamily& f = quant_family(info.id);
    EXPECT_FALSE(f.paragraph.empty()) << info.name;
    EXPECT_FALSE(f.title.empty()) << info.name;
    if (info.kind == TypeKind::block_quant || info.kind == TypeKind::composite) {
      EXPECT_NE(f.key, "float") << info.name << " is quantized but has the plain-float paragraph";
    }
  }
}

}   // namespace
}   // namespace akview::test
