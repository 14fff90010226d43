// The fixture quantizers (tests/writers/quantize) against the decoders: f16/bf16 rounding picks
// the nearest representable value, and quantize -> decode stays within each type's error budget.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/decode/decode.hpp"
#include "tests/writers/quantize.hpp"

namespace akview {
namespace {

TensorView view_of(TypeId type, const std::vector<uint8_t>& bytes, int64_t rows, int64_t cols) {
  TensorView v;
  v.type = type;
  v.n_rows = rows;
  v.n_cols = cols;
  v.data = bytes;
  v.row_bytes = bytes.size() / rows;
  return v;
}

float decode_one(TypeId type, uint16_t bits) {
  std::vector<uint8_t> b = {static_cast<uint8_t>(bits), static_cast<uint8_t>(bits >> 8)};
  float out = 0;
  EXPECT_TRUE(decode_rows(view_of(type, b, 1, 1), 0, 1, &out).ok());
  return out;
}

TEST(FixtureQuantizers, HalfRoundingPicksTheNearestValue) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exp(-30.0f, 17.0f);
  for (int i = 0; i < 20000; ++i) {
    const float x = std::ldexp(1.0f + (rng() % 1000) / 1000.0f, static_cast<int>(exp(rng))) * (i % 2 ? -1.0f : 1.0f);
    for (TypeId type : {TypeId::f16, TypeId::bf16}) {
      const uint16_t h = type == TypeId::f16 ? testing::f32_to_f16(x) : testing::f32_to_bf16(x);
      const float got = decode_one(type, h);
      if (std::isinf(got)) {
        EXPECT_GT(std::fabs(x), type == TypeId::f16 ? 65504.0f : 3e38f) << x;
        continue;
      }
      for (int step : {-1, 1}) {
        const float neighbour = decode_one(type, static_cast<uint16_t>(h + step));
        if (std::isfinite(neighbour) && (h & 0x7fff) != 0) {
          EXPECT_LE(std::fabs(x - got), std::fabs(x - neighbour)) << x;
        }
      }
    }
  }
  EXPECT_EQ(testing::f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(testing::f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(testing::f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(testing::f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);   // smallest subnormal
}

TEST(FixtureQuantizers, QuantizeDecodeStaysWithinBudget) {
  const std::pair<TypeId, double> kBudget[] = {// relative RMS error of N(0,1) rows with outliers
                                               {TypeId::q8_0, 0.01}, {TypeId::q6_k, 0.04}, {TypeId::q4_k, 0.15},
                                               {TypeId::q4_0, 0.15}, {TypeId::f16, 1e-3},  {TypeId::bf16, 5e-3}};
  constexpr int64_t kRows = 8, kCols = 512;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> x(kRows * kCols);
  for (auto& v : x) v = normal(rng);
  x[3] = 0.4f;                                 // a lone outlier
  for (int i = 64; i < 96; ++i) x[i] = 0.0f;   // an all-zero block
  for (const auto& [type, budget] : kBudget) {
    auto bytes = testing::quantize(type, x);
    ASSERT_EQ(bytes.size(),
              static_cast<size_t>(kRows * kCols / type_info(type).block_elems * type_info(type).block_bytes));
    std::vector<float> y(x.size());
    ASSERT_TRUE(decode_rows(view_of(type, bytes, kRows, kCols), 0, kRows, y.data()).ok());
    double err = 0, ref = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      err += (y[i] - x[i]) * double(y[i] - x[i]);
      ref += x[i] * double(x[i]);
    }
    EXPECT_LT(std::sqrt(err / ref), budget) << type_info(type).name;
    for (int i = 64; i < 96; ++i) EXPECT_NEAR(y[i], 0.0f, 1e-3f) << type_info(type).name;
  }
  EXPECT_TRUE(testing::quantize(TypeId::iq2_xxs, x).empty());
}

}   // namespace
}   // namespace akview
