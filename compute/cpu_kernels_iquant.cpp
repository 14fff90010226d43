// cpu kernels for ggml's lattice IQ types (FORMATS.md §2.7), 256-element blocks (an f16 d first, but iq1_m):
//   iq2_xxs [d][8 x (4 grid bytes, u32: 4 x 7-bit sign index | 4-bit scale << 28)]
//   iq2_xs  [d][qs u16 x 32: 9-bit grid index | 7-bit sign index << 9][scales 8: two nibbles]
//   iq2_s   [d][qs 32][signs 32][qh 8: 2 high index bits each][scales 8: two nibbles]
//   iq3_xxs [d][qs 64: grid bytes][8 x u32 as iq2_xxs]
//   iq3_s   [d][qs 64][qh 8: 9th index bit each][signs 32][scales 4: two nibbles]
//   iq1_s   [d][qs 32][qh u16 x 8: 3 high index bits x 4 | scale << 12 | delta sign << 15]
//   iq1_m   [qs 32][qh 16: 3 high index bits + delta sign per 8][scales u16 x 4, d's bits in their tops]
// Per 32 elements (a sub-block) a format gives the 32 grid magnitudes (8 bytes per iq2 index, 4 per
// iq3 index, by scalar loads: vector gathers measured slower), a 32-bit mask of the signs (sign
// bytes, or kSignsIq2xs of 7-bit indices, as the decoder reads them) and the decoder's scale, one
// per sub-block or one per half. With AVX-512 the signed bytes are widened to floats against x and
// each sum is multiplied by its scale; iq1 grids hold values in {-1, 0, 1}, to which a delta of
// +-1/8 is added (exact in floats) before the multiply. With AVX2 the sub-blocks become the signed
// byte codes of the unpacked kernel (cpu_unpacked_rows.hpp); iq1's as 8 * value +- 1, its scales / 8.
#include <array>

#include "compute/cpu_row_groups.hpp"
#include "compute/cpu_unpacked_rows.hpp"
#include "core/decode/iq_grids.hpp"

namespace akview::compute {
namespace {

#if AKVIEW_CPU_AVX2
using simd::load_u16;
using simd::load_u32;
namespace iq = decode::iq;

constexpr float kIq1Delta = 0.125f;
#if AKVIEW_CPU_AVX512
// A sub-block as the kernel takes it: its 32 values as floats (lo: elements 0..15, hi: 16..31) and
// the decoder's scale for each half (equal where the format has one per sub-block).
struct Values32 {
  __m512 lo, hi;
  float db0, db1;
};
// Grid magnitudes (32 bytes) negated where `signs` has a bit.
inline Values32 signed_values(__m256i mags, uint32_t signs, float db0, float db1) {
  const __m256i q = _mm256_mask_sub_epi8(mags, signs, _mm256_setzero_si256(), mags);
  return {_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(q))),
          _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(q, 1))), db0, db1};
}
// iq1: grid values in {-1, 0, 1} (32 signed bytes) plus +-1/8, negative where `minus` has a bit.
inline Values32 delta_values(__m256i grid, uint32_t minus, float db0, float db1) {
  const __m512 plus = _mm512_set1_ps(kIq1Delta), neg = _mm512_set1_ps(-kIq1Delta);
  return {_mm512_add_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(grid))),
                        _mm512_mask_blend_ps(static_cast<__mmask16>(minus), plus, neg)),
          _mm512_add_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(grid, 1))),
                        _mm512_mask_blend_ps(static_cast<__mmask16>(minus >> 16), plus, neg)),
          db0, db1};
}
#else
// AVX2 (the unpacked kernel, cpu_unpacked_rows.hpp): a sub-block as 32 signed byte codes and the
// scale of each half.
struct Values32 {
  __m256i q;
  float db0, db1;
};
inline Values32 signed_values(__m256i mags, uint32_t signs, float db0, float db1) {
  const __m256i m = unpack::bits32(signs, _mm256_set1_epi8(-1));
  return {_mm256_sub_epi8(_mm256_xor_si256(mags, m), m), db0, db1};
}
// iq1: 8 * (grid value +- 1/8) = 8 * grid +- 1 (in [-9, 9]), the scales divided by 8 (exact).
inline Values32 delta_values(__m256i grid, uint32_t minus, float db0, float db1) {
  const __m256i eight_g = _mm256_sign_epi8(_mm256_set1_epi8(8), grid);
  const __m256i delta = _mm256_or_si256(unpack::bits32(minus, _mm256_set1_epi8(-1)), _mm256_set1_epi8(1));   // -1 or +1
  return {_mm256_add_epi8(eight_g, delta), db0 * kIq1Delta, db1 * kIq1Delta};
}
#endif
// The formats with an f16 d in their first two bytes.
struct F16d {
  static float d(const uint8_t* p) { return simd::load_f16(p); }
};

inline __m256i grid8(const uint64_t* g, uint32_t i0, uint32_t i1, uint32_t i2, uint32_t i3) {
  return _mm256_setr_epi64x(static_cast<long long>(g[i0]), static_cast<long long>(g[i1]), static_cast<long long>(g[i2]),
                            static_cast<long long>(g[i3]));
}
inline __m256i grid4(const uint32_t* g, const uint32_t (&i)[8]) {
  const __m128i lo = _mm_setr_epi32(static_cast<int>(g[i[0]]), static_cast<int>(g[i[1]]), static_cast<int>(g[i[2]]),
                                    static_cast<int>(g[i[3]]));
  const __m128i hi = _mm_setr_epi32(static_cast<int>(g[i[4]]), static_cast<int>(g[i[5]]), static_cast<int>(g[i[6]]),
                                    static_cast<int>(g[i[7]]));
  return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}
// Four 7-bit sign indices (bits 0..27 of aux) as one mask: byte l = kSignsIq2xs[index l].
inline uint32_t signs_of_indices(uint32_t aux) {
  const uint8_t* ks = iq::kSignsIq2xs;
  return uint32_t{ks[aux & 127]} | uint32_t{ks[(aux >> 7) & 127]} << 8 | uint32_t{ks[(aux >> 14) & 127]} << 16 |
         uint32_t{ks[(aux >> 21) & 127]} << 24;
}
inline float half_quarter(float d, uint32_t nibble) { return d * (0.5f + static_cast<float>(nibble)) * 0.25f; }

struct Iq2xxs : F16d {
  static constexpr int kBytes = 66;
  static constexpr bool kHalves = false;
  static Values32 sub(const uint8_t* p, float d, int ib) {
    const uint8_t* q = p + 2 + 8 * ib;
    const uint32_t aux = load_u32(q + 4);
    const float db = half_quarter(d, aux >> 28);
    return signed_values(grid8(iq::kIq2xxsGrid, q[0], q[1], q[2], q[3]), signs_of_indices(aux), db, db);
  }
};
struct Iq2xs : F16d {
  static constexpr int kBytes = 74;
  static constexpr bool kHalves = true;
  static Values32 sub(const uint8_t* p, float d, int ib) {
    uint32_t q[4];
    for (int l = 0; l < 4; ++l) q[l] = load_u16(p + 2 + 2 * (4 * ib + l));
    const uint32_t aux = (q[0] >> 9) | (q[1] >> 9) << 7 | (q[2] >> 9) << 14 | (q[3] >> 9) << 21;
    const uint8_t sc = p[66 + ib];
    return signed_values(grid8(iq::kIq2xsGrid, q[0] & 511, q[1] & 511, q[2] & 511, q[3] & 511), signs_of_indices(aux),
                         half_quarter(d, sc & 0xF), half_quarter(d, sc >> 4));
  }
};
struct Iq2s : F16d {
  static constexpr int kBytes = 82;
  static constexpr bool kHalves = true;
  static Values32 sub(const uint8_t* p, float d, int ib) {
    const uint8_t* qs = p + 2 + 4 * ib;
    const uint32_t h = p[66 + ib];
    const uint8_t sc = p[74 + ib];
    return signed_values(grid8(iq::kIq2sGrid, qs[0] | ((h << 8) & 0x300), qs[1] | ((h << 6) & 0x300),
                               qs[2] | ((h << 4) & 0x300), qs[3] | ((h << 2) & 0x300)),
                         load_u32(p + 34 + 4 * ib), half_quarter(d, sc & 0xF), half_quarter(d, sc >> 4));
  }
};
struct Iq3xxs : F16d {
  static constexpr int kBytes = 98;
  static constexpr bool kHalves = false;
  static Values32 sub(const uint8_t* p, float d, int ib) {
    const uint8_t* q = p + 2 + 8 * ib;
    const uint32_t aux = load_u32(p + 66 + 4 * ib);
    const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f;
    const uint32_t i[8] = {q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]};
    return signed_values(grid4(iq::kIq3xxsGrid, i), signs_of_indices(aux), db, db);
  }
};
struct Iq3s : F16d {
  static constexpr int kBytes = 110;
  static constexpr bool kHalves = false;
  static Values32 sub(const uint8_t* p, float d, int ib) {
    const uint8_t* q = p + 2 + 8 * ib;
    const uint32_t h = p[66 + ib];
    const uint8_t sc = p[106 + ib / 2];
    const float db = d * static_cast<float>(1 + 2 * ((ib % 2) ? (sc >> 4) : (sc & 0xF)));
    uint32_t i[8];
    for (int k = 0; k < 8; ++k) i[k] = q[k] | (((h >> k) & 1) << 8);
    return signed_values(grid4(iq::kIq3sGrid, i), load_u32(p + 74 + 4 * ib), db, db);
  }
};

// 4 bits (one per 8 elements) spread over 32: bit i to bit 8i by one multiply (no cross term lands
// on a multiple of 8), then to the whole byte.
inline uint32_t eights(uint32_t bits4) { return ((bits4 * 0x00204081u) & 0x01010101u) * 0xFFu; }

struct Iq1s : F16d {
  static constexpr int kBytes = 50;
  static constexpr bool kHalves = false;
  static Values32 sub(const uint8_t* p, float d, int ib) {
    const uint8_t* qs = p + 2 + 4 * ib;
    const uint32_t qh = load_u16(p + 34 + 2 * ib);
    const float dl = d * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
    return delta_values(grid8(iq::kIq1sGrid, qs[0] | ((qh & 7) << 8), qs[1] | (((qh >> 3) & 7) << 8),
                              qs[2] | (((qh >> 6) & 7) << 8), qs[3] | (((qh >> 9) & 7) << 8)),
                        qh & 0x8000 ? 0xFFFFFFFFu : 0u, dl, dl);
  }
};
struct Iq1m {
  static constexpr int kBytes = 56;
  static constexpr bool kHalves = true;
  // d's f16 bits are spread over the top nibbles of the four scale words.
  static float d(const uint8_t* p) {
    const uint16_t s0 = load_u16(p + 48), s1 = load_u16(p + 50), s2 = load_u16(p + 52), s3 = load_u16(p + 54);
    return simd::f16_to_f32(
        static_cast<uint16_t>((s0 >> 12) | ((s1 >> 8) & 0x00F0) | ((s2 >> 4) & 0x0F00) | (s3 & 0xF000)));
  }
  static Values32 sub(const uint8_t* p, float d, int ib) {
    const uint8_t* qs = p + 4 * ib;
    const uint32_t h0 = p[32 + 2 * ib], h1 = p[33 + 2 * ib];
    const uint32_t sc = load_u16(p + 48 + 2 * (ib / 2)) >> (6 * (ib % 2));
    const uint32_t minus = ((h0 >> 3) & 1) | ((h0 >> 6) & 2) | ((h1 >> 1) & 4) | ((h1 >> 4) & 8);
    return delta_values(grid8(iq::kIq1sGrid, qs[0] | ((h0 << 8) & 0x700), qs[1] | ((h0 << 4) & 0x700),
                              qs[2] | ((h1 << 8) & 0x700), qs[3] | ((h1 << 4) & 0x700)),
                        eights(minus), d * static_cast<float>(2 * (sc & 7) + 1),
                        d * static_cast<float>(2 * ((sc >> 3) & 7) + 1));
  }
};

#if AKVIEW_CPU_AVX512
inline const uint8_t* row_ptr(const TensorView& v, int64_t r) {
  return v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
}
// R rows: per sub-block its values against x, each half times its scale.
template <class F, int R>
void sub_blocks_n(const CpuArgs& a, int64_t r, float* y) {
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 256;
  __m512 s[R];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) s[i] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = a.x + b * 256;
    AKV_UNROLL
    for (int i = 0; i < R; ++i) {
      const uint8_t* p = row_ptr(v, r + i) + b * F::kBytes;
      simd::prefetch_span(p + 8 * F::kBytes, F::kBytes);
      const float d = F::d(p);
      for (int ib = 0; ib < 8; ++ib) {
        const Values32 w = F::sub(p, d, ib);
        const float* x = xb + 32 * ib;
        if constexpr (F::kHalves) {
          s[i] = _mm512_fmadd_ps(_mm512_mul_ps(w.lo, _mm512_loadu_ps(x)), _mm512_set1_ps(w.db0), s[i]);
          s[i] = _mm512_fmadd_ps(_mm512_mul_ps(w.hi, _mm512_loadu_ps(x + 16)), _mm512_set1_ps(w.db1), s[i]);
        } else {
          const __m512 t = _mm512_fmadd_ps(w.hi, _mm512_loadu_ps(x + 16), _mm512_mul_ps(w.lo, _mm512_loadu_ps(x)));
          s[i] = _mm512_fmadd_ps(t, _mm512_set1_ps(w.db0), s[i]);
        }
      }
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i) y[r + i] = simd::hsum512(s[i]);
}

constexpr int kR = 2;
template <class F>
constexpr CpuKernelRow row_of(TypeId t) {
  return CpuKernelRow{t, &rows_by<kR, &sub_blocks_n<F, kR>, &sub_blocks_n<F, 1>>, nullptr, nullptr, "avx512 x2 rows"};
}
#else
// A format's sub-blocks as the unpacked kernel's blocks of 256.
template <class F>
struct Unpacked {
  static constexpr int kElems = 256, kBytes = F::kBytes;
  static constexpr bool kBias = false;
  static __m256 unpack(const uint8_t* p, const float*, int8_t* q, float* s) {
    const float d = F::d(p);
    for (int ib = 0; ib < 8; ++ib) {
      const Values32 w = F::sub(p, d, ib);
      _mm256_store_si256(reinterpret_cast<__m256i*>(q + 32 * ib), w.q);
      s[2 * ib] = w.db0;
      s[2 * ib + 1] = F::kHalves ? w.db1 : w.db0;
    }
    return _mm256_setzero_ps();
  }
};
constexpr int kR = 4;
template <class F>
constexpr CpuKernelRow row_of(TypeId t) {
  return CpuKernelRow{t, &rows_by<kR, &unpacked_n<Unpacked<F>, kR>, &unpacked_n<Unpacked<F>, 1>>, nullptr, nullptr,
                      "avx2 x4 rows"};
}
#endif
constexpr std::array kRows = {
    row_of<Iq2xxs>(TypeId::iq2_xxs), row_of<Iq2xs>(TypeId::iq2_xs), row_of<Iq2s>(TypeId::iq2_s),
    row_of<Iq3xxs>(TypeId::iq3_xxs), row_of<Iq3s>(TypeId::iq3_s),   row_of<Iq1s>(TypeId::iq1_s),
    row_of<Iq1m>(TypeId::iq1_m),
};
#else
constexpr std::array<CpuKernelRow, 0> kRows = {};
#endif

}   // namespace

std::span<const CpuKernelRow> cpu_kernels_iquant() { return kRows; }

}   // namespace akview::compute
