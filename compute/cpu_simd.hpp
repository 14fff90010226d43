// Small SIMD helpers shared by the cpu kernels: f16/bf16 scalars, horizontal sums and an f32 dot.
// AVX2 + FMA + F16C when the build has them (-march=native), portable loops otherwise.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define AKVIEW_CPU_AVX2 1
#else
#define AKVIEW_CPU_AVX2 0
#endif
// AVX-512F doubles the lanes of the compute-bound kernels (q8_0, q4_k, q6_k, 4/8-bit affine).
#if AKVIEW_CPU_AVX2 && defined(__AVX512F__)
#define AKVIEW_CPU_AVX512 1
// GCC 12's avx512fintrin.h passes an undefined vector as the unused merge source of the
// conversions, which -Wmaybe-uninitialized reports at every inlined use (a known false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#else
#define AKVIEW_CPU_AVX512 0
#endif

// Fully unrolls a short loop over rows or halves: the per-row accumulators then stay in registers
// (GCC keeps `__m512 acc[R]` indexed by a rolled loop in memory, and each block's update then
// waits on a store-forward).
#define AKV_UNROLL _Pragma("GCC unroll 8")

namespace akview::compute::simd {

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline float f16_to_f32(uint16_t h) {
#if AKVIEW_CPU_AVX2
  return _cvtsh_ss(h);
#else
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {   // subnormal: renormalise
      exp = 127 - 15 + 1;
      while (!(man & 0x400)) {
        man <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
#endif
}
inline float bf16_to_f32(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline float load_f16(const uint8_t* p) { return f16_to_f32(load_u16(p)); }
inline float load_bf16(const uint8_t* p) { return bf16_to_f32(load_u16(p)); }
inline float load_f32(const uint8_t* p) {
  float f;
  std::memcpy(&f, p, 4);
  return f;
}

#if AKVIEW_CPU_AVX2
inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
// 8 unsigned bytes -> 8 floats / 8 signed bytes -> 8 floats / 8 unsigned bytes -> 8 int32
inline __m256i u8x8_to_i32(const uint8_t* p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline __m256i i8x8_to_i32(const uint8_t* p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
#endif
#if AKVIEW_CPU_AVX512
// 16 unsigned / signed bytes -> 16 int32 lanes
inline __m512i u8x16_to_i32(const uint8_t* p) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline float hsum512(__m512 v) {
  const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
  return hsum(_mm256_add_ps(_mm512_castps512_ps256(v), hi));
}
inline __m512i i8x16_to_i32(const uint8_t* p) {
  return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
#endif

// Software prefetch of the bytes [p, p + n) some distance ahead of a row stream: one thread reading
// a row from DRAM stalls on the hardware prefetcher, and the row kernels are compute-heavy enough
// that the loads do not overlap otherwise (1 thread: in-cache rate ~1.7x the from-memory rate).
inline void prefetch_span(const uint8_t* p, int n) {
#if AKVIEW_CPU_AVX2
  for (int k = 0; k < n; k += 64) _mm_prefetch(reinterpret_cast<const char*>(p + k), _MM_HINT_T0);
#else
  (void)p;
  (void)n;
#endif
}

// sum_j a[j] * b[j] in float with several accumulators.
inline float dot_f32(const float* a, const float* b, int64_t n) {
  int64_t j = 0;
  float tail = 0;
#if AKVIEW_CPU_AVX2
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  for (; j + 32 <= n; j += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + j + 8), _mm256_loadu_ps(b + j + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + j + 16), _mm256_loadu_ps(b + j + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + j + 24), _mm256_loadu_ps(b + j + 24), s3);
  }
  for (; j + 8 <= n; j += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j), s0);
  tail = hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
#endif
  float acc[8] = {};
  for (; j + 8 <= n; j += 8)
    for (int k = 0; k < 8; ++k) acc[k] += a[j + k] * b[j + k];
  for (; j < n; ++j) tail += a[j] * b[j];
  for (float v : acc) tail += v;
  return tail;
}

}   // namespace akview::compute::simd

// AVX-512 with byte ops (BW) and byte permutes (VBMI): codes are unpacked 64 at a time with byte
// ops, then each run of 16 is placed into the top byte of 16 dword lanes by one vpermb, so one
// vcvtdq2ps gives code * 2^24 (signed); kernels fold 2^-24 into their scales.
#if AKVIEW_CPU_AVX512 && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VBMI__)
#define AKVIEW_CPU_VBMI 1
#else
#define AKVIEW_CPU_VBMI 0
#endif

namespace akview::compute::simd {

#if AKVIEW_CPU_VBMI
inline constexpr float kTop = 1.0f / 16777216.0f;   // 2^-24
// Index vector for run k (bytes 16k..16k+15) into the top byte of each dword.
inline __m512i top_index(int k) {
  const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  return _mm512_slli_epi32(_mm512_add_epi32(iota, _mm512_set1_epi32(16 * k)), 24);
}
struct TopIdx {
  __m512i k[4] = {top_index(0), top_index(1), top_index(2), top_index(3)};
};
// bytes 16k..16k+15 of v (signed) -> 16 floats, each byte * 2^24.
inline __m512 top_f32(__m512i v, __m512i idx) {
  return _mm512_cvtepi32_ps(_mm512_maskz_permutexvar_epi8(0x8888888888888888ull, idx, v));
}
// 16-bit word shift counts: `lo` for the low 256 bits, `hi` for the high 256 bits.
inline __m512i counts2(int lo, int hi) {
  return _mm512_inserti64x4(_mm512_set1_epi16(static_cast<short>(lo)), _mm256_set1_epi16(static_cast<short>(hi)), 1);
}
// "One-plus" floats: a code c of up to 4 (5, 6) bits stored as the byte (c << 3) | 0x80 ((c << 2),
// (c << 1) | 0x80) and placed into byte 2 of a dword whose other bytes are those of 1.0f
// (0x3F800000) is exactly the float 1 + c/16 (1 + c/32, 1 + c/64): one masked vpermb turns 16 codes
// into floats with no vcvtdq2ps. Kernels subtract the one_plus of the group's centre code k (1 +
// k/16, exact) before the multiply (cpu_centre.hpp): removing the 1 afterwards through the sums of
// x (16 sum((1 + c/16) x) - 16 sum(x)) cancels two large terms and missed the per-row bound by
// up to 400x on rows whose weights are mostly zero (tests/compute/edge_rows_test.cpp).
inline __m512i mid_index(int k) {
  const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  return _mm512_slli_epi32(_mm512_add_epi32(iota, _mm512_set1_epi32(16 * k)), 16);
}
struct MidIdx {
  __m512i k[4] = {mid_index(0), mid_index(1), mid_index(2), mid_index(3)};
  __m512i one = _mm512_set1_epi32(0x3F800000);
};
// bytes 16k..16k+15 of v (prepared as above) -> 16 floats 1 + c/16 (or 1 + c/64).
inline __m512 one_plus(__m512i v, __m512i idx, __m512i one) {
  return _mm512_castsi512_ps(_mm512_mask_permutexvar_epi8(one, 0x4444444444444444ull, idx, v));
}
// (a & b) | c, one vpternlogd.
inline __m512i and_or(__m512i a, __m512i b, __m512i c) { return _mm512_ternarylogic_epi32(a, b, c, 0xEA); }
inline __m512i bcast256(const uint8_t* p) {
  return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline __m512i load512(const uint8_t* p) { return _mm512_loadu_si512(p); }
#endif

}   // namespace akview::compute::simd
