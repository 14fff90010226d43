// The x-quant path (compute/xquant.hpp):
//  * its q8_0 / q8_1 / q8_K blocks equal ggml's, byte for byte, on every oracle x and on edge
//    inputs (ties, zero blocks, a positive or negative extreme); the expected blocks are written
//    here from FORMATS.md §6, not by calling compute's quantizer;
//  * its y, SIMD and scalar kernels alike, is within the bound of the arithmetic it claims of
//    y_q = sum_j w_j * xq_j taken in f64, w from the oracle's own dequantization:
//      |y - y_q| <= (n_blocks + 16) * 2^-24 * sum_j (|w_j| + mu_j) |xq_j|    (xquant.hpp)
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "compute/backends.hpp"
#include "compute/xquant.hpp"
#include "core/decode/decode.hpp"
#include "oracle_cases.hpp"
#include "tests/compute/synthetic.hpp"
#include "tests/writers/quantize.hpp"

namespace akview::compute {
namespace {

// --- expected blocks, from FORMATS.md §6 ---------------------------------------------------

// round half to even / half away from zero, by hand
float round_even(float v) {
  const float f = std::floor(v), diff = v - f;
  if (diff > 0.5f) return f + 1;
  if (diff < 0.5f) return f;
  return std::fmod(f, 2.0f) == 0 ? f : f + 1;
}
float round_away(float v) { return v < 0 ? -std::floor(-v + 0.5f) : std::floor(v + 0.5f); }

float half_to_float(uint16_t h) {   // binary16 -> float, by its definition
  const int e = (h >> 10) & 31, m = h & 1023;
  const float mag = e == 0 ? std::ldexp(static_cast<float>(m), -24) : std::ldexp(1.0f + m / 1024.0f, e - 15);
  return (h & 0x8000) ? -mag : mag;
}

#if defined(__AVX__)
constexpr bool kX86Avx = true;   // ggml's AVX path: multiplier 127/amax, ties to even
#else
constexpr bool kX86Avx = false;   // ggml's reference: multiplier 1/d, half away from zero
#endif

// q8_0 and q8_1 (s appended when with_s): f16 d, 32 codes.
std::vector<uint8_t> expect_q8_32(const std::vector<float>& x, bool with_s) {
  std::vector<uint8_t> out;
  for (size_t b = 0; b < x.size() / 32; ++b) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[32 * b + j]));
    const float d = amax / 127.0f;
    const float mult = kX86Avx ? (amax == 0 ? 0.0f : 127.0f / amax) : (d == 0 ? 0.0f : 1.0f / d);
    int8_t q[32];
    int sum = 0;
    for (int j = 0; j < 32; ++j) {
      const float v = x[32 * b + j] * mult;
      q[j] = static_cast<int8_t>(std::max(-128.0f, std::min(127.0f, kX86Avx ? round_even(v) : round_away(v))));
      sum += q[j];
    }
    const uint16_t dh = testing::f32_to_f16(d), sh = testing::f32_to_f16(d * static_cast<float>(sum));
    out.push_back(dh & 0xFF), out.push_back(dh >> 8);
    if (with_s) out.push_back(sh & 0xFF), out.push_back(sh >> 8);
    for (int8_t v : q) out.push_back(static_cast<uint8_t>(v));
  }
  return out;
}

// q8_K: f32 d, 256 codes, 16 int16 sums.
std::vector<uint8_t> expect_q8_k(const std::vector<float>& x) {
  std::vector<uint8_t> out;
  for (size_t b = 0; b < x.size() / 256; ++b) {
    const float* v = x.data() + 256 * b;
    float amax = 0, max = 0;
    for (int j = 0; j < 256; ++j)
      if (std::fabs(v[j]) > amax) amax = std::fabs(v[j]), max = v[j];
    float d = 0;
    int8_t q[256] = {};
    int16_t bs[16] = {};
    if (amax != 0) {
      const float iscale = -127.0f / max;
      for (int j = 0; j < 256; ++j) q[j] = static_cast<int8_t>(std::min(127.0f, round_even(iscale * v[j])));
      for (int j = 0; j < 256; ++j) bs[j / 16] = static_cast<int16_t>(bs[j / 16] + q[j]);
      d = 1 / iscale;
    }
    const size_t at = out.size();
    out.resize(at + 292);
    std::memcpy(out.data() + at, &d, 4);
    std::memcpy(out.data() + at + 4, q, 256);
    std::memcpy(out.data() + at + 260, bs, 32);
  }
  return out;
}

template <class Block, class Fn>
std::vector<uint8_t> ours(const std::vector<float>& x, size_t per, Fn quantize) {
  std::vector<Block> blocks(x.size() / per);
  quantize(x.data(), static_cast<int64_t>(x.size()), blocks.data());
  std::vector<uint8_t> bytes(blocks.size() * sizeof(Block));
  std::memcpy(bytes.data(), blocks.data(), bytes.size());
  return bytes;
}

// First differing block, or -1.
long first_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, size_t block_bytes) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return static_cast<long>(i / block_bytes);
  return -1;
}

void expect_blocks_equal(const std::vector<float>& x, const std::string& what) {
  const auto q80 = ours<BlockQ8_0>(x, 32, quantize_q8_0), e80 = expect_q8_32(x, false);
  EXPECT_EQ(first_diff(q80, e80, 34), -1) << what << ": q8_0 block differs";
  const auto q81 = ours<BlockQ8_1>(x, 32, quantize_q8_1), e81 = expect_q8_32(x, true);
  EXPECT_EQ(first_diff(q81, e81, 36), -1) << what << ": q8_1 block differs";
  if (x.size() % 256 == 0) {
    const auto q8k = ours<BlockQ8K>(x, 256, quantize_q8_k), e8k = expect_q8_k(x);
    EXPECT_EQ(first_diff(q8k, e8k, 292), -1) << what << ": q8_K block differs";
  }
}

TEST(XQuantBlocks, EqualGgmlOnEveryOracleInput) {
  std::set<std::vector<float>> seen;
  for (const auto& c : testing::matvec_oracle_cases())
    if (c.error.empty() && !c.x.empty() && c.x.size() % 32 == 0 && seen.insert(c.x).second)
      expect_blocks_equal(c.x, c.label);
  EXPECT_GE(seen.size(), 1u);
}

TEST(XQuantBlocks, EqualGgmlOnEdgeInputs) {
  std::vector<float> x(1024, 0.0f);                                         // q8_0 block 0 and q8_K block 3 all zero
  for (int j = 0; j < 32; ++j) x[32 + j] = static_cast<float>(j) - 15.5f;   // a ramp
  x[64] = 127.0f;                                                           // amax 127: multiplier 1, so
  for (int j = 1; j < 32; ++j) x[64 + j] = static_cast<float>(j) - 16.5f;   // every code is a tie
  for (int j = 0; j < 32; ++j) x[96 + j] = -1e-3f * static_cast<float>(j + 1);   // all negative
  for (int j = 0; j < 32; ++j) x[128 + j] = 1e-6f * static_cast<float>(j);       // tiny: d subnormal in f16
  for (int j = 256; j < 512; ++j) x[j] = std::sin(static_cast<float>(j)) * 2.5f;
  x[300] = 3.0f, x[301] = -3.0f;   // q8_K: equal |max|, the first wins
  x[512] = -127.0f;                // q8_K iscale 1: ties again
  for (int j = 513; j < 768; ++j) x[j] = static_cast<float>(j % 100) - 49.5f;
  expect_blocks_equal(x, "edge inputs");
  // The sign rule of q8_K: d has the opposite sign of the largest-magnitude x.
  BlockQ8K k[4];
  quantize_q8_k(x.data(), 1024, k);
  EXPECT_EQ(k[0].d, -1.0f);   // x[64] = +127
  EXPECT_LT(k[1].d, 0.0f);    // x[300] = +3 comes first
  EXPECT_EQ(k[1].qs[300 - 256], -127);
  EXPECT_EQ(k[2].d, 1.0f);
  EXPECT_EQ(k[2].qs[1], -36);   // x = 13 - 49.5 = -36.5: half to even, not away
  EXPECT_EQ(k[3].d, 0.0f);
}

// Random x at several magnitudes: products iscale * x land next to a half now and then, where an
// FMA-fused iscale * x + 1.5 * 2^23 (ggml rounds the product first) gives the other code.
TEST(XQuantBlocks, EqualGgmlOnRandomInputs) {
  uint32_t state = 2024;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (float scale : {1.0f / 250, 1e-3f, 0.37f, 17.0f}) {
    std::vector<float> x(8192);
    for (auto& f : x) f = static_cast<float>(static_cast<int32_t>(next() >> 8) % 2001 - 1000) * scale;
    expect_blocks_equal(x, "random x, scale " + std::to_string(scale));
  }
}

// --- y within the bound of the integer arithmetic ----------------------------------------------

struct BoundRule {
  TypeId type;
  int block;          // weight block elements
  int min_offset;     // f16 offset of the per-block min / dmin; -1 none
  double mu_factor;   // mu_j = mu_factor * |that value|
};
constexpr BoundRule kRules[] = {
    {TypeId::q4_0, 32, -1, 0},   {TypeId::q5_0, 32, -1, 0},    {TypeId::q8_0, 32, -1, 0},
    {TypeId::iq4_nl, 32, -1, 0}, {TypeId::q4_1, 32, 2, 2.002}, {TypeId::q5_1, 32, 2, 2.002},
    {TypeId::q2_k, 256, 82, 30}, {TypeId::q3_k, 256, -1, 0},   {TypeId::q4_k, 256, 2, 126},
    {TypeId::q5_k, 256, 2, 126}, {TypeId::q6_k, 256, -1, 0},   {TypeId::iq4_xs, 256, -1, 0},
};

// xq_j (dequantized x codes) and, for q8_1, the per-block correction s - d * sum(qs).
struct DequantX {
  std::vector<double> xq, s_minus;
};
DequantX dequant_expected(ActQuant kind, const std::vector<float>& x) {
  DequantX out;
  out.xq.resize(x.size());
  if (kind == ActQuant::q8_k) {
    const auto bytes = expect_q8_k(x);
    for (size_t b = 0; b < x.size() / 256; ++b) {
      float d;
      std::memcpy(&d, bytes.data() + 292 * b, 4);
      for (int j = 0; j < 256; ++j)
        out.xq[256 * b + j] = static_cast<double>(d) * static_cast<int8_t>(bytes[292 * b + 4 + j]);
    }
    return out;
  }
  const bool with_s = kind == ActQuant::q8_1;
  const size_t bb = with_s ? 36 : 34;
  const auto bytes = expect_q8_32(x, with_s);
  for (size_t b = 0; b < x.size() / 32; ++b) {
    const uint8_t* p = bytes.data() + bb * b;
    const double d = half_to_float(static_cast<uint16_t>(p[0] | p[1] << 8));
    double sum = 0;
    for (int j = 0; j < 32; ++j) sum += out.xq[32 * b + j] = d * static_cast<int8_t>(p[bb - 32 + j]);
    if (with_s) out.s_minus.push_back(half_to_float(static_cast<uint16_t>(p[2] | p[3] << 8)) - sum);
  }
  return out;
}

const BoundRule* rule_for(TypeId type) {
  for (const auto& r : kRules)
    if (r.type == type) return &r;
  return nullptr;
}

// y of `path` against the bound of the arithmetic it claims, row by row, with w the weights as a
// reference dequantizes them (row-major) and y_q = sum_j w_j xq_j in f64; the first 3 rows outside
// it fail the test. Returns the kernel variant that ran.
std::string_view check_within_bound(const TensorView& v, std::span<const float> w, const std::vector<float>& x,
                                    XqPath path, const std::string& label) {
  const BoundRule* rule = rule_for(v.type);
  const auto kind = act_quant_for(v.type);
  EXPECT_TRUE(rule && kind) << label << ": the x-quant table and this test disagree on the type";
  if (!rule || !kind) return "";
  const DequantX xq = dequant_expected(*kind, x);
  const int64_t rows = v.n_rows, cols = v.n_cols, nb = cols / rule->block;
  const uint64_t block_bytes = v.row_bytes / static_cast<uint64_t>(nb);
  std::vector<float> y(static_cast<size_t>(rows), -1.0f);
  const Status s = xquant_matvec(v, x.data(), y.data(), path);
  EXPECT_TRUE(s.ok()) << label << ": " << (s.ok() ? "" : s.error().to_string());
  int bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double yq = 0, t = 0;
    for (int64_t j = 0; j < cols; ++j) {
      const double wj = w[static_cast<size_t>(r * cols + j)];
      double mu = 0;
      if (rule->min_offset >= 0) {
        const uint8_t* blk = v.data.data() + r * v.row_bytes + (j / rule->block) * block_bytes;
        mu = rule->mu_factor *
             std::fabs(half_to_float(static_cast<uint16_t>(blk[rule->min_offset] | blk[rule->min_offset + 1] << 8)));
      }
      yq += wj * xq.xq[j];
      t += (std::fabs(wj) + mu) * std::fabs(xq.xq[j]);
    }
    if (*kind == ActQuant::q8_1)   // ggml uses the stored s for the m * sum(x) term
      for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* blk = v.data.data() + r * v.row_bytes + b * block_bytes;
        yq += half_to_float(static_cast<uint16_t>(blk[2] | blk[3] << 8)) * xq.s_minus[b];
      }
    const double bound = static_cast<double>(nb + 16) * std::ldexp(1.0, -24) * t;
    const double err = std::fabs(y[r] - yq);
    if (!(err <= bound) && bad++ < 3)
      ADD_FAILURE() << label << " (" << xquant_variant(v, path) << ") row " << r << ": y=" << y[r] << " y_q=" << yq
                    << " |err|=" << err << " bound=" << bound;
  }
  return xquant_variant(v, path);
}

// Every path (the best this build has, AVX2, scalar) on every oracle tensor of every x-quant type.
TEST(XQuantMatvec, WithinIntegerArithmeticBoundOnOracles) {
  std::map<TypeId, int> ran;
  int ran_avx2 = 0, ran_vnni = 0;
  for (const auto& c : testing::matvec_oracle_cases()) {
    if (!c.error.empty()) continue;
    ASSERT_EQ(rule_for(c.view.type) != nullptr, act_quant_for(c.view.type).has_value())
        << c.label << ": the x-quant table and this test disagree on the type";
    if (!rule_for(c.view.type)) continue;
    for (XqPath path : {XqPath::scalar, XqPath::best, XqPath::avx2}) {
      const std::string_view variant = check_within_bound(c.view, c.deq, c.x, path, c.label);
      ran_avx2 += variant == "avx2" && path == XqPath::avx2;
      ran_vnni += variant == "avx512-vnni";
    }
    ++ran[c.view.type];
  }
  // Every type with an x-quant kernel has at least one oracle tensor.
  for (const auto& r : kRules) EXPECT_GT(ran[r.type], 0) << type_info(r.type).name << ": no oracle tensor ran";
#if defined(__AVX2__)
  EXPECT_GT(ran_avx2, 0) << "an AVX2 build ran no AVX2 kernel";
#endif
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__) && \
    defined(__BMI2__)
  EXPECT_GT(ran_vnni, 0) << "an AVX-512 VNNI build (or its emulation) ran no VNNI kernel";
#endif
}

TEST(XQuantMatvec, RefusesTypesWithoutKernel) {
  for (const auto& c : testing::matvec_oracle_cases()) {
    if (!c.error.empty() || act_quant_for(c.view.type)) continue;
    std::vector<float> y(static_cast<size_t>(c.view.n_rows));
    EXPECT_FALSE(xquant_matvec(c.view, c.x.data(), y.data()).ok()) << c.label;
    EXPECT_FALSE(xquant_supports(c.view)) << c.label;
  }
}

}   // namespace
}   // namespace akview::compute

namespace akview::compute {
namespace {

// A view over `bytes`: rows x cols of `type`, rows end to end.
TensorView view_of(TypeId type, int64_t rows, int64_t cols, std::span<const uint8_t> bytes) {
  TensorView v;
  v.type = type;
  v.n_rows = rows;
  v.n_cols = cols;
  v.data = bytes;
  v.row_bytes = bytes.size() / static_cast<size_t>(rows);
  return v;
}

// K-quant blocks whose dmin is 0 while their 6-bit mins are not: the mins then add nothing (ggml:
// d*P - dmin*M), and every path must say so — a zero dmin is not a zero-point marker. Also q8_0
// weights of -128 and q5 blocks with every high bit set, on every path, against the exact sum over
// the decoded weights and the dequantized x within the integer bound.
TEST(XQuantMatvec, EdgeBlocksAgreeOnEveryPath) {
  constexpr int64_t kRows = 8, kCols = 512;
  struct Edge {
    TypeId type;
    uint32_t block_bytes, block_elems;
    void (*patch)(uint8_t* block, uint32_t row_seed);
  };
  static const Edge kEdges[] = {
      {TypeId::q4_k, 144, 256,
       [](uint8_t* b, uint32_t) { b[0] = 0x66, b[1] = 0x2E, b[2] = 0, b[3] = 0; }},   // d ~0.1, dmin 0
      {TypeId::q5_k, 176, 256,
       [](uint8_t* b, uint32_t) { b[0] = 0x66, b[1] = 0x2E, b[2] = 0, b[3] = 0x80; }},   // dmin -0
      {TypeId::q8_0, 34, 32,
       [](uint8_t* b, uint32_t s) {
         b[0] = 0x66, b[1] = 0x2E;
         for (int j = 2; j < 34; j += 1 + (s & 3)) b[j] = 0x80;
       }},
      {TypeId::q5_0, 22, 32, [](uint8_t* b, uint32_t) { b[0] = 0x66, b[1] = 0x2E, b[2] = b[3] = b[4] = b[5] = 0xFF; }},
      {TypeId::q5_1, 24, 32,
       [](uint8_t* b, uint32_t) { b[0] = 0x66, b[1] = 0x2E, b[2] = 0, b[3] = 0, b[4] = b[5] = b[6] = b[7] = 0xFF; }},
  };
  for (const Edge& e : kEdges) {
    SCOPED_TRACE(std::string(type_info(e.type).name));
    std::vector<uint8_t> bytes(static_cast<size_t>(kRows * kCols / e.block_elems * e.block_bytes));
    uint32_t state = 12345;
    for (auto& v : bytes) v = static_cast<uint8_t>((state = state * 1664525u + 1013904223u) >> 24);
    for (size_t at = 0, k = 0; at < bytes.size(); at += e.block_bytes, ++k)
      e.patch(bytes.data() + at, static_cast<uint32_t>(k));
    const TensorView v = view_of(e.type, kRows, kCols, bytes);
    std::vector<float> x(kCols);
    for (auto& f : x)
      f = static_cast<float>(static_cast<int32_t>((state = state * 1664525u + 1013904223u) >> 8) % 2001 - 1000) /
          500.0f;
    std::vector<float> w(static_cast<size_t>(kRows * kCols));
    ASSERT_TRUE(decode_rows(v, 0, kRows, w.data()).ok());
    const auto kind = act_quant_for(e.type);
    ASSERT_TRUE(kind.has_value());
    const DequantX xq = dequant_expected(*kind, x);
    std::vector<float> first;
    for (XqPath path : {XqPath::scalar, XqPath::avx2, XqPath::best}) {
      std::vector<float> y(kRows);
      ASSERT_TRUE(xquant_matvec(v, x.data(), y.data(), path).ok());
      for (int64_t r = 0; r < kRows; ++r) {
        double yq = 0, t = 0;
        for (int64_t j = 0; j < kCols; ++j) {
          yq += static_cast<double>(w[r * kCols + j]) * xq.xq[j];
          t += std::fabs(static_cast<double>(w[r * kCols + j])) * std::fabs(xq.xq[j]);
        }
        // (q5_1's m is 0 here: its m * s term adds nothing.)
        const double bound = static_cast<double>(kCols / 32 + 16) * std::ldexp(1.0, -24) * t;
        EXPECT_LE(std::fabs(y[r] - yq), bound)
            << xquant_variant(v, path) << " row " << r << ": y=" << y[r] << " y_q=" << yq;
      }
    }
  }
}

}   // namespace
}   // namespace akview::compute

namespace akview::compute {
namespace {

// Random blocks of every x-quant type (scales, codes and high bits at random; d, dmin and m finite,
// some of them zero), on every path, within the bound. Then the same blocks with every weight zero,
// scales kept: codes at the zero point (q4_0 8, q5_0 16, q3_K 4, q6_K 32), or codes 0 with the
// offset 0 (q4_1 / q5_1 m, q2_K / q4_K / q5_K dmin), or d 0 (IQ4_NL, IQ4_XS, which have no zero
// code). y must be 0 there (the bound is 0: t = sum |w| |x| = 0, and mu is 0 with the offset); a
// kernel that takes a zero point off in lanes that do not match its code lanes (each lane then a
// large sum that cancels only across lanes) leaves rounding there.
TEST(XQuantMatvec, RandomAndAllZeroBlocksWithinTheBoundOnEveryPath) {
  struct Type {
    TypeId type;
    uint32_t block_elems, block_bytes;
    std::vector<uint32_t> f16_fields;       // byte offsets of d (and dmin / m) in a block
    void (*zero_weights)(uint8_t* block);   // codes and offsets making every weight 0, the rest kept
  };
  const Type kTypes[] = {
      {TypeId::q4_0, 32, 18, {0}, [](uint8_t* b) { std::memset(b + 2, 0x88, 16); }},
      {TypeId::q4_1, 32, 20, {0, 2}, [](uint8_t* b) { std::memset(b + 4, 0, 16), b[2] = b[3] = 0; }},
      {TypeId::q5_0,
       32,
       22,
       {0},
       [](uint8_t* b) { std::memset(b + 2, 0xFF, 4), std::memset(b + 6, 0, 16); }},   // high bits set
      {TypeId::q5_1, 32, 24, {0, 2}, [](uint8_t* b) { std::memset(b + 4, 0, 20), b[2] = b[3] = 0; }},
      {TypeId::q8_0, 32, 34, {0}, [](uint8_t* b) { std::memset(b + 2, 0, 32); }},
      {TypeId::iq4_nl, 32, 18, {0}, [](uint8_t* b) { b[0] = b[1] = 0; }},
      {TypeId::q2_k, 256, 84, {80, 82}, [](uint8_t* b) { std::memset(b + 16, 0, 64), b[82] = b[83] = 0; }},
      {TypeId::q3_k,
       256,
       110,
       {108},
       [](uint8_t* b) { std::memset(b, 0xFF, 32), std::memset(b + 32, 0, 64); }},   // high bit set, low 0
      {TypeId::q4_k, 256, 144, {0, 2}, [](uint8_t* b) { std::memset(b + 16, 0, 128), b[2] = b[3] = 0; }},
      {TypeId::q5_k, 256, 176, {0, 2}, [](uint8_t* b) { std::memset(b + 16, 0, 160), b[2] = b[3] = 0; }},
      {TypeId::q6_k,
       256,
       210,
       {208},
       [](uint8_t* b) { std::memset(b, 0, 128), std::memset(b + 128, 0xAA, 64); }},   // ql 0, qh 2
      {TypeId::iq4_xs, 256, 136, {0}, [](uint8_t* b) { b[0] = b[1] = 0; }},
  };
  for (const auto& r : kRules) {
    bool listed = false;
    for (const Type& t : kTypes) listed |= t.type == r.type;
    EXPECT_TRUE(listed) << type_info(r.type).name << " has an x-quant kernel and no random blocks here";
  }
  constexpr int64_t kRows = 16, kCols = 1024;
  for (const Type& t : kTypes)
    for (bool zero : {false, true}) {
      SCOPED_TRACE(std::string(type_info(t.type).name) + (zero ? ", every weight zero" : ", random blocks"));
      std::vector<uint8_t> bytes(static_cast<size_t>(kRows * kCols / t.block_elems * t.block_bytes));
      uint32_t state = 777u + static_cast<uint32_t>(t.type);
      auto next = [&] { return state = state * 1664525u + 1013904223u; };
      for (auto& v : bytes) v = static_cast<uint8_t>(next() >> 24);
      for (size_t at = 0, k = 0; at < bytes.size(); at += t.block_bytes, ++k) {
        for (uint32_t f : t.f16_fields) {
          // finite halves of either sign between 2^-14 and 2, and now and then zero
          const uint16_t h =
              k % 7 == 3 ? 0 : static_cast<uint16_t>(((next() >> 16) & 0x8000) | (0x0400 + (next() >> 8) % 0x3C00));
          bytes[at + f] = static_cast<uint8_t>(h & 0xFF);
          bytes[at + f + 1] = static_cast<uint8_t>(h >> 8);
        }
        if (zero) t.zero_weights(bytes.data() + at);
      }
      const TensorView v = view_of(t.type, kRows, kCols, bytes);
      std::vector<float> x(kCols);
      for (auto& f : x) f = static_cast<float>(static_cast<int32_t>(next() >> 8) % 2001 - 1000) / 250.0f;
      std::vector<float> w(static_cast<size_t>(kRows * kCols));
      ASSERT_TRUE(decode_rows(v, 0, kRows, w.data()).ok());
      if (zero) {
        for (float f : w) ASSERT_EQ(f, 0.0f) << "the zero blocks decode to a nonzero weight";
      }
      for (XqPath path : {XqPath::scalar, XqPath::avx2, XqPath::best}) check_within_bound(v, w, x, path, "");
    }
}

}   // namespace
}   // namespace akview::compute

namespace akview::compute {
namespace {

// The 32-element types' SIMD kernels take several rows a pass and the rest one at a time: random
// blocks, an odd number of blocks a row (the last one taken alone), on one thread with 30 rows (the
// pool's tasks of 7 rows: a pass of several rows, then single rows; the other tests' row counts
// give tasks of one or two rows), every path within the bound.
TEST(XQuantMatvec, RowPassesAndRemaindersWithinTheBoundOnEveryPath) {
  struct Type {
    TypeId type;
    uint32_t block_bytes;
    std::vector<uint32_t> f16_fields;   // d, and m where the type has one
  };
  const Type kTypes[] = {{TypeId::q4_0, 18, {0}},    {TypeId::q4_1, 20, {0, 2}}, {TypeId::q5_0, 22, {0}},
                         {TypeId::q5_1, 24, {0, 2}}, {TypeId::q8_0, 34, {0}},    {TypeId::iq4_nl, 18, {0}}};
  constexpr int64_t kRows = 30, kCols = 32 * 33;
  const int threads = cpu_threads();
  set_cpu_threads(1);
  for (const Type& t : kTypes) {
    SCOPED_TRACE(std::string(type_info(t.type).name));
    std::vector<uint8_t> bytes(static_cast<size_t>(kRows * kCols / 32 * t.block_bytes));
    uint32_t state = 4242u + static_cast<uint32_t>(t.type);
    auto next = [&] { return state = state * 1664525u + 1013904223u; };
    for (auto& v : bytes) v = static_cast<uint8_t>(next() >> 24);
    for (size_t at = 0; at < bytes.size(); at += t.block_bytes)
      for (uint32_t f : t.f16_fields) {
        const uint16_t h = static_cast<uint16_t>(((next() >> 16) & 0x8000) | (0x0400 + (next() >> 8) % 0x3C00));
        bytes[at + f] = static_cast<uint8_t>(h & 0xFF);
        bytes[at + f + 1] = static_cast<uint8_t>(h >> 8);
      }
    const TensorView v = view_of(t.type, kRows, kCols, bytes);
    std::vector<float> x(kCols);
    for (auto& f : x) f = static_cast<float>(static_cast<int32_t>(next() >> 8) % 2001 - 1000) / 250.0f;
    std::vector<float> w(static_cast<size_t>(kRows * kCols));
    ASSERT_TRUE(decode_rows(v, 0, kRows, w.data()).ok());
    for (XqPath path : {XqPath::scalar, XqPath::avx2, XqPath::best}) check_within_bound(v, w, x, path, "");
  }
  set_cpu_threads(threads);
}

}   // namespace
}   // namespace akview::compute

namespace akview::compute {
namespace {

// xquant_matvec splits rows into tasks of whole 4-row passes (one contiguous range a thread for a
// matrix that fits the cores' caches, ~128 KiB tasks otherwise) and keeps x's quantized form in
// vectors reused from call to call on a thread. Every row's y is computed the same way however the
// rows are split, so y on 1, 2 and 3 threads, for row counts that are no multiple of 4 or of the
// threads, small and large, must equal each row's matvec on its own to the bit; and calls that
// change the type (q8_0, q8_1 and q8_K x) and the length of x on one thread must give what a
// fresh thread gives.
TEST(XQuantMatvec, AnySplitAndReusedInputGiveEachRowsOwnResultToTheBit) {
  struct Case {
    TypeId type;
    int64_t rows, blocks;
  };
  const Case kCases[] = {{TypeId::q8_0, 61, 128}, {TypeId::q4_0, 7, 8},    {TypeId::q4_1, 130, 448},
                         {TypeId::q4_k, 5, 2},    {TypeId::q6_k, 301, 16}, {TypeId::q8_0, 1203, 64},
                         {TypeId::q4_0, 2, 128}};
  struct Run {
    testing::SyntheticTensor t;
    std::vector<float> x, y_rows;
  };
  std::vector<Run> runs;
  for (const Case& c : kCases) {
    Run r{testing::make_block_tensor(c.type, c.rows, c.blocks, 11 + runs.size()), {}, {}};
    r.x.resize(static_cast<size_t>(r.t.view.n_cols));
    for (size_t i = 0; i < r.x.size(); ++i) r.x[i] = std::sin(0.37f * static_cast<float>(i) + 1.0f);
    runs.push_back(std::move(r));
  }
  for (XqPath path : {XqPath::best, XqPath::avx2}) {
    SCOPED_TRACE(path == XqPath::best ? "best" : "avx2");
    set_cpu_threads(1);
    for (Run& r : runs) {   // each row alone, each tensor on a fresh thread
      r.y_rows.assign(static_cast<size_t>(r.t.view.n_rows), 0.0f);
      std::thread([&] {
        for (int64_t i = 0; i < r.t.view.n_rows; ++i) {
          TensorView one = r.t.view;
          one.n_rows = 1;
          one.data = r.t.view.data.subspan(static_cast<size_t>(i) * one.row_bytes, one.row_bytes);
          ASSERT_TRUE(xquant_matvec(one, r.x.data(), &r.y_rows[static_cast<size_t>(i)], path).ok());
        }
      }).join();
    }
    for (int threads : {1, 2, 3}) {
      set_cpu_threads(threads);
      for (int round = 0; round < 2; ++round)   // the second round reuses what the first left
        for (size_t k = 0; k < runs.size(); ++k) {
          const Run& r = runs[round ? runs.size() - 1 - k : k];
          SCOPED_TRACE(std::string(type_info(r.t.view.type).name) + " " + std::to_string(r.t.view.n_rows) + " rows, " +
                       std::to_string(threads) + " threads");
          std::vector<float> y(static_cast<size_t>(r.t.view.n_rows), -1.0f);
          ASSERT_TRUE(xquant_matvec(r.t.view, r.x.data(), y.data(), path).ok());
          for (size_t i = 0; i < y.size(); ++i)
            ASSERT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(r.y_rows[i])) << "row " << i;
        }
    }
  }
  set_cpu_threads(0);
}

}   // namespace
}   // namespace akview::compute
