// The vectorised decoders (core/decode/simd.hpp) against their scalar references, bit for bit:
// random blocks and groups whose scale fields are drawn from NaN (quiet, signalling, negative),
// +-Inf, subnormal, +-0 and ordinary values; plus every f16 / bf16 bit pattern through decode_rows.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/decode/decode.hpp"
#include "core/decode/float_formats.hpp"
#include "core/decode/simd.hpp"
#include "core/types.hpp"

namespace akview {
namespace {

constexpr uint16_t kSpecialHalves[] = {0x7E00, 0x7D01, 0xFE00, 0x7C01, 0x7C00, 0xFC00, 0x0001, 0x03FF,
                                       0x8001, 0x0000, 0x8000, 0x7BFF, 0xFBFF, 0x0400, 0x3C00};
constexpr uint32_t kSpecialFloats[] = {0x7FC00000u, 0x7F800001u, 0xFFC00123u, 0x7F800000u, 0xFF800000u, 0x00000001u,
                                       0x007FFFFFu, 0x80000001u, 0x00000000u, 0x80000000u, 0x7F7FFFFFu, 0x3F800000u};

// Index of the first element whose bits differ, or -1. any_nan_equal: two NaNs match whatever their
// payloads (for s*q + b, where NaN + NaN returns one operand's payload and the compiler may swap the
// operands of the commutative add, so even two compilations of the scalar loop can disagree).
long first_difference(const std::vector<float>& a, const std::vector<float>& b, bool any_nan_equal = false) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (any_nan_equal && std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) return static_cast<long>(i);
  }
  return -1;
}

TEST(DecodeSimd, F16ScaleConversionIsExact) {
#if defined(AKVIEW_DECODE_AVX2)
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint8_t bytes[2] = {static_cast<uint8_t>(h & 0xFF), static_cast<uint8_t>(h >> 8)};
    ASSERT_EQ(std::bit_cast<uint32_t>(decode::simd::f16(bytes)),
              std::bit_cast<uint32_t>(fp::f16_to_f32(static_cast<uint16_t>(h))))
        << "half 0x" << std::hex << h;
  }
#else
  GTEST_SKIP() << "no AVX2/F16C in this build";
#endif
}

// Every 16-bit pattern (plus a 3-element tail) through the f16 / bf16 row decoders vs the scalar helpers.
TEST(DecodeSimd, PlainHalfTypesAllBitPatterns) {
  constexpr int64_t kCols = 65536 + 3;
  std::vector<uint8_t> bytes(2 * kCols);
  for (int64_t i = 0; i < kCols; ++i) {
    bytes[2 * i] = static_cast<uint8_t>(i & 0xFF);
    bytes[2 * i + 1] = static_cast<uint8_t>((i >> 8) & 0xFF);
  }
  for (TypeId type : {TypeId::f16, TypeId::bf16}) {
    TensorView v;
    v.type = type;
    v.n_rows = 1;
    v.n_cols = kCols;
    v.row_bytes = bytes.size();
    v.data = bytes;
    std::vector<float> got(kCols), want(kCols);
    ASSERT_TRUE(decode_rows(v, 0, 1, got.data()).ok());
    for (int64_t i = 0; i < kCols; ++i) {
      const uint16_t h = fp::load_u16(bytes.data() + 2 * i);
      want[i] = type == TypeId::f16 ? fp::f16_to_f32(h) : fp::bf16_to_f32(h);
    }
    EXPECT_EQ(first_difference(got, want), -1) << type_info(type).name;
  }
}

TEST(DecodeSimd, BlockKernelsEqualScalar) {
  const std::map<std::string, std::vector<int>> f16_fields = {
      {"q4_0", {0}}, {"q8_0", {0}}, {"q4_k", {0, 2}}, {"q6_k", {208}}};
  std::vector<decode::BlockKernelPair> pairs;
  for (const auto& p : decode::legacy_vector_kernels()) pairs.push_back(p);
  for (const auto& p : decode::kquant_vector_kernels()) pairs.push_back(p);
#if defined(AKVIEW_DECODE_AVX2)
  ASSERT_EQ(pairs.size(), 4u);
#endif
  if (pairs.empty())
    GTEST_SKIP() << "no vector kernels in this build (not built with AKVIEW_DECODE_AVX2): nothing to compare";
  std::mt19937_64 rng(7);
  for (const auto& k : pairs) {
    SCOPED_TRACE(k.name);
    ASSERT_TRUE(f16_fields.count(k.name));
    constexpr int kBlocks = 4000;
    std::vector<uint8_t> blocks(kBlocks * k.block_bytes);
    for (auto& x : blocks) x = static_cast<uint8_t>(rng());
    for (int i = 0; i < kBlocks; ++i)
      for (int off : f16_fields.at(k.name)) {
        if (rng() % 2) continue;   // half the fields stay random bits
        const uint16_t h = kSpecialHalves[rng() % std::size(kSpecialHalves)];
        blocks[i * k.block_bytes + off] = static_cast<uint8_t>(h & 0xFF);
        blocks[i * k.block_bytes + off + 1] = static_cast<uint8_t>(h >> 8);
      }
    std::vector<float> want(kBlocks * k.block_elems), got(kBlocks * k.block_elems);
    for (int i = 0; i < kBlocks; ++i) {
      // each block decoded from its own exact-size copy, so ASan sees any read past the block
      std::vector<uint8_t> one(blocks.begin() + i * k.block_bytes, blocks.begin() + (i + 1) * k.block_bytes);
      k.scalar(one.data(), want.data() + i * k.block_elems);
      k.vector(one.data(), got.data() + i * k.block_elems);
    }
    const long at = first_difference(got, want);
    EXPECT_EQ(at, -1) << "block " << (at / static_cast<long>(k.block_elems)) << " element "
                      << (at % static_cast<long>(k.block_elems));
  }
}

TEST(DecodeSimd, AffineGroupKernelsEqualScalar) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> uni(-4.0f, 4.0f);
  auto param = [&]() -> float {
    if (rng() % 2) return uni(rng);
    return std::bit_cast<float>(kSpecialFloats[rng() % std::size(kSpecialFloats)]);
  };
  const auto pairs = decode::affine_vector_kernels();
#if defined(AKVIEW_DECODE_AVX2)
  ASSERT_EQ(pairs.size(), 2u);
#endif
  if (pairs.empty())
    GTEST_SKIP() << "no vector kernels in this build (not built with AKVIEW_DECODE_AVX2): nothing to compare";
  for (const auto& k : pairs) {
    for (size_t n : {8, 16, 24, 32, 40, 56, 64, 96, 128, 136}) {
      SCOPED_TRACE(std::to_string(k.bits) + " bits, group " + std::to_string(n));
      for (int trial = 0; trial < 300; ++trial) {
        std::vector<uint8_t> packed(n * k.bits / 8);   // exact size: ASan sees any overread
        for (auto& x : packed) x = static_cast<uint8_t>(rng());
        const float s = param(), b = param();
        std::vector<float> want(n), got(n);
        k.scalar(packed.data(), n, s, b, want.data());
        k.vector(packed.data(), n, s, b, got.data());
        ASSERT_EQ(first_difference(got, want, true), -1)
            << "s bits 0x" << std::hex << std::bit_cast<uint32_t>(s) << " b bits 0x" << std::bit_cast<uint32_t>(b);
      }
    }
  }
}

}   // namespace
}   // namespace akview
