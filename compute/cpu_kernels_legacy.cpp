// cpu kernels for ggml's 32-element blocks (FORMATS.md §2.7): q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl.
//   q4_0  [d f16][qs 16]            q4_1 [d f16][m f16][qs 16]
//   q5_0  [d f16][qh 4][qs 16]      q5_1 [d f16][m f16][qh 4][qs 16]
//   q8_0  [d f16][qs i8 x32]        iq4_nl [d f16][qs 16] -> kvalues_iq4nl
// Nibble order: element j = low nibble of qs[j], element j+16 = high nibble.
#include <array>

#include "compute/cpu_centre.hpp"
#include "compute/cpu_row_groups.hpp"
#include "compute/cpu_unpacked_rows.hpp"

namespace akview::compute {
namespace {
using namespace simd;

#if AKVIEW_CPU_AVX2 && !AKVIEW_CPU_VBMI
// The AVX2 formats of unpacked_n (cpu_unpacked_rows.hpp): one 32-element block into 32 codes.
namespace av {
using namespace unpack;

// q4_0 (codes - 8), iq4_nl (the iq4 values) and q8_0 (the bytes).
template <TypeId kType>
struct Plain {
  static constexpr int kElems = 32, kBytes = kType == TypeId::q8_0 ? 34 : 18;
  static constexpr bool kBias = false;
  static __m256 unpack(const uint8_t* p, const float*, int8_t* q, float* s) {
    if constexpr (kType == TypeId::q8_0) store256(q, load256(p + 2));
    else if constexpr (kType == TypeId::iq4_nl) store256(q, _mm256_shuffle_epi8(iq4_bytes(), nibbles32(p + 2)));
    else store256(q, _mm256_sub_epi8(nibbles32(p + 2), _mm256_set1_epi8(8)));
    s[0] = s[1] = load_f16(p);
    return _mm256_setzero_ps();
  }
};

// q5_0 (codes - 16) and q5_1 (kMin: [d][m], centred): the fifth bits from the 32-bit qh.
// q4_1 is q5_1 without them (kQh false).
template <bool kMin, bool kQh>
struct WithBits {
  static constexpr int kElems = 32, kBytes = (kMin ? 4 : 2) + (kQh ? 4 : 0) + 16;
  static constexpr bool kBias = kMin;
  static __m256 unpack(const uint8_t* p, const float* xs, int8_t* q, float* s) {
    constexpr int kQs = kBytes - 16;
    __m256i c = nibbles32(p + kQs);
    if constexpr (kQh) c = _mm256_or_si256(c, bits32(load_u32(p + kQs - 4), _mm256_set1_epi8(0x10)));
    const float d = load_f16(p);
    s[0] = s[1] = d;
    if constexpr (!kMin) {
      store256(q, _mm256_sub_epi8(c, _mm256_set1_epi8(16)));
      return _mm256_setzero_ps();
    } else {
      const CentredGroup g = centre_group(d, load_f16(p + 2), kQh ? 31 : 15);
      store256(q, _mm256_sub_epi8(c, _mm256_set1_epi8(static_cast<char>(g.k))));
      return _mm256_setr_ps(g.bias * (xs[0] + xs[1]), 0, 0, 0, 0, 0, 0, 0);
    }
  }
};
}   // namespace av
constexpr int kR = 4;
#endif

#if AKVIEW_CPU_VBMI
namespace vb {
inline const uint8_t* row_ptr(const TensorView& v, int64_t r) {
  return v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
}

// Blocks with a min (q4_1, q5_1: [d f16][m f16] at the front of each kBytes block) are centred
// (cpu_centre.hpp) kChunk blocks of a row at once, before their dot loop: done per block, the scalar
// chain from d and m to the code offset cost as much as the block's dot.
constexpr int kChunk = 16;
// Sums of x over blocks b0..b0+15 (`live` of them) from the 16-element sums.
inline __m512 block_x_sums(const float* xsum16, int64_t b0, __mmask16 live) {
  const __m512 a =
      _mm512_maskz_loadu_ps(static_cast<__mmask16>(_pdep_u32(live, 0x5555) | _pdep_u32(live, 0xAAAA)), xsum16 + 2 * b0);
  const __m512 b = _mm512_maskz_loadu_ps(
      static_cast<__mmask16>((_pdep_u32(live >> 8, 0x5555) | _pdep_u32(live >> 8, 0xAAAA))), xsum16 + 2 * b0 + 16);
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  return _mm512_add_ps(_mm512_permutex2var_ps(a, even, b),
                       _mm512_permutex2var_ps(a, _mm512_add_epi32(even, _mm512_set1_epi32(1)), b));
}
// For the `live` blocks of 16 from p: dc = d, kc = k (the code nearest the block's zero, in [0, top],
// by rcp14 as centre_block); returns (d*k + m) * xs per block (0 in the dead lanes).
template <int kBytes>
inline __m512 centre_blocks(const uint8_t* p, __m512 xs, __mmask16 live, int top, float* dc, float* kc) {
  const __m512i at = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                        _mm512_set1_epi32(kBytes));
  const __m512i dm = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, at, p, 1);
  const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dm)),
               m = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dm, 16)));
  const __m512 zero = _mm512_setzero_ps();
  const __m512 q = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_sub_ps(zero, m), _mm512_rcp14_ps(d)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 k =
      _mm512_min_ps(_mm512_max_ps(q, zero), _mm512_set1_ps(static_cast<float>(top)));   // max() gives 0 for a NaN
  _mm512_storeu_ps(dc, d);
  _mm512_storeu_ps(kc, k);
  return _mm512_mul_ps(_mm512_fmadd_ps(d, k, m), xs);
}
// Centres blocks b0.. (up to kChunk) of R rows into dc / kc, adding their bias terms to acc.
template <int kBytes, int R>
inline void centre_chunk(const CpuArgs& a, const uint8_t* const (&rows)[R], int64_t nb, int64_t b0, int top,
                         float (&dc)[R][kChunk], float (&kc)[R][kChunk], __m512 (&acc)[R]) {
  const __mmask16 live = static_cast<__mmask16>(nb - b0 >= kChunk ? 0xFFFF : (1u << (nb - b0)) - 1);
  const __m512 xs = block_x_sums(a.xsum16, b0, live);
  AKV_UNROLL
  for (int i = 0; i < R; ++i)
    acc[i] = _mm512_add_ps(acc[i], centre_blocks<kBytes>(rows[i] + b0 * kBytes, xs, live, top, dc[i], kc[i]));
}

// q8_0 over R rows: each block's two x vectors are loaded once for all R rows.
template <int R>
void q8_0_n(const CpuArgs& a, int64_t r, float* y) {
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 32;
  const uint8_t* rows[R];
  __m512 s[R];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) {
    rows[i] = row_ptr(v, r + i);
    s[i] = _mm512_setzero_ps();
  }
  for (int64_t b = 0; b < nb; ++b) {
    const __m512 x0 = _mm512_loadu_ps(a.x + b * 32), x1 = _mm512_loadu_ps(a.x + b * 32 + 16);
    AKV_UNROLL
    for (int i = 0; i < R; ++i) {
      const uint8_t* p = rows[i] + b * 34;
      prefetch_span(p + 1024, 34);
      __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(i8x16_to_i32(p + 2)), x0);
      t = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i8x16_to_i32(p + 18)), x1, t);
      s[i] = _mm512_fmadd_ps(t, _mm512_set1_ps(load_f16(p)), s[i]);
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i) y[r + i] = hsum512(s[i]);
}

// q5_0 / q5_1 (kMin): the fifth bits come from the 32-bit qh as two 16-bit byte masks (a masked
// add of 16 sets bit 4, which the nibble leaves clear). q5_1 blocks are centred (cpu_centre.hpp):
// k is subtracted from the code bytes and m + d*k times sum(x) added.
template <int R, bool kMin>
void q5_n(const CpuArgs& a, int64_t r, float* y) {
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 32;
  constexpr int kBytes = kMin ? 24 : 22, kQh = kMin ? 4 : 2;
  const __m128i m4 = _mm_set1_epi8(0x0F), k16 = _mm_set1_epi8(16);
  const uint8_t* rows[R];
  __m512 s[R], mins[R];
  alignas(64) float dc[R][kChunk], kc[R][kChunk];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) {
    rows[i] = row_ptr(v, r + i);
    s[i] = mins[i] = _mm512_setzero_ps();
  }
  for (int64_t b0 = 0; b0 < nb; b0 += kChunk) {
    const int64_t b1 = std::min<int64_t>(nb, b0 + kChunk);
    if constexpr (kMin) centre_chunk<kBytes>(a, rows, nb, b0, 31, dc, kc, mins);
    for (int64_t b = b0; b < b1; ++b) {
      const __m512 x0 = _mm512_loadu_ps(a.x + b * 32), x1 = _mm512_loadu_ps(a.x + b * 32 + 16);
      AKV_UNROLL
      for (int i = 0; i < R; ++i) {
        const uint8_t* p = rows[i] + b * kBytes;
        prefetch_span(p + 1024, kBytes);
        const uint32_t qh = load_u32(p + kQh);
        const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + kQh + 4));
        __m128i lo = _mm_and_si128(q, m4), hi = _mm_and_si128(_mm_srli_epi16(q, 4), m4);
        lo = _mm_mask_add_epi8(lo, static_cast<__mmask16>(qh), lo, k16);
        hi = _mm_mask_add_epi8(hi, static_cast<__mmask16>(qh >> 16), hi, k16);
        // q5_1: k is subtracted from the code bytes, (m + d*k) times sum(x) went into mins.
        const __m128i kb = kMin ? _mm_set1_epi8(static_cast<char>(static_cast<int>(kc[i][b - b0]))) : k16;
        __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_sub_epi8(lo, kb))), x0);
        t = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_sub_epi8(hi, kb))), x1, t);
        s[i] = _mm512_fmadd_ps(t, _mm512_set1_ps(kMin ? dc[i][b - b0] : load_f16(p)), s[i]);
      }
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i) y[r + i] = hsum512(_mm512_add_ps(s[i], mins[i]));
}

// 4-bit blocks of 32 by table lookup (iq4_block32: vpmovzxbd + vpermps per 16 codes) over R rows:
// iq4_nl (its value table), q4_0 (codes - 8) and q4_1 (codes - k, a centred block (centre_blocks),
// plus (m + d*k) * sum(x) per block, kept in a second accumulator).
inline __m512 codes_minus(int offset) {
  return _mm512_sub_ps(_mm512_set_ps(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                       _mm512_set1_ps(static_cast<float>(offset)));
}
template <int R, TypeId kType>
void lut4_n(const CpuArgs& a, int64_t r, float* y) {
  constexpr bool kMin = kType == TypeId::q4_1;
  constexpr int kBytes = kMin ? 20 : 18, kQs = kMin ? 4 : 2;
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 32;
  const __m512 table = kType == TypeId::iq4_nl ? iq4_table() : codes_minus(kType == TypeId::q4_0 ? 8 : 0);
  const uint8_t* rows[R];
  __m512 s[R], c[R];
  alignas(64) float dc[R][kChunk], kc[R][kChunk];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) {
    rows[i] = row_ptr(v, r + i);
    s[i] = c[i] = _mm512_setzero_ps();
  }
  for (int64_t b0 = 0; b0 < nb; b0 += kChunk) {
    const int64_t b1 = std::min<int64_t>(nb, b0 + kChunk);
    if constexpr (kMin) centre_chunk<kBytes>(a, rows, nb, b0, 15, dc, kc, c);
    for (int64_t b = b0; b < b1; ++b) {
      const float* xb = a.x + b * 32;
      AKV_UNROLL
      for (int i = 0; i < R; ++i) {
        const uint8_t* p = rows[i] + b * kBytes;
        prefetch_span(p + 1024, kBytes);
        if constexpr (kMin)
          s[i] = iq4_block32(p + kQs, xb, dc[i][b - b0], _mm512_sub_ps(table, _mm512_set1_ps(kc[i][b - b0])), s[i]);
        else s[i] = iq4_block32(p + kQs, xb, load_f16(p), table, s[i]);
      }
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i) y[r + i] = hsum512(_mm512_add_ps(s[i], c[i]));
}
}   // namespace vb
constexpr int kR = 4;
#endif

// AVX-512 machines with VBMI use the multi-row kernels; AVX2 machines the unpacked ones above.
// Every other type (and everything on a build without AVX2) goes through the cpu backend's
// decode_rows tile path, i.e. core's decoders.
#if AKVIEW_CPU_VBMI
constexpr std::array kRows = {
    CpuKernelRow{TypeId::q4_0, &rows_by<kR, &vb::lut4_n<kR, TypeId::q4_0>, &vb::lut4_n<1, TypeId::q4_0>>, nullptr,
                 nullptr, "avx512 x4 rows"},
    CpuKernelRow{TypeId::q4_1, &rows_by<kR, &vb::lut4_n<kR, TypeId::q4_1>, &vb::lut4_n<1, TypeId::q4_1>>, nullptr,
                 nullptr, "avx512 x4 rows"},
    CpuKernelRow{TypeId::q5_0, &rows_by<kR, &vb::q5_n<kR, false>, &vb::q5_n<1, false>>, nullptr, nullptr,
                 "avx512bw x4 rows"},
    CpuKernelRow{TypeId::q5_1, &rows_by<kR, &vb::q5_n<kR, true>, &vb::q5_n<1, true>>, nullptr, nullptr,
                 "avx512bw x4 rows"},
    CpuKernelRow{TypeId::q8_0, &rows_by<kR, &vb::q8_0_n<kR>, &vb::q8_0_n<1>>, nullptr, nullptr, "avx512 x4 rows"},
    CpuKernelRow{TypeId::iq4_nl, &rows_by<kR, &vb::lut4_n<kR, TypeId::iq4_nl>, &vb::lut4_n<1, TypeId::iq4_nl>>, nullptr,
                 nullptr, "avx512 x4 rows"},
};
#elif AKVIEW_CPU_AVX2
template <class F>
constexpr CpuRowsFn kAvx2 = &rows_by<kR, &unpacked_n<F, kR>, &unpacked_n<F, 1>>;
constexpr std::array kRows = {
    CpuKernelRow{TypeId::q4_0, kAvx2<av::Plain<TypeId::q4_0>>, nullptr, nullptr, "avx2 x4 rows"},
    CpuKernelRow{TypeId::q4_1, kAvx2<av::WithBits<true, false>>, nullptr, nullptr, "avx2 x4 rows"},
    CpuKernelRow{TypeId::q5_0, kAvx2<av::WithBits<false, true>>, nullptr, nullptr, "avx2 x4 rows"},
    CpuKernelRow{TypeId::q5_1, kAvx2<av::WithBits<true, true>>, nullptr, nullptr, "avx2 x4 rows"},
    CpuKernelRow{TypeId::q8_0, kAvx2<av::Plain<TypeId::q8_0>>, nullptr, nullptr, "avx2 x4 rows"},
    CpuKernelRow{TypeId::iq4_nl, kAvx2<av::Plain<TypeId::iq4_nl>>, nullptr, nullptr, "avx2 x4 rows"},
};
#else
constexpr std::array<CpuKernelRow, 0> kRows = {};
#endif

}   // namespace

std::span<const CpuKernelRow> cpu_kernels_legacy() { return kRows; }

}   // namespace akview::compute
