// ggml's first-generation block quants: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1 and the new Q1_0, Q2_0.
// FORMATS.md §2.7; the float operations follow dequantize_row_* in ggml-quants.c, in the same order
// (int code -> float, times d, plus m), so results are bit-identical to ggml and gguf-py.
#include "core/decode/decoders.hpp"
#include "core/decode/float_formats.hpp"
#include "core/decode/simd.hpp"

namespace akview::decode {
namespace {

using fp::f16_to_f32;
using fp::load_u16;
using fp::load_u32;

// Q4_0 (32 elements, 18 bytes)
//   +0 f16 d | +2 u8 qs[16]
//   element j = low nibble of qs[j], element j+16 = high nibble; y = (q - 8) * d
void q4_0_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  const uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>((qs[j] & 0x0F) - 8) * d;
    y[j + 16] = static_cast<float>((qs[j] >> 4) - 8) * d;
  }
}

// Q4_1 (32, 20 bytes)
//   +0 f16 d | +2 f16 m | +4 u8 qs[16]      y = q * d + m
void q4_1_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  const float m = f16_to_f32(load_u16(b + 2));
  const uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>(qs[j] & 0x0F) * d + m;
    y[j + 16] = static_cast<float>(qs[j] >> 4) * d + m;
  }
}

// Q5_0 (32, 22 bytes)
//   +0 f16 d | +2 u8 qh[4] (LE u32: bit j = 5th bit of element j) | +6 u8 qs[16]
//   y = (q5 - 16) * d
void q5_0_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  const uint32_t qh = load_u32(b + 2);
  const uint8_t* qs = b + 6;
  for (int j = 0; j < 16; ++j) {
    const int h0 = static_cast<int>((qh >> j) << 4 & 0x10);
    const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10);
    y[j] = static_cast<float>(((qs[j] & 0x0F) | h0) - 16) * d;
    y[j + 16] = static_cast<float>(((qs[j] >> 4) | h1) - 16) * d;
  }
}

// Q5_1 (32, 24 bytes)
//   +0 f16 d | +2 f16 m | +4 u8 qh[4] | +8 u8 qs[16]      y = q5 * d + m
void q5_1_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  const float m = f16_to_f32(load_u16(b + 2));
  const uint32_t qh = load_u32(b + 4);
  const uint8_t* qs = b + 8;
  for (int j = 0; j < 16; ++j) {
    const int h0 = static_cast<int>((qh >> j) << 4 & 0x10);
    const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10);
    y[j] = static_cast<float>((qs[j] & 0x0F) | h0) * d + m;
    y[j + 16] = static_cast<float>((qs[j] >> 4) | h1) * d + m;
  }
}

// Q8_0 (32, 34 bytes)
//   +0 f16 d | +2 i8 qs[32]      y = q * d
void q8_0_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
}

// Q8_1 (32, 36 bytes), an intermediate type with no ggml dequantizer: y = q * d (s is ignored)
//   +0 f16 d | +2 f16 s (= d * sum q) | +4 i8 qs[32]
void q8_1_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(static_cast<int8_t>(b[4 + j])) * d;
}

// Q1_0 (128, 18 bytes)
//   +0 f16 d | +2 u8 qs[16]: bit j%8 of qs[j/8]; y = bit ? d : -d
void q1_0_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  const float neg_d = -d;
  for (int j = 0; j < 128; ++j) y[j] = ((b[2 + j / 8] >> (j % 8)) & 1) ? d : neg_d;
}

// Q2_0 (64, 18 bytes)
//   +0 f16 d | +2 u8 qs[16]: bits 2(j%4)..+1 of qs[j/4]; y = (q - 1) * d  (00=-1 01=0 10=+1 11=+2)
void q2_0_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  for (int j = 0; j < 64; ++j) y[j] = static_cast<float>(((b[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
}

#if defined(AKVIEW_DECODE_AVX2)
// AVX2 / AVX-512 forms of Q4_0 and Q8_0: the same (float)code * d per element, 8 elements per instruction.
// (GCC vectorises the scalar Q4_0 loop across blocks instead, with 18-byte strided accesses.)
void q4_0_block_avx2(const uint8_t* __restrict b, float* __restrict y) {
  const float d = simd::f16(b);
  const __m128i q = simd::load16(b + 2), eight = _mm_set1_epi8(8);
  simd::mul_i8x16(_mm_sub_epi8(simd::low_nibbles(q), eight), d, y);         // elements 0..15
  simd::mul_i8x16(_mm_sub_epi8(simd::high_nibbles(q), eight), d, y + 16);   // elements 16..31
}
void q8_0_block_avx2(const uint8_t* __restrict b, float* __restrict y) {
  const float d = simd::f16(b);
  simd::mul_i8x16(simd::load16(b + 2), d, y);
  simd::mul_i8x16(simd::load16(b + 18), d, y + 16);
}
constexpr BlockKernelPair kVectorKernels[] = {
    {"q4_0", 32, 18, q4_0_block, q4_0_block_avx2},
    {"q8_0", 32, 34, q8_0_block, q8_0_block_avx2},
};
#endif

}   // namespace

std::span<const BlockKernelPair> legacy_vector_kernels() {
#if defined(AKVIEW_DECODE_AVX2)
  return kVectorKernels;
#else
  return {};
#endif
}

void decode_q4_0(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::q4_0, AKV_BEST_BLOCK(q4_0_block, q4_0_block_avx2)>(v, b, e, o);
}
void decode_q8_0(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::q8_0, AKV_BEST_BLOCK(q8_0_block, q8_0_block_avx2)>(v, b, e, o);
}

void decode_q4_1(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::q4_1, q4_1_block>(v, b, e, o);
}
void decode_q5_0(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::q5_0, q5_0_block>(v, b, e, o);
}
void decode_q5_1(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::q5_1, q5_1_block>(v, b, e, o);
}
void decode_q8_1(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::q8_1, q8_1_block>(v, b, e, o);
}
void decode_q1_0(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::q1_0, q1_0_block>(v, b, e, o);
}
void decode_q2_0(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::q2_0, q2_0_block>(v, b, e, o);
}

}   // namespace akview::decode
