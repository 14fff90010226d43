// cpu kernels for ggml's lattice IQ types whose signs come from 7-bit indices (FORMATS.md §2.7):
//   iq2_xxs [d f16][8 x (4 grid bytes, u32: 4 x 7-bit sign index | 4-bit scale << 28)]
//   iq3_xxs [d f16][qs 64: grid bytes, 2 per 8 elements][8 x u32 as above]
// Per 32 elements: the grid magnitudes are loaded (8 bytes per iq2 index, 4 per iq3 index), the
// four sign bytes (kSignsIq2xs, as the decoder reads them) negate them as bytes, and the signed
// bytes are widened to floats against x; the sub-block's sum is multiplied by its scale
// d * (0.5 + s) * 0.25 (iq3: * 0.5), the decoder's factor.
#include <array>

#include "compute/cpu_row_groups.hpp"
#include "core/decode/iq_grids.hpp"

namespace akview::compute {
namespace {

#if AKVIEW_CPU_AVX512
inline const uint8_t* row_ptr(const TensorView& v, int64_t r) { return v.data.data() + static_cast<uint64_t>(r) * v.row_bytes; }

// The four sign bytes of a sub-block as one 32-bit mask: bit 8l + j flips element 8l + j.
inline uint32_t sign_mask(uint32_t aux) {
  const uint8_t* ks = decode::iq::kSignsIq2xs;
  return uint32_t{ks[aux & 127]} | uint32_t{ks[(aux >> 7) & 127]} << 8 | uint32_t{ks[(aux >> 14) & 127]} << 16 |
         uint32_t{ks[(aux >> 21) & 127]} << 24;
}

// sum over 32 elements of (+-magnitude) * x: magnitudes as 32 bytes, negated where the mask says.
inline __m512 signed_dot32(__m256i mags, uint32_t signs, const float* x) {
  const __m256i v = _mm256_mask_sub_epi8(mags, signs, _mm256_setzero_si256(), mags);
  const __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(v))), _mm512_loadu_ps(x));
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(v, 1))), _mm512_loadu_ps(x + 16), t);
}

// iq2_xxs: 4 grid indices of 8 magnitudes each; iq3_xxs: 8 indices of 4. Scalar loads, not vector
// gathers (microcoded, and slow under the gather-data-sampling mitigation).
template <bool kIq3>
inline __m256i magnitudes(const uint8_t* idx) {
  if constexpr (kIq3) {
    const uint32_t* g = decode::iq::kIq3xxsGrid;
    const __m128i lo = _mm_setr_epi32(static_cast<int>(g[idx[0]]), static_cast<int>(g[idx[1]]), static_cast<int>(g[idx[2]]), static_cast<int>(g[idx[3]]));
    const __m128i hi = _mm_setr_epi32(static_cast<int>(g[idx[4]]), static_cast<int>(g[idx[5]]), static_cast<int>(g[idx[6]]), static_cast<int>(g[idx[7]]));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
  } else {
    const uint64_t* g = decode::iq::kIq2xxsGrid;
    return _mm256_setr_epi64x(static_cast<long long>(g[idx[0]]), static_cast<long long>(g[idx[1]]), static_cast<long long>(g[idx[2]]),
                              static_cast<long long>(g[idx[3]]));
  }
}

template <bool kIq3, int R>
void xxs_n(const CpuArgs& a, int64_t r, float* y) {
  constexpr int kBytes = kIq3 ? 98 : 66;
  constexpr float kHalfOrQuarter = kIq3 ? 0.5f : 0.25f;
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 256;
  __m512 s[R];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) s[i] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = a.x + b * 256;
    AKV_UNROLL
    for (int i = 0; i < R; ++i) {
      const uint8_t* p = row_ptr(v, r + i) + b * kBytes;
      simd::prefetch_span(p + 8 * kBytes, kBytes);
      const float d = simd::load_f16(p);
      for (int ib = 0; ib < 8; ++ib) {
        const uint8_t* idx = p + 2 + 8 * ib;   // both: 8 bytes of grid indices per sub-block (iq2: then its u32)
        const uint32_t aux = simd::load_u32(kIq3 ? p + 66 + 4 * ib : p + 6 + 8 * ib);
        const float db = d * (0.5f + static_cast<float>(aux >> 28)) * kHalfOrQuarter;
        s[i] = _mm512_fmadd_ps(signed_dot32(magnitudes<kIq3>(idx), sign_mask(aux), xb + 32 * ib), _mm512_set1_ps(db), s[i]);
      }
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i) y[r + i] = simd::hsum512(s[i]);
}

constexpr int kR = 2;
constexpr std::array kRows = {
    CpuKernelRow{TypeId::iq2_xxs, &rows_by<kR, &xxs_n<false, kR>, &xxs_n<false, 1>>, nullptr, nullptr, "avx512 x2 rows"},
    CpuKernelRow{TypeId::iq3_xxs, &rows_by<kR, &xxs_n<true, kR>, &xxs_n<true, 1>>, nullptr, nullptr, "avx512 x2 rows"},
};
#else
constexpr std::array<CpuKernelRow, 0> kRows = {};
#endif

}  // namespace

std::span<const CpuKernelRow> cpu_kernels_iquant() { return kRows; }

}  // namespace akview::compute
