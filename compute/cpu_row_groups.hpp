// Shared by the multi-row cpu kernels: the row-group driver, and the IQ4 value lookup that the
// iq4_nl / iq4_xs kernels (and q4_0 / q4_1 with a linear table) use.
#pragma once

#include "compute/cpu_kernels.hpp"
#include "compute/cpu_simd.hpp"
#include "core/decode/iq_grids.hpp"

namespace akview::compute {

#if AKVIEW_CPU_AVX2
// The 16 iq4 values as bytes, in both 128-bit lanes (a vpshufb table).
inline __m256i iq4_bytes() {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(decode::iq::kIq4nlValues)));
}
#endif
#if AKVIEW_CPU_AVX512
// The 16 iq4 values as floats, and 16 codes (bytes of `codes`, low 4 bits) -> their values: one
// vpmovzxbd + one vpermps, exact.
inline __m512 iq4_table() {
  return _mm512_cvtepi32_ps(
      _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(decode::iq::kIq4nlValues))));
}
inline __m512 iq4_values16(__m128i codes, __m512 table) {
  return _mm512_permutexvar_ps(_mm512_cvtepu8_epi32(codes), table);
}
// One 32-element iq4 block (16 bytes at q) times x, into acc, scaled by dl.
inline __m512 iq4_block32(const uint8_t* q, const float* x, float dl, __m512 table, __m512 acc) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)), m4 = _mm_set1_epi8(0x0F);
  __m512 t = _mm512_mul_ps(iq4_values16(_mm_and_si128(v, m4), table), _mm512_loadu_ps(x));
  t = _mm512_fmadd_ps(iq4_values16(_mm_and_si128(_mm_srli_epi16(v, 4), m4), table), _mm512_loadu_ps(x + 16), t);
  return _mm512_fmadd_ps(t, _mm512_set1_ps(dl), acc);
}
#endif

// Row-group driver: KR computes rows r..r+R-1 in one pass (the rows share each x load and the
// per-block constants), K1 one row; rows_by runs KR over the range and K1 over the remainder.
using RowGroupFn = void (*)(const CpuArgs& a, int64_t r, float* y);
template <int R, RowGroupFn KR, RowGroupFn K1>
void rows_by(const CpuArgs& a, int64_t r0, int64_t r1, float* y) {
  int64_t r = r0;
  for (; r + R <= r1; r += R) KR(a, r, y);
  for (; r < r1; ++r) K1(a, r, y);
}

}   // namespace akview::compute
