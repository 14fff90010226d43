// ggml K-quants: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K (256-element super-blocks). FORMATS.md §2.7;
// float operations in the order of dequantize_row_q*_K (ggml-quants.c): sub-block scale = d * sc,
// then scale * q - min, so results are bit-identical to ggml.
#include "core/decode/decoders.hpp"
#include "core/decode/float_formats.hpp"
#include "core/decode/kquant_scales.hpp"
#include "core/decode/simd.hpp"

namespace akview::decode {
namespace {

using fp::f16_to_f32;
using fp::load_u16;

// Q2_K (256, 84 bytes)
//   +0 u8 scales[16] (low nibble scale, high nibble min, per 16 elements)
//   +16 u8 qs[64] (2-bit codes: byte l of 32-byte half h, shift 2s -> elements h*128 + s*32 + l (+16))
//   +80 f16 d | +82 f16 dmin                y = (d*sc) * q - (dmin*m)
void q2_k_block(const uint8_t* __restrict b, float* __restrict y) {
  const uint8_t* scales = b;
  const uint8_t* q = b + 16;
  const float d = f16_to_f32(load_u16(b + 80));
  const float dmin = f16_to_f32(load_u16(b + 82));
  int is = 0;
  for (int n = 0; n < 256; n += 128) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int half = 0; half < 2; ++half) {
        const uint8_t sc = scales[is++];
        const float dl = d * static_cast<float>(sc & 0xF);
        const float ml = dmin * static_cast<float>(sc >> 4);
        for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<float>((q[l + 16 * half] >> shift) & 3) - ml;
      }
    }
    q += 32;
  }
}

// Q3_K (256, 110 bytes)
//   +0 u8 hmask[32] (bit m of hmask[l]: high bit of a code) | +32 u8 qs[64] (low 2 bits)
//   +96 u8 scales[12] (16 x 6-bit, offset 32) | +108 f16 d
//   y = (d * (s - 32)) * (q2 - (high bit clear ? 4 : 0))
void q3_k_block(const uint8_t* __restrict b, float* __restrict y) {
  const uint8_t* hm = b;
  const uint8_t* q = b + 32;
  int8_t sc[16];
  q3_k_unpack_scales(b + 96, sc);
  const float d = f16_to_f32(load_u16(b + 108));
  int is = 0;
  uint8_t m = 1;
  for (int n = 0; n < 256; n += 128) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int half = 0; half < 2; ++half) {
        const float dl = d * static_cast<float>(sc[is++] - 32);
        for (int l = 0; l < 16; ++l) {
          const int code = ((q[l + 16 * half] >> shift) & 3) - ((hm[l + 16 * half] & m) ? 0 : 4);
          *y++ = dl * static_cast<float>(code);
        }
      }
      m = static_cast<uint8_t>(m << 1);
    }
    q += 32;
  }
}

// Q4_K (256, 144 bytes)
//   +0 f16 d | +2 f16 dmin | +4 u8 scales[12] (8 x (6-bit scale, 6-bit min)) | +16 u8 qs[128]
//   64-element chunk c: low nibbles of qs[32c..32c+31] then high nibbles; y = (d*sc)*q - (dmin*m)
void q4_k_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  const float dmin = f16_to_f32(load_u16(b + 2));
  const uint8_t* scales = b + 4;
  const uint8_t* q = b + 16;
  for (int c = 0; c < 4; ++c) {
    uint8_t sc, mn;
    kquant_scale_min(2 * c, scales, &sc, &mn);
    const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(mn);
    kquant_scale_min(2 * c + 1, scales, &sc, &mn);
    const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(mn);
    for (int l = 0; l < 32; ++l) y[l] = d1 * static_cast<float>(q[l] & 0xF) - m1;
    for (int l = 0; l < 32; ++l) y[l + 32] = d2 * static_cast<float>(q[l] >> 4) - m2;
    y += 64;
    q += 32;
  }
}

// Q5_K (256, 176 bytes)
//   +0 f16 d | +2 f16 dmin | +4 u8 scales[12] | +16 u8 qh[32] | +48 u8 qs[128]
//   like Q4_K, plus bit (2c) / (2c+1) of qh[l] as the 5th bit of the low / high nibble codes
void q5_k_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  const float dmin = f16_to_f32(load_u16(b + 2));
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* ql = b + 48;
  for (int c = 0; c < 4; ++c) {
    uint8_t sc, mn;
    kquant_scale_min(2 * c, scales, &sc, &mn);
    const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(mn);
    kquant_scale_min(2 * c + 1, scales, &sc, &mn);
    const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(mn);
    const int lo_bit = 2 * c, hi_bit = 2 * c + 1;
    for (int l = 0; l < 32; ++l) y[l] = d1 * static_cast<float>((ql[l] & 0xF) + (((qh[l] >> lo_bit) & 1) << 4)) - m1;
    for (int l = 0; l < 32; ++l)
      y[l + 32] = d2 * static_cast<float>((ql[l] >> 4) + (((qh[l] >> hi_bit) & 1) << 4)) - m2;
    y += 64;
    ql += 32;
  }
}

// Q6_K (256, 210 bytes)
//   +0 u8 ql[128] (low 4 bits) | +128 u8 qh[64] (high 2 bits) | +192 i8 scales[16] | +208 f16 d
//   per 128-element half: element l + 32k (k = 0..3) takes ql nibble / qh bit pair k;
//   y = (d*sc)*(q-32), sc = scales[8n + l/16 + 2k] (ggml's d * sc * q, same rounding)
void q6_k_block(const uint8_t* __restrict b, float* __restrict y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const uint8_t* scb = b + 192;
  const float d = f16_to_f32(load_u16(b + 208));
  for (int n = 0; n < 2; ++n) {
    for (int half = 0; half < 2; ++half) {   // elements l in [16*half, 16*half+16) share scales
      float dl[4];
      for (int k = 0; k < 4; ++k) dl[k] = d * static_cast<float>(static_cast<int8_t>(scb[8 * n + half + 2 * k]));
      for (int l = 16 * half; l < 16 * half + 16; ++l) {
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = dl[0] * static_cast<float>(q1);
        y[l + 32] = dl[1] * static_cast<float>(q2);
        y[l + 64] = dl[2] * static_cast<float>(q3);
        y[l + 96] = dl[3] * static_cast<float>(q4);
      }
    }
    y += 128;
    ql += 64;
    qh += 32;
  }
}

// Q8_K (256, 292 bytes)
//   +0 f32 d | +4 i8 qs[256] | +260 i16 bsums[16] (ignored)      y = d * q
void q8_k_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = fp::load_f32(b);
  for (int j = 0; j < 256; ++j) y[j] = d * static_cast<float>(static_cast<int8_t>(b[4 + j]));
}

#if defined(AKVIEW_DECODE_AVX2)
// AVX2 / AVX-512 forms of Q4_K and Q6_K: per-sub-block scalars exactly as above (d * sc, dmin * m), then per
// element the same (d*sc) * q - (dmin*m) / (d*sc) * (q-32), 8 elements per instruction.
void q4_k_block_avx2(const uint8_t* __restrict b, float* __restrict y) {
  const float d = simd::f16(b);
  const float dmin = simd::f16(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* q = b + 16;
#if defined(AKVIEW_DECODE_LEVEL_TABLE)
  // The 8 scales and mins at once, then d * sc and dmin * m for all 8 sub-blocks in two
  // multiplies; each sub-block's 16 values looked up.
  uint64_t sc, mn;
  kquant_scales_mins8(scales, &sc, &mn);
  alignas(32) float ds[8], ms[8];
  _mm256_store_ps(ds, _mm256_mul_ps(_mm256_set1_ps(d), simd::u8_lo(_mm_cvtsi64_si128(static_cast<int64_t>(sc)))));
  _mm256_store_ps(ms, _mm256_mul_ps(_mm256_set1_ps(dmin), simd::u8_lo(_mm_cvtsi64_si128(static_cast<int64_t>(mn)))));
  for (int c = 0; c < 4; ++c) {
    const __m128i q0 = simd::load16(q), q1 = simd::load16(q + 16);
    const __m512 t1 = simd::mulsub_levels(ds[2 * c], ms[2 * c]), t2 = simd::mulsub_levels(ds[2 * c + 1], ms[2 * c + 1]);
    simd::lookup_u4x16(simd::low_nibbles(q0), t1, y);
    simd::lookup_u4x16(simd::low_nibbles(q1), t1, y + 16);
    simd::lookup_u4x16(simd::high_nibbles(q0), t2, y + 32);
    simd::lookup_u4x16(simd::high_nibbles(q1), t2, y + 48);
    y += 64;
    q += 32;
  }
#else
  for (int c = 0; c < 4; ++c) {
    uint8_t sc, mn;
    kquant_scale_min(2 * c, scales, &sc, &mn);
    const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(mn);
    kquant_scale_min(2 * c + 1, scales, &sc, &mn);
    const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(mn);
    const __m128i q0 = simd::load16(q), q1 = simd::load16(q + 16);
    simd::mulsub_u8x16(simd::low_nibbles(q0), d1, m1, y);
    simd::mulsub_u8x16(simd::low_nibbles(q1), d1, m1, y + 16);
    simd::mulsub_u8x16(simd::high_nibbles(q0), d2, m2, y + 32);
    simd::mulsub_u8x16(simd::high_nibbles(q1), d2, m2, y + 48);
    y += 64;
    q += 32;
  }
#endif
}

void q6_k_block_avx2(const uint8_t* __restrict b, float* __restrict y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const uint8_t* scb = b + 192;
  const float d = simd::f16(b + 208);
  const __m128i m30 = _mm_set1_epi8(0x30), k32 = _mm_set1_epi8(32);
  for (int n = 0; n < 2; ++n) {
    for (int half = 0; half < 2; ++half) {   // elements l in [16*half, 16*half+16) share scales
      float dl[4];
      for (int k = 0; k < 4; ++k) dl[k] = d * static_cast<float>(static_cast<int8_t>(scb[8 * n + half + 2 * k]));
      const __m128i l0 = simd::load16(ql + 16 * half), l1 = simd::load16(ql + 32 + 16 * half);
      const __m128i h = simd::load16(qh + 16 * half);
      // 6-bit codes minus 32 (fit int8): low nibble | high bit pair k moved to bits 4-5
      const __m128i q1 =
          _mm_sub_epi8(_mm_or_si128(simd::low_nibbles(l0), _mm_and_si128(_mm_slli_epi16(h, 4), m30)), k32);
      const __m128i q2 =
          _mm_sub_epi8(_mm_or_si128(simd::low_nibbles(l1), _mm_and_si128(_mm_slli_epi16(h, 2), m30)), k32);
      const __m128i q3 = _mm_sub_epi8(_mm_or_si128(simd::high_nibbles(l0), _mm_and_si128(h, m30)), k32);
      const __m128i q4 =
          _mm_sub_epi8(_mm_or_si128(simd::high_nibbles(l1), _mm_and_si128(_mm_srli_epi16(h, 2), m30)), k32);
      float* out = y + 16 * half;
      simd::mul_i8x16(q1, dl[0], out);
      simd::mul_i8x16(q2, dl[1], out + 32);
      simd::mul_i8x16(q3, dl[2], out + 64);
      simd::mul_i8x16(q4, dl[3], out + 96);
    }
    y += 128;
    ql += 64;
    qh += 32;
  }
}

constexpr BlockKernelPair kVectorKernels[] = {
    {"q4_k", 256, 144, q4_k_block, q4_k_block_avx2},
    {"q6_k", 256, 210, q6_k_block, q6_k_block_avx2},
};
#endif

}   // namespace

std::span<const BlockKernelPair> kquant_vector_kernels() {
#if defined(AKVIEW_DECODE_AVX2)
  return kVectorKernels;
#else
  return {};
#endif
}

void decode_q4_k(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::q4_k, AKV_BEST_BLOCK(q4_k_block, q4_k_block_avx2)>(v, b, e, o);
}
void decode_q6_k(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::q6_k, AKV_BEST_BLOCK(q6_k_block, q6_k_block_avx2)>(v, b, e, o);
}

void decode_q2_k(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::q2_k, q2_k_block>(v, b, e, o);
}
void decode_q3_k(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::q3_k, q3_k_block>(v, b, e, o);
}
void decode_q5_k(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::q5_k, q5_k_block>(v, b, e, o);
}
void decode_q8_k(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::q8_k, q8_k_block>(v, b, e, o);
}

}   // namespace akview::decode
