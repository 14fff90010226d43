// x-quant kernels for ggml's 32-element blocks against q8_0 / q8_1 x (FORMATS.md §2.7, §6):
//   q4_0 [d][qs 16]  q4_1 [d][m][qs 16]  q5_0 [d][qh 4][qs 16]  q5_1 [d][m][qh 4][qs 16]
//   q8_0 [d][qs 32]  iq4_nl [d][qs 16]
// Per block the integer sum of (weight code) * (x code) is exact in int32; the weight code is
// unsigned c with a zero point z (q4_0: 8, q5_0: 16, q8_0 stored as c = q + 128, iq4_nl as
// c = value + 128), so sum((c - z) x) = sum(c x) - z sum(x), with sum(x) from XqInput::sum4 (the
// AVX-512 VNNI kernels make z sum(x) with one more vpdpbusd of z against the x codes they hold
// already: reading sum4 as well doubled the x bytes the thread that did not quantize x pulls over
// from the other core, a microsecond of a 60-row matvec). Then
// y += (d_w d_x) * isum (+ m_w * s_x for q4_1 / q5_1), in f32.
#include <array>
#include <cstdint>
#include <cstring>

#include "compute/cpu_simd.hpp"
#include "compute/xquant_kernels.hpp"
#include "core/decode/iq_grids.hpp"

namespace akview::compute {
namespace {
using simd::load_f16;
using simd::load_u32;

// One 32-element block's unsigned codes and its layout.
struct Legacy {
  int bytes, qs, qh, m;   // block size; offsets of qs, qh (-1: none), m (-1: none)
  int zero;               // zero point subtracted from the code
};
constexpr Legacy kQ4_0{18, 2, -1, -1, 8}, kQ4_1{20, 4, -1, 2, 0}, kQ5_0{22, 6, 2, -1, 16}, kQ5_1{24, 8, 4, 2, 0},
    kQ8_0{34, 2, -1, -1, 128}, kIq4nl{18, 2, -1, -1, 128};

template <const Legacy& L, bool kIq4>
void codes_scalar(const uint8_t* p, uint8_t* c) {
  if constexpr (L.bytes == 34) {
    for (int j = 0; j < 32; ++j) c[j] = static_cast<uint8_t>(p[L.qs + j] ^ 0x80);
    return;
  }
  const uint32_t qh = L.qh >= 0 ? load_u32(p + L.qh) : 0;
  for (int j = 0; j < 16; ++j) {
    uint8_t lo = p[L.qs + j] & 0x0F, hi = p[L.qs + j] >> 4;
    if constexpr (kIq4) {
      lo = static_cast<uint8_t>(decode::iq::kIq4nlValues[lo] + 128);
      hi = static_cast<uint8_t>(decode::iq::kIq4nlValues[hi] + 128);
    }
    c[j] = static_cast<uint8_t>(lo | (((qh >> j) & 1) << 4));
    c[j + 16] = static_cast<uint8_t>(hi | (((qh >> (j + 16)) & 1) << 4));
  }
}

// Block b of a row: (d_w d_x) * sum((c - z) x) (+ m_w s_x).
template <const Legacy& L, bool kIq4>
float block_scalar(const uint8_t* row, const XqInput& x, int64_t b) {
  const uint8_t* p = row + b * L.bytes;
  uint8_t c[32];
  codes_scalar<L, kIq4>(p, c);
  const int8_t* xc = x.codes.data() + 32 * b;
  int32_t isum = 0, xsum = 0;
  for (int j = 0; j < 32; ++j) {
    isum += c[j] * xc[j];
    xsum += xc[j];
  }
  isum -= L.zero * xsum;
  float t = load_f16(p) * x.d[b] * static_cast<float>(isum);
  if constexpr (L.m >= 0) t += load_f16(p + L.m) * x.s[b];
  return t;
}

template <const Legacy& L, bool kIq4 = false>
void rows_scalar(const XqArgs& a, int64_t r0, int64_t r1, float* y) {
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 32;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
    float acc = 0;
    for (int64_t b = 0; b < nb; ++b) acc += block_scalar<L, kIq4>(row, *a.x, b);
    y[r] = acc;
  }
}

// The AVX2 kernels dot codes above 31 (q8_0, iq4_nl) as signed weights w = c - z with x (sign
// trick, below), the others as unsigned codes, their zero point taken off each pair of products
// (XqInput::zpair: kPairZero, the table's pair_zero).
template <const Legacy& L>
constexpr bool kSignedDot = L.bytes == 34 || L.zero == 128;
template <const Legacy& L>
constexpr int kPairZero = kSignedDot<L> ? 0 : L.zero;

#if AKVIEW_XQ_AVX2
// One block's 32 codes in x order: signed weights w = c - z (q8_0: the stored bytes; iq4_nl: the
// table's values) or, for the others, the unsigned codes c.
template <const Legacy& L, bool kIq4>
__m256i codes_avx2(const uint8_t* p) {
  if constexpr (L.bytes == 34) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + L.qs));
  } else {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + L.qs));
    const __m128i m = _mm_set1_epi8(0x0F);
    __m256i c = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m), _mm_and_si128(q, m));   // codes 0..15 | 16..31
    if constexpr (kIq4) {
      const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(decode::iq::kIq4nlValues));
      return _mm256_shuffle_epi8(_mm256_set_m128i(t, t), c);
    }
    if constexpr (L.qh >= 0) {
      // Bit j of qh is bit 4 of code j: byte j takes qh's byte j/8, tests bit j%8.
      const __m256i spread = _mm256_shuffle_epi8(
          _mm256_set1_epi32(static_cast<int>(load_u32(p + L.qh))),
          _mm256_set_epi64x(0x0303030303030303ll, 0x0202020202020202ll, 0x0101010101010101ll, 0x0000000000000000ll));
      const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
      c = _mm256_or_si256(
          c, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10)));
    }
    return c;
  }
}

// sum((c - z) x) over one block as 8 int32 lanes, exact. Signed weights: |w| (unsigned; q8_0's -128
// is 128) times x with w's sign; unsigned codes (below 32): c times x less z times the x pair sums
// zx2. Either way x codes are within [-127, 127], so no pair of products saturates.
template <const Legacy& L>
inline __m256i dot_avx2(__m256i c, const int8_t* xc, const int16_t* zx2) {
  const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xc));
  __m256i p16;
  if constexpr (kSignedDot<L>) {
    p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(c, c), _mm256_sign_epi8(x, c));
  } else {
    p16 = _mm256_maddubs_epi16(c, x);
    if constexpr (kPairZero<L> != 0)
      p16 = _mm256_sub_epi16(p16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(zx2)));
  }
  return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

// One row at a time, as ggml: with 2 or 4 rows streamed from memory side by side (sharing each
// block's x loads), q4_0 and q4_1 ran at 0.72-0.86x of ggml's vec_dot on one thread here; one row
// at a time, 1.06-1.25x (in cache the same either way). Even and odd blocks go to two accumulators:
// with one, each block's FMA waited on the last one's, and in cache q8_0 and q4_0 ran at 0.97-1.0x of
// ggml on one thread (AVX-512 host, the AVX2 kernels against ggml's haswell library), 1.13-1.16x with two.
template <const Legacy& L, bool kIq4 = false>
void rows_avx2(const XqArgs& a, int64_t r0, int64_t r1, float* y) {
  const TensorView& v = *a.view;
  const XqInput& x = *a.x;
  const int64_t nb = v.n_cols / 32;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
    __m256 acc = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    float mins = 0;
    auto block = [&](int64_t b, __m256& into) {
      const uint8_t* p = row + b * L.bytes;
      simd::prefetch_span(p + 1024, L.bytes);
      const int16_t* zx2 = kPairZero<L> ? x.zpair.data() + 16 * b : nullptr;
      const __m256i isum = dot_avx2<L>(codes_avx2<L, kIq4>(p), x.codes.data() + 32 * b, zx2);
      into = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(load_f16(p) * x.d[b]), into);
      if constexpr (L.m >= 0) mins += load_f16(p + L.m) * x.s[b];
    };
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) block(b, acc), block(b + 1, acc1);
    if (b < nb) block(b, acc);
    y[r] = simd::hsum(_mm256_add_ps(acc, acc1)) + mins;
  }
}
#define XQ_AVX2(L, ...) rows_avx2<L __VA_OPT__(, ) __VA_ARGS__>
#else
#define XQ_AVX2(L, ...) nullptr
#endif

#if AKVIEW_XQ_VNNI512
// Two consecutive blocks' 64 unsigned codes, in x order.
template <const Legacy& L, bool kIq4>
__m512i codes_pair(const uint8_t* p) {
  if constexpr (L.bytes == 34) {
    const __m512i w =
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + L.qs))),
                           _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + L.bytes + L.qs)), 1);
    return _mm512_xor_si512(w, _mm512_set1_epi8(static_cast<char>(0x80)));
  } else {
    // [qs_b qs_b qs_b1 qs_b1], the second copy of each shifted right by 4: low then high nibbles.
    const __m256i b0 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + L.qs)));
    const __m256i b1 =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + L.bytes + L.qs)));
    const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(b0), b1, 1);
    const __m512i counts = _mm512_set_epi64(4 * 0x0001000100010001ll, 4 * 0x0001000100010001ll, 0, 0,
                                            4 * 0x0001000100010001ll, 4 * 0x0001000100010001ll, 0, 0);
    __m512i c = _mm512_and_si512(_mm512_srlv_epi16(both, counts), _mm512_set1_epi8(0x0F));
    if constexpr (kIq4) {
      const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(decode::iq::kIq4nlValues));
      c = _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_xor_si128(t, _mm_set1_epi8(static_cast<char>(0x80)))), c);
    }
    if constexpr (L.qh >= 0) {
      const uint64_t mask = load_u32(p + L.qh) | (uint64_t{load_u32(p + L.bytes + L.qh)} << 32);
      c = _mm512_or_si512(c, _mm512_maskz_mov_epi8(mask, _mm512_set1_epi8(0x10)));
    }
    return c;
  }
}

// R rows per pass: each pair of blocks' x codes, zero-point sums and x scales are made once for
// the R rows, and R accumulators are in flight. Each row is prefetched kAhead bytes ahead; past
// its end the prefetch goes on into the row the same lane reads next pass (R rows on), so the
// streams of the next pass start warm. On AVX-512 (Zen 5, 2 threads, from memory) one row at a
// time read q8_0 4096 x 14336 at 24-25 GB/s where the exact path (4 rows a pass) read 33-34; 4 rows
// a pass with this prefetch, 37-38 GB/s (xquant_vs_ggml_bench). Without the wrap, 14336 x 4096
// (4352-byte rows) fell from 23 to 18 GB/s on one thread: each pass's streams started cold.
constexpr int64_t kAhead = 2048;

template <const Legacy& L, bool kIq4, int R>
void pass_vnni512(const XqArgs& a, int64_t r, float* y) {
  const TensorView& v = *a.view;
  const XqInput& x = *a.x;
  const int64_t nb = v.n_cols / 32, pairs = nb / 2, row_bytes = static_cast<int64_t>(v.row_bytes);
  const uint8_t* rows[R];
  __m512 acc[R];
  float mins[R];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) {
    rows[i] = v.data.data() + static_cast<uint64_t>(r + i) * v.row_bytes;
    acc[i] = _mm512_setzero_ps();
    mins[i] = 0;
  }
  for (int64_t k = 0; k < pairs; ++k) {
    const __m512i xc = _mm512_loadu_si512(x.codes.data() + 64 * k);
    __m512i init = _mm512_setzero_si512();
    if constexpr (L.zero != 0)
      init = _mm512_sub_epi32(init, _mm512_dpbusd_epi32(init, _mm512_set1_epi8(static_cast<char>(L.zero)), xc));
    const float d0 = x.d[2 * k], d1 = x.d[2 * k + 1];
    int64_t ahead = 2 * k * L.bytes + kAhead;
    if (ahead >= row_bytes) ahead += (R - 1) * row_bytes;   // a prefetch never faults: past the tensor is fine
    AKV_UNROLL
    for (int i = 0; i < R; ++i) {
      const uint8_t* p = rows[i] + 2 * k * L.bytes;
      simd::prefetch_span(reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(rows[i]) + ahead), 2 * L.bytes);
      const __m512i isum = _mm512_dpbusd_epi32(init, codes_pair<L, kIq4>(p), xc);
      const __m512 sv =
          _mm512_insertf32x8(_mm512_set1_ps(load_f16(p) * d0), _mm256_set1_ps(load_f16(p + L.bytes) * d1), 1);
      acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), sv, acc[i]);
      if constexpr (L.m >= 0) mins[i] += load_f16(p + L.m) * x.s[2 * k] + load_f16(p + L.bytes + L.m) * x.s[2 * k + 1];
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i) {
    float t = simd::hsum512(acc[i]) + mins[i];
    if (nb & 1) t += block_scalar<L, kIq4>(rows[i], x, nb - 1);   // a last odd block
    y[r + i] = t;
  }
}

template <const Legacy& L, bool kIq4 = false>
void rows_vnni512(const XqArgs& a, int64_t r0, int64_t r1, float* y) {
  int64_t r = r0;
  for (; r + 4 <= r1; r += 4) pass_vnni512<L, kIq4, 4>(a, r, y);
  for (; r < r1; ++r) pass_vnni512<L, kIq4, 1>(a, r, y);
}
#endif

#if AKVIEW_XQ_VNNI512
#define XQ_BEST(L, ...)                                                                                 \
  rows_vnni512<L __VA_OPT__(, ) __VA_ARGS__>, "avx512-vnni", rows_scalar<L __VA_OPT__(, ) __VA_ARGS__>, \
      XQ_AVX2(L __VA_OPT__(, ) __VA_ARGS__)
#elif AKVIEW_XQ_AVX2
#define XQ_BEST(L, ...)                                                                       \
  rows_avx2<L __VA_OPT__(, ) __VA_ARGS__>, "avx2", rows_scalar<L __VA_OPT__(, ) __VA_ARGS__>, \
      XQ_AVX2(L __VA_OPT__(, ) __VA_ARGS__)
#else
#define XQ_BEST(L, ...)                                                                           \
  rows_scalar<L __VA_OPT__(, ) __VA_ARGS__>, "scalar", rows_scalar<L __VA_OPT__(, ) __VA_ARGS__>, \
      XQ_AVX2(L __VA_OPT__(, ) __VA_ARGS__)
#endif
constexpr std::array kTable = {
    XqKernelRow{TypeId::q4_0, ActQuant::q8_0, XQ_BEST(kQ4_0), kPairZero<kQ4_0>},
    XqKernelRow{TypeId::q4_1, ActQuant::q8_1, XQ_BEST(kQ4_1), kPairZero<kQ4_1>},
    XqKernelRow{TypeId::q5_0, ActQuant::q8_0, XQ_BEST(kQ5_0), kPairZero<kQ5_0>},
    XqKernelRow{TypeId::q5_1, ActQuant::q8_1, XQ_BEST(kQ5_1), kPairZero<kQ5_1>},
    XqKernelRow{TypeId::q8_0, ActQuant::q8_0, XQ_BEST(kQ8_0), kPairZero<kQ8_0>},
    XqKernelRow{TypeId::iq4_nl, ActQuant::q8_0, XQ_BEST(kIq4nl, true), kPairZero<kIq4nl>},
};
#undef XQ_BEST
#undef XQ_AVX2

}   // namespace

std::span<const XqKernelRow> xq_kernels_legacy() { return kTable; }

}   // namespace akview::compute
