// Centred groups for the cpu kernels of types with a bias or min (MLX affine, q4_1, q5_1, q2_k,
// q4_k, q5_k): a group's w = s*q + b is summed as s*sum((q - k) x) + (s*k + b)*sum(x), k the code
// nearest the group's zero, so that rows whose terms cancel stay within the per-row error bound.
//
// Why: the plain factorised s*sum(q x) + b*sum(x) holds two terms as large as |s q| |x| that cancel
// where s*q + b ~ 0, and their f32 rounding then exceeds the per-row bound 1e-5 * sum|w x|. With
// k = round(-b/s) clamped to [0, top], every element has |s*(q-k)| <= 2|w| and |s*k + b| <= |w|
// (interior k: |s*k + b| <= |s|/2 while |w| >= |s|/2 off the zero code; clamped k: both terms share
// w's sign), so neither term outgrows sum|w x| and f32 sums keep f32 accuracy. s*k + b is one fma,
// rounded once. A k off by one (an approximate division) only loosens the constants.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "compute/cpu_simd.hpp"

namespace akview::compute {

struct CentredGroup {
  float k = 0;      // the code subtracted from every code of the group
  float bias = 0;   // s*k + b
};

inline CentredGroup centre_group(float s, float b, int top) {
  float k = std::nearbyint(-b / s);
  if (!(k > 0)) k = 0;   // also s == 0 and NaN
  k = std::min(k, static_cast<float>(top));
  return {k, std::fma(s, k, b)};
}

#if AKVIEW_CPU_AVX2
// 8 groups in registers (scales s, biases b): sets k as centre_group does, up to the approximate
// reciprocal (vrcpps, 2^-11 relative: k can be the neighbour of the nearest code only where -b/s
// lies within 0.02 * top/31 of a half, which keeps |s*k + b| <= 0.52 |s| for codes up to 31 and
// within one step above), and returns s*k + b. max() gives 0 for the NaN of s = 0.
inline __m256 centre8(__m256 s, __m256 b, int top, __m256& k) {
  const __m256 zero = _mm256_setzero_ps();
  const __m256 q = _mm256_round_ps(_mm256_mul_ps(_mm256_sub_ps(zero, b), _mm256_rcp_ps(s)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  k = _mm256_min_ps(_mm256_max_ps(q, zero), _mm256_set1_ps(static_cast<float>(top)));
  return _mm256_fmadd_ps(s, k, b);
}
#endif

// A row's groups at once (s, b: n scales and biases): k[g] and bias[g] as centre_group gives them,
// up to the approximate reciprocal (centre8; on AVX-512 see centre_block). Done before the row's dot loop:
// a division per group inside it sits on the path to the group's first multiply.
inline void centre_groups(const float* s, const float* b, int64_t n, int top, float* k, float* bias) {
  int64_t g = 0;
#if AKVIEW_CPU_AVX512
  const __m512 zero = _mm512_setzero_ps(), topv = _mm512_set1_ps(static_cast<float>(top));
  for (; g + 16 <= n; g += 16) {
    const __m512 s16 = _mm512_loadu_ps(s + g), b16 = _mm512_loadu_ps(b + g);
    const __m512 q = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_sub_ps(zero, b16), _mm512_rcp14_ps(s16)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 kg = _mm512_min_ps(_mm512_max_ps(q, zero), topv);   // max() gives 0 for a NaN
    _mm512_storeu_ps(k + g, kg);
    _mm512_storeu_ps(bias + g, _mm512_fmadd_ps(s16, kg, b16));
  }
#elif AKVIEW_CPU_AVX2
  for (; g + 8 <= n; g += 8) {
    __m256 kg;
    _mm256_storeu_ps(bias + g, centre8(_mm256_loadu_ps(s + g), _mm256_loadu_ps(b + g), top, kg));
    _mm256_storeu_ps(k + g, kg);
  }
#endif
  for (; g < n; ++g) {
    const CentredGroup c = centre_group(s[g], b[g], top);
    k[g] = c.k;
    bias[g] = c.bias;
  }
}

// The same for kernels that centre every 32-element block: an approximate reciprocal (AVX-512
// rcp14, 2^-14 relative) instead of a division; k can then be the neighbour of the nearest code
// only where -b/s lies within 0.002 of a half, which keeps |s*k + b| <= 0.51 |s|.
inline CentredGroup centre_block(float s, float b, int top) {
#if AKVIEW_CPU_AVX512
  float k = std::nearbyint(-b * _mm_cvtss_f32(_mm_rcp14_ss(_mm_setzero_ps(), _mm_set_ss(s))));
  if (!(k > 0)) k = 0;
  k = std::min(k, static_cast<float>(top));
  return {k, std::fma(s, k, b)};
#else
  return centre_group(s, b, top);
#endif
}

}   // namespace akview::compute
