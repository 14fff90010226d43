// The generic fused kernel: decode one block into a stack buffer, then multiply-add it with x.
// Used for types whose decode is branchy (q5_x, q2_k, q3_k, ...) and as the portable path.
#pragma once

#include "compute/cpu_kernels.hpp"
#include "compute/cpu_simd.hpp"

namespace akview::compute {

using BlockDecodeFn = void (*)(const uint8_t* block, float* out);

template <int QK, int kBlockBytes, BlockDecodeFn Decode>
void block_rows(const CpuArgs& a, int64_t r0, int64_t r1, float* y) {
  static_assert(QK % 16 == 0);
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / QK;
  alignas(64) float buf[QK];
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
#if AKVIEW_CPU_AVX2
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      Decode(row + b * kBlockBytes, buf);
      const float* xb = a.x + b * QK;
      for (int k = 0; k < QK; k += 16) {
        s0 = _mm256_fmadd_ps(_mm256_load_ps(buf + k), _mm256_loadu_ps(xb + k), s0);
        s1 = _mm256_fmadd_ps(_mm256_load_ps(buf + k + 8), _mm256_loadu_ps(xb + k + 8), s1);
      }
    }
    y[r] = simd::hsum(_mm256_add_ps(s0, s1));
#else
    float acc = 0;
    for (int64_t b = 0; b < nb; ++b) {
      Decode(row + b * kBlockBytes, buf);
      acc += simd::dot_f32(buf, a.x + b * QK, QK);
    }
    y[r] = acc;
#endif
  }
}

}  // namespace akview::compute
