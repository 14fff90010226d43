// diff's value errors where both sides are raw block rows: the copied chunks are decoded a few
// thousand values at a time in pieces of a row and compared at once (core/diff.cpp). Two GGUFs of
// random well-formed blocks (Q4_K, Q6_K, Q8_0, F16; rows cut into pieces, pieces grouped, rows left
// whole; blocks with NaN and Inf scales, rows equal on both sides) are compared on several thread
// counts and chunk sizes: max_abs equals a per-value loop over the two tensors decoded whole, the
// sums agree with its long double sums to 1e-12, and every field equals, to the bit, what the
// per-chunk path gives (a custom RowDecoder, here the default one, takes that path).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/diff.hpp"
#include "core/formats/format.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "tests/writers/quantize.hpp"

namespace akview {
namespace {

struct Kind {
  const char* name;
  uint32_t ggml_type;
  int64_t block_elems, block_bytes;
};
constexpr Kind kQ4K{"q4_k", 12, 256, 144}, kQ6K{"q6_k", 14, 256, 210}, kQ8_0{"q8_0", 8, 32, 34}, kF16{"f16", 1, 1, 2};

uint16_t half_bits(float f) { return testing::f32_to_f16(f); }   // finite, small |f|: enough for scales
constexpr uint16_t kHalfInf = 0x7C00, kHalfNaN = 0x7E00;

// One block of random codes with finite scales; `special` puts an Inf (1) or a NaN (2) in its scale.
void random_block(const Kind& k, std::mt19937& rng, uint8_t* p, int special) {
  for (int64_t i = 0; i < k.block_bytes; ++i) p[i] = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> scale(0.001f, 0.05f), value(-3.0f, 3.0f);
  const uint16_t s = special == 1 ? kHalfInf : special == 2 ? kHalfNaN : half_bits(scale(rng));
  if (k.ggml_type == kQ4K.ggml_type) {   // d, dmin, then scales and codes
    std::memcpy(p, &s, 2);
    const uint16_t dmin = half_bits(scale(rng));
    std::memcpy(p + 2, &dmin, 2);
  } else if (k.ggml_type == kQ6K.ggml_type) {   // codes, scales, then d
    std::memcpy(p + 208, &s, 2);
  } else if (k.ggml_type == kQ8_0.ggml_type) {   // d, then codes
    std::memcpy(p, &s, 2);
  } else {   // a plain f16 value
    const uint16_t v = special == 1 ? kHalfInf : special == 2 ? kHalfNaN : half_bits(value(rng));
    std::memcpy(p, &v, 2);
  }
}

struct Shape {
  const Kind* kind;
  int64_t rows, cols;
  bool specials;   // some blocks with an Inf or NaN scale
};
// Pieces: 14336 = 7 x 2048 and 4096 one piece per row; 768 and 160 grouped 5 and 25 to a step; 36
// four to a step for 16 values; 8200 (largest piece 4100, no multiple of 16 in a step) left whole.
const Shape kShapes[] = {
    {&kQ4K, 6, 14336, false}, {&kQ4K, 9, 4096, false}, {&kQ4K, 5, 768, true},  {&kQ6K, 4, 14336, false},
    {&kQ6K, 7, 512, true},    {&kQ8_0, 7, 160, false}, {&kQ8_0, 11, 96, true}, {&kF16, 13, 36, false},
    {&kF16, 3, 8200, false},  {&kF16, 9, 40, true},
};

// Writes both models: B's tensor t has A's bytes in its first rows (equal chunks), random after.
void write_models(const std::string& pa, const std::string& pb) {
  std::mt19937 rng(20261127);
  testing::GgufWriter wa, wb;
  wa.set("general.architecture", testing::gguf_string("llama"));
  wb.set("general.architecture", testing::gguf_string("llama"));
  int t = 0;
  for (const Shape& s : kShapes) {
    const Kind& k = *s.kind;
    const int64_t blocks_per_row = s.cols / k.block_elems;
    std::vector<uint8_t> a(static_cast<size_t>(s.rows * blocks_per_row * k.block_bytes)), b(a.size());
    for (int64_t i = 0; i < s.rows * blocks_per_row; ++i) {
      const int special = s.specials && i % 13 == 5 ? 1 + static_cast<int>(i % 2) : 0;
      random_block(k, rng, a.data() + i * k.block_bytes, special);
      random_block(k, rng, b.data() + i * k.block_bytes, 0);
    }
    const size_t same = static_cast<size_t>(s.rows / 3 * blocks_per_row * k.block_bytes);
    std::memcpy(b.data(), a.data(), same);
    const std::string name = "blk." + std::to_string(t++) + ".ffn_up.weight";
    testing::GgufTensorSpec ta(name, k.ggml_type, {s.cols, s.rows}), tb = ta;
    ta.data = std::move(a);
    tb.data = std::move(b);
    wa.add_tensor(ta);
    wb.add_tensor(tb);
  }
  ASSERT_TRUE(wa.write(pa));
  ASSERT_TRUE(wb.write(pb));
}

bool same_bits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; }

TEST(DiffFused, RawBlockRowsEqualPerValueLoopAndThePerChunkPathToTheBit) {
  testing::TempDir dir;
  const std::string pa = dir.file("a.gguf"), pb = dir.file("b.gguf");
  write_models(pa, pb);
  auto a = open_model(pa);
  auto b = open_model(pb);
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  ASSERT_TRUE(b.ok()) << b.error().to_string();
  ASSERT_EQ(a->tensors.size(), std::size(kShapes));
  size_t with_specials = 0;
  for (uint32_t i = 0; i < a->tensors.size(); ++i) {
    const Shape& s = kShapes[i];
    SCOPED_TRACE(std::string(s.kind->name) + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols));
    const size_t n = static_cast<size_t>(s.rows * s.cols);
    std::vector<float> x(n), y(n);
    ASSERT_TRUE(decode_tensor_rows(*a, i, 0, s.rows, x.data()).ok());
    ASSERT_TRUE(decode_tensor_rows(*b, i, 0, s.rows, y.data()).ok());
    double max_abs = 0;
    long double sum_sq = 0, ref_sq = 0, a_sq = 0, dot = 0;
    bool nonfinite = false;
    for (size_t k = 0; k < n; ++k) {
      nonfinite = nonfinite || !std::isfinite(x[k]);
      const double e = static_cast<double>(x[k]) - y[k];
      max_abs = std::max(max_abs, std::fabs(e));
      sum_sq += static_cast<long double>(e) * e;
      ref_sq += static_cast<long double>(y[k]) * y[k];
      a_sq += static_cast<long double>(x[k]) * x[k];
      dot += static_cast<long double>(x[k]) * y[k];
    }
    with_specials += nonfinite;
    EXPECT_EQ(nonfinite, s.specials);
    const double rmse = std::sqrt(static_cast<double>(sum_sq / n));
    const double cosine = static_cast<double>(dot / std::sqrt(a_sq * ref_sq));
    for (uint64_t chunk : {uint64_t{1} << 16, 3 * static_cast<uint64_t>(s.cols) + 1, static_cast<uint64_t>(s.cols)})
      for (int threads : {1, 2, 3}) {
        SCOPED_TRACE(std::to_string(threads) + " threads, chunks of " + std::to_string(chunk));
        DiffOptions o;
        o.threads = threads;
        o.chunk_elems = chunk;
        auto fused = compare_values(*a, i, *b, i, o);
        o.decode = decode_tensor_rows;   // the per-chunk path, from the mapping
        auto plain = compare_values(*a, i, *b, i, o);
        ASSERT_TRUE(fused.ok()) << fused.error().to_string();
        ASSERT_TRUE(plain.ok()) << plain.error().to_string();
        EXPECT_EQ(fused->max_abs, max_abs);
        EXPECT_TRUE(same_bits(fused->max_abs, plain->max_abs));
        EXPECT_TRUE(same_bits(fused->rmse, plain->rmse)) << fused->rmse << " vs " << plain->rmse;
        EXPECT_TRUE(same_bits(fused->rel_rmse, plain->rel_rmse));
        EXPECT_TRUE(same_bits(fused->cosine, plain->cosine)) << fused->cosine << " vs " << plain->cosine;
        EXPECT_EQ(fused->elements, n);
        if (!std::isfinite(rmse)) {   // a NaN or Inf value: the sums say so
          EXPECT_FALSE(std::isfinite(fused->rmse));
        } else {
          EXPECT_NEAR(fused->rmse, rmse, 1e-12 * rmse);
          EXPECT_NEAR(fused->cosine, cosine, 1e-12);
        }
      }
  }
  EXPECT_EQ(with_specials, 4u);
}

}   // namespace
}   // namespace akview
