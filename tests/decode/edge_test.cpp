// Hand-built edge blocks per decoder family (zero, constant, all-negative, lone outlier, F16
// subnormal scales, NaN/Inf scales: the result follows the formula), minifloat values, bad views,
// random bytes (no crash under ASan/UBSan), and table completeness.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/decode/decode.hpp"
#include "core/types.hpp"

namespace akview {
namespace {

constexpr uint16_t kHalfOne = 0x3C00, kHalfHalf = 0x3800, kHalfNaN = 0x7E00, kHalfInf = 0x7C00, kHalfTiny = 0x0001;

void put16(std::vector<uint8_t>& b, size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v & 0xFF);
  b[at + 1] = static_cast<uint8_t>(v >> 8);
}

TensorView block_view(TypeId type, const std::vector<uint8_t>& bytes, int64_t rows = 1) {
  TensorView v;
  v.type = type;
  const auto& info = type_info(type);
  v.n_rows = rows;
  v.row_bytes = bytes.size() / static_cast<size_t>(rows);
  v.n_cols = static_cast<int64_t>(v.row_bytes / info.block_bytes * info.block_elems);
  v.data = bytes;
  return v;
}

std::vector<float> decode_all(const TensorView& v) {
  std::vector<float> out(static_cast<size_t>(v.n_rows * v.n_cols), -999.0f);
  auto st = decode_rows(v, 0, v.n_rows, out.data());
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().to_string());
  return out;
}

TEST(DecodeTable, EveryTypeHasARowAndAllDecode) {
  for (const auto& t : all_types()) EXPECT_TRUE(can_decode(t.id)) << t.name;
  EXPECT_FALSE(decode_caveat(TypeId::f4).empty());
  EXPECT_FALSE(decode_caveat(TypeId::f6_e2m3).empty());
  EXPECT_FALSE(decode_caveat(TypeId::c64).empty());
  EXPECT_TRUE(decode_caveat(TypeId::q4_0).empty());
}

TEST(DecodeEdge, LegacyZeroConstantNegativeOutlier) {
  // Q4_0 zero block: d = 0 -> every value is (q-8)*0 = +-0
  std::vector<uint8_t> b(18, 0x88);
  put16(b, 0, 0);
  for (float x : decode_all(block_view(TypeId::q4_0, b))) EXPECT_EQ(x, 0.0f);
  // Q4_1 constant block: d = 0, m = 0.5
  b.assign(20, 0x37);
  put16(b, 0, 0);
  put16(b, 2, kHalfHalf);
  for (float x : decode_all(block_view(TypeId::q4_1, b))) EXPECT_EQ(x, 0.5f);
  // Q8_0 all negative (-5 * 0.5) with one outlier (127 * 0.5) at element 7
  b.assign(34, static_cast<uint8_t>(-5));
  put16(b, 0, kHalfHalf);
  b[2 + 7] = 127;
  auto y = decode_all(block_view(TypeId::q8_0, b));
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], j == 7 ? 63.5f : -2.5f);
  // Q5_0: fifth bits from qh: element 0 high bit set, element 16 set -> codes 16+15, 16+0
  b.assign(22, 0);
  put16(b, 0, kHalfOne);
  b[2] = 0x01;   // qh bit 0 -> element 0
  b[4] = 0x01;   // qh bit 16 -> element 16
  b[6] = 0x0F;   // element 0 low nibble 15, element 16 high nibble 0
  y = decode_all(block_view(TypeId::q5_0, b));
  EXPECT_EQ(y[0], 15.0f);   // (16|15) - 16
  EXPECT_EQ(y[16], 0.0f);   // (16|0) - 16
  EXPECT_EQ(y[1], -16.0f);
}

TEST(DecodeEdge, SubnormalAndNonFiniteScales) {
  std::vector<uint8_t> b(34, 3);
  put16(b, 0, kHalfTiny);   // d = 2^-24 (F16 subnormal)
  for (float x : decode_all(block_view(TypeId::q8_0, b))) EXPECT_EQ(x, 3.0f * 0x1p-24f);
  put16(b, 0, kHalfNaN);
  for (float x : decode_all(block_view(TypeId::q8_0, b))) EXPECT_TRUE(std::isnan(x));
  // Q4_0 with d = inf: code 8 gives 0*inf = NaN, others +-inf (the formula, not a special case)
  std::vector<uint8_t> q(18, 0x08 | 0x90);
  put16(q, 0, kHalfInf);
  auto y = decode_all(block_view(TypeId::q4_0, q));
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[16], INFINITY);
  // Q4_K with dmin = NaN poisons every value
  std::vector<uint8_t> k(144, 0x11);
  put16(k, 0, kHalfOne);
  put16(k, 2, kHalfNaN);
  for (float x : decode_all(block_view(TypeId::q4_k, k))) EXPECT_TRUE(std::isnan(x));
  // Q6_K zero block
  std::vector<uint8_t> z(210, 0);
  for (float x : decode_all(block_view(TypeId::q6_k, z))) EXPECT_EQ(x, 0.0f);
}

TEST(DecodeEdge, KQuantScalesByHand) {
  // Q2_K: all codes 3, every sub-block scale 2 and min 1, d = 1, dmin = 0.5 -> 1*2*3 - 0.5*1 = 5.5
  std::vector<uint8_t> b(84, 0);
  for (int i = 0; i < 16; ++i) b[i] = 0x12;
  for (int i = 16; i < 80; ++i) b[i] = 0xFF;
  put16(b, 80, kHalfOne);
  put16(b, 82, kHalfHalf);
  for (float x : decode_all(block_view(TypeId::q2_k, b))) EXPECT_EQ(x, 5.5f);
  // Q3_K: hmask all set (no -4), low bits 0, scales all 32+1 -> values 0; hmask clear -> -4 * d * 1
  std::vector<uint8_t> c(110, 0);
  for (int i = 96; i < 104; ++i) c[i] = 0x11;    // low 4 bits of scales 0..15 = 1
  for (int i = 104; i < 108; ++i) c[i] = 0xAA;   // high 2 bits = 2 -> 32 + 1 = 33
  put16(c, 108, kHalfOne);
  for (float x : decode_all(block_view(TypeId::q3_k, c))) EXPECT_EQ(x, -4.0f);
}

TEST(DecodeEdge, IqAndTernaryAndFp4) {
  std::vector<uint8_t> b(66, 0);   // IQ2_XXS, d = 0
  for (float x : decode_all(block_view(TypeId::iq2_xxs, b))) EXPECT_EQ(x, 0.0f);
  std::vector<uint8_t> nl(18, 0x00);   // IQ4_NL, d = 1, all nibbles 0 -> -127
  put16(nl, 0, kHalfOne);
  for (float x : decode_all(block_view(TypeId::iq4_nl, nl))) EXPECT_EQ(x, -127.0f);
  std::vector<uint8_t> t(66, 0x55);   // TQ2_0: codes 1 -> 0
  put16(t, 64, kHalfOne);
  for (float x : decode_all(block_view(TypeId::tq2_0, t))) EXPECT_EQ(x, 0.0f);
  std::vector<uint8_t> m(17, 0x77);   // MXFP4: e = 127 -> d = 0.5, kvalue 12 -> 6
  m[0] = 127;
  for (float x : decode_all(block_view(TypeId::mxfp4, m))) EXPECT_EQ(x, 6.0f);
  m[0] = 255;   // ggml's helper: d = 2^127 (OCP NaN not handled); 12 * 2^127 overflows to +inf, as the formula does
  for (float x : decode_all(block_view(TypeId::mxfp4, m))) EXPECT_EQ(x, 12.0f * 0x1p127f);
  std::vector<uint8_t> nv(36, 0x1F);   // NVFP4: nibbles 15 (-12) and 1 (1); scale 0x38 = 1.0 -> d/2 = 0.5
  for (int s = 0; s < 4; ++s) nv[s] = 0x38;
  auto y = decode_all(block_view(TypeId::nvfp4, nv));
  EXPECT_EQ(y[0], -6.0f);
  EXPECT_EQ(y[8], 0.5f);
  nv[0] = 0x7F;   // ggml UE4M3: 0x7F -> 0
  EXPECT_EQ(decode_all(block_view(TypeId::nvfp4, nv))[0], 0.0f);
}

TEST(DecodeEdge, Minifloats) {
  auto one = [](TypeId type, std::vector<uint8_t> bytes) { return decode_all(block_view(type, bytes)); };
  // from st/edge_valid.safetensors values_hex: F8_E4M3 00 38 b8 7e, F8_E5M2 00 3c bc 7b
  EXPECT_EQ(one(TypeId::f8_e4m3, {0x00, 0x38, 0xB8, 0x7E}), (std::vector<float>{0.0f, 1.0f, -1.0f, 448.0f}));
  EXPECT_EQ(one(TypeId::f8_e5m2, {0x00, 0x3C, 0xBC, 0x7B}), (std::vector<float>{0.0f, 1.0f, -1.0f, 57344.0f}));
  EXPECT_TRUE(std::isnan(one(TypeId::f8_e4m3, {0x7F})[0]));
  EXPECT_EQ(one(TypeId::f8_e5m2, {0x7C})[0], INFINITY);
  EXPECT_EQ(one(TypeId::f8_e8m0, {127, 0, 128})[0], 1.0f);
  EXPECT_EQ(one(TypeId::f8_e8m0, {0})[0], 0x1p-127f);
  EXPECT_TRUE(std::isnan(one(TypeId::f8_e8m0, {0xFF})[0]));
  EXPECT_EQ(one(TypeId::f8_e4m3fnuz, {0x40})[0], 1.0f);   // bias 8
  EXPECT_TRUE(std::isnan(one(TypeId::f8_e5m2fnuz, {0x80})[0]));
  // f16: 1, -2.5, 65504, largest subnormal (edge_valid values_hex 003c 00c1 ff7b ff03)
  auto h = one(TypeId::f16, {0x00, 0x3C, 0x00, 0xC1, 0xFF, 0x7B, 0xFF, 0x03});
  EXPECT_EQ(h, (std::vector<float>{1.0f, -2.5f, 65504.0f, 1023.0f * 0x1p-24f}));
  EXPECT_EQ(one(TypeId::bf16, {0x80, 0x3F})[0], 1.0f);
  // F4 (assumed low nibble first): 0x61 -> 0.5, 4.0 ; F6 E2M3: 0x08 = 1.0 ; E3M2: 0x0C = 1.0
  EXPECT_EQ(one(TypeId::f4, {0x61}), (std::vector<float>{0.5f, 4.0f}));
  EXPECT_EQ(one(TypeId::f6_e2m3, {0x08, 0x00, 0x00})[0], 1.0f);
  EXPECT_EQ(one(TypeId::f6_e3m2, {0x0C, 0x00, 0x00})[0], 1.0f);
  EXPECT_EQ(one(TypeId::f6_e2m3, {0x00, 0x00, 0xFC})[3], -7.5f);   // element 3 = bits 18..23 = 0x3F
  EXPECT_EQ(one(TypeId::i16, {0xB1, 0xB1})[0], -20047.0f);
  EXPECT_EQ(one(TypeId::boolean, {0, 1, 2}), (std::vector<float>{0.0f, 1.0f, 1.0f}));
  EXPECT_EQ(one(TypeId::c64, {0, 0, 0x80, 0x3F, 0, 0, 0, 0x40})[0], 1.0f);   // real part
}

// A composite view over caller-owned bytes.
struct Composite {
  std::vector<uint8_t> w, s, b, g;
  TensorView view(TypeId type, int64_t rows, int64_t cols, uint8_t bits, uint32_t gs, TypeId st = TypeId::f16) {
    TensorView v;
    v.type = type;
    v.n_rows = rows;
    v.n_cols = cols;
    v.bits = bits;
    v.group_size = gs;
    v.row_bytes = static_cast<uint64_t>(cols) * bits / 8;
    v.data = w;
    v.scales = s;
    v.biases = b;
    v.global_scale = g;
    v.scales_type = st;
    v.biases_type = st;
    return v;
  }
};

TEST(DecodeEdge, MlxAffineBitStream) {
  for (int bits : {2, 3, 4, 5, 6, 8}) {
    Composite c;
    const int cols = 64;
    c.w.assign(static_cast<size_t>(cols * bits / 8), 0);
    // element i holds code i % 2^bits, written LSB-first into the row bit stream
    for (int i = 0; i < cols; ++i) {
      const uint32_t code = static_cast<uint32_t>(i) % (1u << bits);
      for (int k = 0; k < bits; ++k)
        if (code >> k & 1)
          c.w[static_cast<size_t>((i * bits + k) / 8)] |= static_cast<uint8_t>(1u << ((i * bits + k) % 8));
    }
    c.s = {0x00, 0x3C, 0x00, 0xBC};   // scales 1, -1 (f16)
    c.b = {0x00, 0x38, 0x00, 0x00};   // biases 0.5, 0
    auto y = decode_all(c.view(TypeId::mlx_affine, 1, cols, static_cast<uint8_t>(bits), 32));
    for (int i = 0; i < cols; ++i) {
      const float code = static_cast<float>(static_cast<uint32_t>(i) % (1u << bits));
      EXPECT_EQ(y[static_cast<size_t>(i)], i < 32 ? code + 0.5f : -code) << "bits " << bits << " i " << i;
    }
  }
}

TEST(DecodeEdge, MlxAndOllamaFpModes) {
  Composite c;
  c.w = {0x21, 0x43, 0x65, 0x87, 0, 0, 0, 0};   // nvfp4: element 0 = 1 (0.5), element 1 = 2 (1.0) ...
  c.s = {0x38};                                 // E4M3 1.0
  auto y = decode_all(c.view(TypeId::mlx_nvfp4, 1, 16, 4, 16, TypeId::u8));
  EXPECT_EQ(y[0], 0.5f);
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_EQ(y[7], -0.0f);
  c.g = {0x00, 0x00, 0x00, 0x40};                                                           // global scale 2.0 (f32)
  EXPECT_EQ(decode_all(c.view(TypeId::ollama_nvfp4, 1, 16, 4, 16, TypeId::u8))[1], 2.0f);   // plain multiply
  EXPECT_EQ(decode_all(c.view(TypeId::mlx_nvfp4, 1, 16, 4, 16, TypeId::u8))[1], 2.0f / 2688.0f);   // MLX: / (448*6)
  Composite m;
  m.w.assign(32, 0x38);   // mxfp8: E4M3 1.0 everywhere
  m.s = {128};            // 2^1
  for (float x : decode_all(m.view(TypeId::mlx_mxfp8, 1, 32, 8, 32, TypeId::u8))) EXPECT_EQ(x, 2.0f);
  m.s = {0xFF};   // E8M0 255 -> +inf (MLX)
  for (float x : decode_all(m.view(TypeId::ollama_mxfp8, 1, 32, 8, 32, TypeId::u8))) EXPECT_EQ(x, INFINITY);
  Composite a;   // affine with a NaN scale: NaN propagates
  a.w.assign(16, 0x11);
  a.s = {0x00, 0x7E};
  a.b = {0x00, 0x00};
  for (float x : decode_all(a.view(TypeId::ollama_int4, 1, 32, 4, 32))) EXPECT_TRUE(std::isnan(x));
}

TEST(DecodeEdge, BadViewsAndRangesFailCleanly) {
  std::vector<uint8_t> b(36, 0);
  TensorView v = block_view(TypeId::q4_0, b, 2);
  std::vector<float> out(64);
  EXPECT_TRUE(decode_rows(v, 0, 2, out.data()).ok());
  EXPECT_FALSE(decode_rows(v, -1, 1, out.data()).ok());
  EXPECT_FALSE(decode_rows(v, 1, 3, out.data()).ok());
  EXPECT_FALSE(decode_rows(v, 2, 1, out.data()).ok());
  EXPECT_TRUE(decode_rows(v, 1, 1, nullptr).ok());   // empty range
  TensorView short_data = v;
  short_data.data = std::span<const uint8_t>(b).first(35);
  EXPECT_FALSE(decode_rows(short_data, 0, 1, out.data()).ok());
  TensorView bad_cols = v;
  bad_cols.n_cols = 48;
  EXPECT_FALSE(decode_rows(bad_cols, 0, 1, out.data()).ok());
  TensorView huge = v;
  huge.n_rows = int64_t{1} << 62;
  EXPECT_FALSE(decode_rows(huge, 0, 1, out.data()).ok());
  Composite c;
  c.w.assign(16, 0);
  c.s = {0, 0};
  auto cv = c.view(TypeId::mlx_affine, 1, 32, 4, 32);   // biases missing
  EXPECT_FALSE(decode_rows(cv, 0, 1, out.data()).ok());
  c.b = {0, 0};
  EXPECT_TRUE(decode_rows(c.view(TypeId::mlx_affine, 1, 32, 4, 32), 0, 1, out.data()).ok());
  EXPECT_FALSE(decode_rows(c.view(TypeId::mlx_affine, 1, 32, 7, 32), 0, 1, out.data()).ok());   // 7 bits
  EXPECT_FALSE(decode_rows(c.view(TypeId::mlx_affine, 1, 32, 4, 12), 0, 1, out.data()).ok());   // group 12
  EXPECT_FALSE(decode_rows(c.view(TypeId::mlx_mxfp4, 1, 32, 4, 32, TypeId::f16), 0, 1, out.data()).ok());
  c.g = {1, 2, 3};
  EXPECT_FALSE(decode_rows(c.view(TypeId::ollama_int4, 1, 32, 4, 32), 0, 1, out.data()).ok());   // bad global scale
}

TEST(DecodeEdge, RandomBytesNeverCrash) {
  std::mt19937 rng(7);
  for (const auto& t : all_types()) {
    if (t.kind == TypeKind::composite) continue;
    const size_t blocks = 3;
    std::vector<uint8_t> bytes(blocks * t.block_bytes * 2);
    for (auto& x : bytes) x = static_cast<uint8_t>(rng());
    TensorView v = block_view(t.id, bytes, 2);
    std::vector<float> out(static_cast<size_t>(v.n_rows * v.n_cols));
    EXPECT_TRUE(decode_rows(v, 0, 2, out.data()).ok()) << t.name;
  }
}

}   // namespace
}   // namespace akview
