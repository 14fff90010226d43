// Internal to core/decode: the AVX2 building blocks of the vectorised decoders, and the pairs
// (scalar reference, vector kernel) that tests/decode/simd_test.cpp checks bit for bit.
// The vector kernels perform the scalar formula's float32 operations in the same order per element
// (int code -> float, then the same mul / mul-then-sub / mul-then-add); core/decode is compiled
// with -ffp-contract=off, so no FMA is formed. The scalar decoders stay the reference and the
// fallback for builds without AVX2/F16C.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/decode/decoders.hpp"
#include "core/decode/float_formats.hpp"

#if defined(__AVX2__) && defined(__F16C__)
#define AKVIEW_DECODE_AVX2 1
#include <immintrin.h>
// The block decoder a build uses: the vector kernel when it has one, else the scalar reference
// (the vector name is dropped unseen where it is not compiled).
#define AKV_BEST_BLOCK(scalar, vector) vector
#else
#define AKV_BEST_BLOCK(scalar, vector) scalar
#endif

namespace akview::decode {

struct BlockKernelPair {
  const char* name;
  size_t block_elems, block_bytes;
  BlockDecoder scalar, vector;
};
using AffineGroupFn = void (*)(const uint8_t* p, size_t n, float s, float b, float* y);
struct AffineKernelPair {
  int bits;
  AffineGroupFn scalar, vector;
};

// Empty spans when the build has no vector kernels.
std::span<const BlockKernelPair> legacy_vector_kernels();    // decode_legacy_quants.cpp
std::span<const BlockKernelPair> kquant_vector_kernels();    // decode_kquants.cpp
std::span<const AffineKernelPair> affine_vector_kernels();   // decode_mlx.cpp

#if defined(AKVIEW_DECODE_AVX2)
namespace simd {

// f16 field -> float32 with vcvtph2ps: exact, equal to fp::f16_to_f32 for all 65536 inputs (tested).
inline float f16(const uint8_t* p) { return _cvtsh_ss(fp::load_u16(p)); }
inline __m128i load16(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
inline __m128i load8(const uint8_t* p) { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)); }
// The low / high 8 bytes of v as 8 floats (signed or unsigned codes).
inline __m256 i8_lo(__m128i v) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v)); }
inline __m256 i8_hi(__m128i v) { return i8_lo(_mm_unpackhi_epi64(v, v)); }
inline __m256 u8_lo(__m128i v) { return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v)); }
inline __m256 u8_hi(__m128i v) { return u8_lo(_mm_unpackhi_epi64(v, v)); }
inline __m128i low_nibbles(__m128i v) { return _mm_and_si128(v, _mm_set1_epi8(0x0F)); }
inline __m128i high_nibbles(__m128i v) { return _mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi8(0x0F)); }

// 16 codes (the 16 bytes of q, signed or unsigned) -> 16 floats y[0..16), per element exactly
//   mul:     (float)q * d                mulsub:  d * (float)q - m        muladd:  s * (float)q + b
// One 512-bit conversion where AVX-512 is there, two 256-bit ones otherwise (or with
// -DAKVIEW_DECODE_AVX2_ONLY, to test / time the AVX2 form on an AVX-512 machine).
#if defined(__AVX512F__) && !defined(AKVIEW_DECODE_AVX2_ONLY)
// (the all-ones maskz forms compile to the plain instructions and avoid GCC 12's false
// -Wuninitialized on the _mm512_undefined_* operand of the unmasked intrinsics)
inline __m512 i8x16(__m128i q) { return _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_maskz_cvtepi8_epi32(0xFFFF, q)); }
inline __m512 u8x16(__m128i q) { return _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_maskz_cvtepu8_epi32(0xFFFF, q)); }
inline void mul_i8x16(__m128i q, float d, float* y) { _mm512_storeu_ps(y, _mm512_mul_ps(i8x16(q), _mm512_set1_ps(d))); }
inline void mulsub_u8x16(__m128i q, float d, float m, float* y) {
  _mm512_storeu_ps(y, _mm512_sub_ps(_mm512_mul_ps(_mm512_set1_ps(d), u8x16(q)), _mm512_set1_ps(m)));
}
inline void muladd_u8x16(__m128i q, float s, float b, float* y) {
  _mm512_storeu_ps(y, _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(s), u8x16(q)), _mm512_set1_ps(b)));
}
// A 4-bit code's 16 values d * (float)q - m as one register, and 16 codes (bytes 0..15) looked up in
// it: the same float operations as mulsub_u8x16 per element, done once per level instead of once per
// value (a widening and a permute a value instead of a widening, a conversion, a mul and a sub).
#define AKVIEW_DECODE_LEVEL_TABLE 1
inline __m512 mulsub_levels(float d, float m) {
  const __m512 levels = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  return _mm512_sub_ps(_mm512_mul_ps(_mm512_set1_ps(d), levels), _mm512_set1_ps(m));
}
inline void lookup_u4x16(__m128i q, __m512 table, float* y) {
  _mm512_storeu_ps(y, _mm512_maskz_permutexvar_ps(0xFFFF, _mm512_maskz_cvtepu8_epi32(0xFFFF, q), table));
}
#else
inline void mul_i8x16(__m128i q, float d, float* y) {
  const __m256 vd = _mm256_set1_ps(d);
  _mm256_storeu_ps(y, _mm256_mul_ps(i8_lo(q), vd));
  _mm256_storeu_ps(y + 8, _mm256_mul_ps(i8_hi(q), vd));
}
inline void mulsub_u8x16(__m128i q, float d, float m, float* y) {
  const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
  _mm256_storeu_ps(y, _mm256_sub_ps(_mm256_mul_ps(vd, u8_lo(q)), vm));
  _mm256_storeu_ps(y + 8, _mm256_sub_ps(_mm256_mul_ps(vd, u8_hi(q)), vm));
}
inline void muladd_u8x16(__m128i q, float s, float b, float* y) {
  const __m256 vs = _mm256_set1_ps(s), vb = _mm256_set1_ps(b);
  _mm256_storeu_ps(y, _mm256_add_ps(_mm256_mul_ps(vs, u8_lo(q)), vb));
  _mm256_storeu_ps(y + 8, _mm256_add_ps(_mm256_mul_ps(vs, u8_hi(q)), vb));
}
#endif

}   // namespace simd
#endif

}   // namespace akview::decode
