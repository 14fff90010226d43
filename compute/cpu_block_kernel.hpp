// The generic fused kernel: decode one block into a stack buffer, then multiply-add it with x.
// Used for types whose decode is branchy (q5_x, q2_k, q3_k, ...) and as the portable path.
#pragma once

#include <algorithm>

#include "compute/cpu_kernels.hpp"
#include "compute/cpu_simd.hpp"

namespace akview::compute {

// kvalues_iq4nl (FORMATS.md §2.7), shared by iq4_nl and iq4_xs.
inline constexpr int8_t kIq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

#if AKVIEW_CPU_AVX2
// 16 bytes of iq4 codes -> the 32 values of one 32-element block times dl, with one byte shuffle
// per nibble half; out must be 32-byte aligned (block_rows' buffer).
inline void iq4_lookup32(const uint8_t* __restrict qs, float dl, float* __restrict out) {
  const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nl));
  const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)), m = _mm_set1_epi8(0x0F);
  const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(q, m));
  const __m128i hi = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(q, 4), m));
  const __m256 d = _mm256_set1_ps(dl);
  _mm256_store_ps(out, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo))));
  _mm256_store_ps(out + 8, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)))));
  _mm256_store_ps(out + 16, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi))));
  _mm256_store_ps(out + 24, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)))));
}
#endif

#if AKVIEW_CPU_AVX512
// The 16 iq4 values as floats, and 16 codes (bytes of `codes`, low 4 bits) -> their values: one
// vpmovzxbd + one vpermps, exact.
inline __m512 iq4_table() { return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nl)))); }
inline __m512 iq4_values16(__m128i codes, __m512 table) { return _mm512_permutexvar_ps(_mm512_cvtepu8_epi32(codes), table); }
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

using BlockDecodeFn = void (*)(const uint8_t* block, float* out);

// Blocks are decoded kBatch at a time (>= 256 values) before the dot reads them: reading a vector
// right after the scalar stores that wrote it stalls on store forwarding, and that stall, not the
// decode, was what bounded these kernels.
template <int QK, int kBlockBytes, BlockDecodeFn Decode>
void block_rows(const CpuArgs& a, int64_t r0, int64_t r1, float* y) {
  static_assert(QK % 16 == 0);
  constexpr int64_t kBatch = QK >= 256 ? 1 : 256 / QK;
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / QK;
  alignas(64) float buf[QK * kBatch];
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
#if AKVIEW_CPU_AVX2
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    for (int64_t b0 = 0; b0 < nb; b0 += kBatch) {
      const int64_t n = std::min<int64_t>(kBatch, nb - b0);
      for (int64_t i = 0; i < n; ++i) Decode(row + (b0 + i) * kBlockBytes, buf + i * QK);
      const float* xb = a.x + b0 * QK;
      for (int64_t k = 0; k < n * QK; k += 16) {
        s0 = _mm256_fmadd_ps(_mm256_load_ps(buf + k), _mm256_loadu_ps(xb + k), s0);
        s1 = _mm256_fmadd_ps(_mm256_load_ps(buf + k + 8), _mm256_loadu_ps(xb + k + 8), s1);
      }
    }
    y[r] = simd::hsum(_mm256_add_ps(s0, s1));
#else
    float acc = 0;
    for (int64_t b0 = 0; b0 < nb; b0 += kBatch) {
      const int64_t n = std::min<int64_t>(kBatch, nb - b0);
      for (int64_t i = 0; i < n; ++i) Decode(row + (b0 + i) * kBlockBytes, buf + i * QK);
      acc += simd::dot_f32(buf, a.x + b0 * QK, n * QK);
    }
    y[r] = acc;
#endif
  }
}

}  // namespace akview::compute
