// cpu kernels for ggml's 256-element super-blocks (FORMATS.md §2.7): q2_k, q3_k, q4_k, q5_k,
// q6_k and iq4_xs.
//   q2_k [scales 16][qs 64][d f16][dmin f16]        q3_k [hmask 32][qs 64][scales 12][d f16]
//   q4_k [d][dmin][scales 12][qs 128]               q5_k [d][dmin][scales 12][qh 32][qs 128]
//   q6_k [ql 128][qh 64][scales i8 16][d f16]       iq4_xs [d][scales_h u16][scales_l 4][qs 128]
#include <algorithm>
#include <array>
#include <vector>

#include "compute/cpu_centre.hpp"
#include "compute/cpu_row_groups.hpp"
#include "compute/cpu_unpacked_rows.hpp"
#include "compute/kquant_scales_simd.hpp"
#include "core/decode/kquant_scales.hpp"

namespace akview::compute {
namespace {
using namespace simd;

#if AKVIEW_CPU_AVX2 && !AKVIEW_CPU_VBMI
// The AVX2 formats of unpacked_n (cpu_unpacked_rows.hpp): one 256-element super-block into 256
// codes and 16 run scales.
namespace av {
using namespace unpack;

// The run scales s[2g] = s[2g + 1] = sc[g] of 8 groups of 32.
inline void pair_scales(__m256 sc, float* s) {
  _mm256_store_ps(s, _mm256_permutevar8x32_ps(sc, _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3)));
  _mm256_store_ps(s + 8, _mm256_permutevar8x32_ps(sc, _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7)));
}
// The sums of x over 8 groups of 32 from the 16 run sums.
inline __m256 group_xsums(const float* xs) {
  const __m256 h = _mm256_hadd_ps(_mm256_loadu_ps(xs), _mm256_loadu_ps(xs + 8));   // groups 0 1 4 5 | 2 3 6 7
  return _mm256_permutevar8x32_ps(h, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7));
}
// Centres 8 groups (centre8, cpu_centre.hpp): k as bytes (bytes 0..7), bias set to s*k + b.
inline __m128i centre8_bytes(__m256 sc, __m256 b, int top, __m256& bias) {
  __m256 k;
  bias = centre8(sc, b, top, k);
  return bytes8(k);
}

// q2_k: 16 groups of 16, 2-bit codes (qs byte l of half n, shift 2j: element 128n + 32j + l), a
// 4-bit scale and min per group; w = d*sc*q - dmin*m.
struct Q2K {
  static constexpr int kElems = 256, kBytes = 84;
  static constexpr bool kBias = true;
  static __m256 unpack(const uint8_t* p, const float* xs, int8_t* q, float* s) {
    const __m128i sm = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i sc = _mm_and_si128(sm, _mm_set1_epi8(0x0F)),
                  mn = _mm_and_si128(_mm_srli_epi16(sm, 4), _mm_set1_epi8(0x0F));
    const __m256 d = _mm256_set1_ps(load_f16(p + 80)), dmin = _mm256_set1_ps(-load_f16(p + 82));
    __m256 bias[2];
    __m128i k[2];
    const __m256 s0 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(sc)), d);
    const __m256 s1 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(sc, 8))), d);
    _mm256_store_ps(s, s0);
    _mm256_store_ps(s + 8, s1);
    k[0] = centre8_bytes(s0, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(mn)), dmin), 3, bias[0]);
    k[1] = centre8_bytes(s1, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(mn, 8))), dmin), 3,
                         bias[1]);
    const __m256i kall = _mm256_broadcastsi128_si256(_mm_unpacklo_epi64(k[0], k[1]));
    const __m256i m3 = _mm256_set1_epi8(3), lanes = _mm256_setr_m128i(_mm_setzero_si128(), _mm_set1_epi8(1));
    for (int n = 0; n < 2; ++n) {
      const __m256i v = load256(p + 16 + 32 * n);
      for (int j = 0; j < 4; ++j) {
        const int m = 4 * n + j;   // runs 2m (low lane) and 2m + 1 (high lane)
        const __m256i kv =
            _mm256_shuffle_epi8(kall, _mm256_add_epi8(lanes, _mm256_set1_epi8(static_cast<char>(2 * m))));
        store256(q + 32 * m, _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(v, 2 * j), m3), kv));
      }
    }
    return _mm256_fmadd_ps(bias[0], _mm256_loadu_ps(xs), _mm256_mul_ps(bias[1], _mm256_loadu_ps(xs + 8)));
  }
};

// q3_k: q2_k's 2-bit layout, minus 4 where the hmask bit (bit 4n + j of hmask byte l) is clear;
// 16 signed 6-bit scales (offset 32), no min.
struct Q3K {
  static constexpr int kElems = 256, kBytes = 110;
  static constexpr bool kBias = false;
  static __m256 unpack(const uint8_t* p, const float*, int8_t* q, float* s) {
    const __m128i sc = kq::q3k_scales(p + 96);
    const __m256 d = _mm256_set1_ps(load_f16(p + 108));
    _mm256_store_ps(s, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sc)), d));
    _mm256_store_ps(s + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(sc, 8))), d));
    const __m256i hm = load256(p), m3 = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4), zero = _mm256_setzero_si256();
    for (int n = 0; n < 2; ++n) {
      const __m256i v = load256(p + 32 + 32 * n);
      for (int j = 0; j < 4; ++j) {
        const __m256i clear =
            _mm256_cmpeq_epi8(_mm256_and_si256(hm, _mm256_set1_epi8(static_cast<char>(1 << (4 * n + j)))), zero);
        store256(q + 32 * (4 * n + j),
                 _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(v, 2 * j), m3), _mm256_and_si256(clear, four)));
      }
    }
    return _mm256_setzero_ps();
  }
};

// q4_k and q5_k (kQ5: the fifth bit of element 64c + l is bit 2c of qh[l], of 64c + 32 + l bit
// 2c + 1): 8 groups of 32, the low nibbles of qs[32c..] then the high nibbles, 6-bit scales and
// mins; w = d*sc*q - dmin*m.
template <bool kQ5>
struct Q4K {
  static constexpr int kElems = 256, kBytes = kQ5 ? 176 : 144, kQs = kQ5 ? 48 : 16;
  static constexpr bool kBias = true;
  static __m256 unpack(const uint8_t* p, const float* xs, int8_t* q, float* s) {
    const __m128i sm = kq::k4_scales_mins(p + 4);   // 8 scales, 8 mins
    const __m256 sc = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(sm)), _mm256_set1_ps(load_f16(p)));
    const __m256 mn = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(sm, 8))),
                                    _mm256_set1_ps(-load_f16(p + 2)));
    pair_scales(sc, s);
    __m256 bias;
    const __m256i k = _mm256_broadcastsi128_si256(centre8_bytes(sc, mn, kQ5 ? 31 : 15, bias));   // k_g in byte g
    const __m256i m4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
    for (int c = 0; c < 4; ++c) {
      const __m256i v = load256(p + kQs + 32 * c);
      __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
      if constexpr (kQ5) {
        const __m256i qh = load256(p + 16);
        lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c), one), 4));
        hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c + 1), one), 4));
      }
      store256(q + 64 * c, _mm256_sub_epi8(lo, _mm256_shuffle_epi8(k, _mm256_set1_epi8(static_cast<char>(2 * c)))));
      store256(q + 64 * c + 32,
               _mm256_sub_epi8(hi, _mm256_shuffle_epi8(k, _mm256_set1_epi8(static_cast<char>(2 * c + 1)))));
    }
    return _mm256_mul_ps(bias, group_xsums(xs));
  }
};

// q6_k: per half n, element 128n + 32j + l takes a nibble of ql[64n + l (+32)] and bits 2j..2j+1
// of qh[32n + l]; codes - 32; 16 signed 8-bit scales.
struct Q6K {
  static constexpr int kElems = 256, kBytes = 210;
  static constexpr bool kBias = false;
  static __m256 unpack(const uint8_t* p, const float*, int8_t* q, float* s) {
    const __m256 d = _mm256_set1_ps(load_f16(p + 208));
    _mm256_store_ps(s, _mm256_mul_ps(_mm256_cvtepi32_ps(i8x8_to_i32(p + 192)), d));
    _mm256_store_ps(s + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(i8x8_to_i32(p + 200)), d));
    const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30), k32 = _mm256_set1_epi8(32);
    for (int n = 0; n < 2; ++n) {
      const __m256i A = load256(p + 64 * n), B = load256(p + 64 * n + 32), H = load256(p + 128 + 32 * n);
      int8_t* o = q + 128 * n;
      store256(o, _mm256_sub_epi8(
                      _mm256_or_si256(_mm256_and_si256(A, m4), _mm256_and_si256(_mm256_slli_epi16(H, 4), m30)), k32));
      store256(o + 32,
               _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(B, m4), _mm256_and_si256(_mm256_slli_epi16(H, 2), m30)),
                               k32));
      store256(o + 64,
               _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(A, 4), m4), _mm256_and_si256(H, m30)),
                               k32));
      store256(o + 96, _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(B, 4), m4),
                                                       _mm256_and_si256(_mm256_srli_epi16(H, 2), m30)),
                                       k32));
    }
    return _mm256_setzero_ps();
  }
};

// iq4_xs: 8 groups of 32 (an iq4_nl block's nibble order), 6-bit scales offset 32 from scales_l's
// nibble and scales_h's bit pair; the codes index the iq4 values.
struct Iq4Xs {
  static constexpr int kElems = 256, kBytes = 136;
  static constexpr bool kBias = false;
  static __m256 unpack(const uint8_t* p, const float*, int8_t* q, float* s) {
    const uint32_t sh = load_u16(p + 2), sl = load_u32(p + 4);
    alignas(32) int32_t ls[8];
    for (int g = 0; g < 8; ++g) ls[g] = static_cast<int>(((sl >> (4 * g)) & 0xF) | (((sh >> (2 * g)) & 3) << 4)) - 32;
    pair_scales(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(ls))),
                              _mm256_set1_ps(load_f16(p))),
                s);
    const __m256i table = iq4_bytes();
    for (int g = 0; g < 8; ++g) store256(q + 32 * g, _mm256_shuffle_epi8(table, nibbles32(p + 8 + 16 * g)));
    return _mm256_setzero_ps();
  }
};
}   // namespace av
#endif

#if AKVIEW_CPU_VBMI
// AVX-512 VBMI kernels over R rows at a time: per super-block the scales (and mins) of a row are
// unpacked with vector ops into an aligned float array and a min vector dotted with xsum16; codes
// are unpacked 64 at a time with byte ops and turned into floats 16 at a time by one vpermb:
// one_plus floats for the unsigned codes of q4_k / q5_k / q6_k (no conversion), top_f32 (vpermb +
// vcvtdq2ps, code * 2^24) for q2_k / q3_k. Two accumulators per row, one per parity of run.
namespace vb {

constexpr int kAhead = 8;   // super-blocks prefetched ahead in each row (prefetch_span)
constexpr int kChunk = 8;   // super-blocks whose scales are prepared before their dot loop

// The sums of x over the 8 sub-blocks of a super-block, twice: lanes j and 8+j hold the sum of
// x over sub-block j (32 elements = 16-runs 2j and 2j+1 of xs). Shared by all rows.
inline __m512 k4_xsums(__m512 xs) {
  const __m512i even = _mm512_set_epi32(14, 12, 10, 8, 6, 4, 2, 0, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_set_epi32(15, 13, 11, 9, 7, 5, 3, 1, 15, 13, 11, 9, 7, 5, 3, 1);
  return _mm512_add_ps(_mm512_permutexvar_ps(even, xs), _mm512_permutexvar_ps(odd, xs));
}

// Per-row constants of a q4_k / q5_k super-block for one_plus codes of `levels` steps (16 or 32),
// sub-block j centred on k_j (cpu_centre.hpp: w = d1 (q - k) + (d1 k - m1), d1 = d*sc_j, m1 =
// dmin*m_j): scf[j] = levels*d1, kc[j] = 1 + k_j/levels (one_plus of k_j, subtracted from the code
// floats); returns the sub-block terms (m1 - d1 k_j) * xs_j, subtracted once summed.
inline __m256 k4_prep_centred(const uint8_t* p, __m256 xs8, float levels, float* scf, float* kc) {
  const __m128 dd = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(load_u32(p))));        // [d, dmin]
  const __m512 sm = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(kq::k4_scales_mins(p + 4)));   // 8 scales, 8 mins
  const __m256 d1 = _mm256_mul_ps(_mm512_castps512_ps256(sm), _mm256_broadcastss_ps(dd));
  const __m256 m1 = _mm256_mul_ps(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(sm), 1)),
                                  _mm256_broadcastss_ps(_mm_movehdup_ps(dd)));
  // k = round(m1 / d1) in [0, levels - 1], by rcp14 (cpu_centre.hpp, centre_block); max() gives 0 for 0 * inf.
  const __m256 q =
      _mm256_round_ps(_mm256_mul_ps(m1, _mm256_rcp14_ps(d1)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 k = _mm256_min_ps(_mm256_max_ps(q, _mm256_setzero_ps()), _mm256_set1_ps(levels - 1));
  _mm256_storeu_ps(scf, _mm256_mul_ps(d1, _mm256_set1_ps(levels)));
  _mm256_storeu_ps(kc, _mm256_fmadd_ps(k, _mm256_set1_ps(1.0f / levels), _mm256_set1_ps(1.0f)));
  return _mm256_mul_ps(_mm256_fnmadd_ps(d1, k, m1), xs8);
}

inline const uint8_t* row_ptr(const TensorView& v, int64_t r) {
  return v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
}

// Two runs of 16 one_plus codes, less the sub-block's one_plus k (kc), times x, times one scale, into acc.
inline __m512 two_runs_one(__m512i v, const MidIdx& ix, int k, const float* x, float sc, float kc, __m512 acc) {
  const __m512 kv = _mm512_set1_ps(kc);
  __m512 t = _mm512_mul_ps(_mm512_sub_ps(one_plus(v, ix.k[k], ix.one), kv), _mm512_loadu_ps(x));
  t = _mm512_fmadd_ps(_mm512_sub_ps(one_plus(v, ix.k[k + 1], ix.one), kv), _mm512_loadu_ps(x + 16), t);
  return _mm512_fmadd_ps(t, _mm512_set1_ps(sc), acc);
}

// q4_k, and q5_k (kQ5) which adds a fifth bit: element 64c+l (low nibble) has bit 2c of qh[l],
// 64c+32+l bit 2c+1. Per 128-element half h, the lo nibbles of bytes 0..31 / 32..63 are sub-blocks
// 4h / 4h+2 and the hi nibbles 4h+1 / 4h+3; codes become one_plus floats of 16 (32) levels.
template <bool kQ5, int R>
void k4_n(const CpuArgs& a, int64_t r, float* y) {
  constexpr int kBytes = kQ5 ? 176 : 144, kQs = kQ5 ? 48 : 16;
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 256;
  const MidIdx ix;
  const __m512i m4 = _mm512_set1_epi8(0x0F), m10 = _mm512_set1_epi8(0x10), m78 = _mm512_set1_epi8(0x78),
                m7c = _mm512_set1_epi8(0x7C), m80 = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i cnt[2][2] = {{counts2(0, 2), counts2(1, 3)}, {counts2(4, 6), counts2(5, 7)}};
  __m512 s0[R], s1[R];
  __m256 mn[R];
  // Scales and centre codes (16 floats per row and block: 8 scf, 8 kc) are prepared kChunk
  // super-blocks at a time before their dot loop: computed inside it, the chain from the scale
  // bytes to the first subtract was longer than the loop could hide; prepared for a whole row, the
  // row was read twice from memory.
  alignas(32) float pre[R][kChunk][16];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) {
    s0[i] = s1[i] = _mm512_setzero_ps();
    mn[i] = _mm256_setzero_ps();
  }
  for (int64_t b0 = 0; b0 < nb; b0 += kChunk) {
    const int64_t b1 = std::min<int64_t>(nb, b0 + kChunk);
    AKV_UNROLL
    for (int i = 0; i < R; ++i)
      for (int64_t b = b0; b < b1; ++b) {
        const __m256 xs8 = _mm512_castps512_ps256(k4_xsums(_mm512_loadu_ps(a.xsum16 + b * 16)));
        mn[i] = _mm256_add_ps(mn[i], k4_prep_centred(row_ptr(v, r + i) + b * kBytes, xs8, kQ5 ? 32.0f : 16.0f,
                                                     pre[i][b - b0], pre[i][b - b0] + 8));
      }
    for (int64_t b = b0; b < b1; ++b) {
      const float* xb = a.x + b * 256;
      AKV_UNROLL
      for (int i = 0; i < R; ++i) {
        const uint8_t* p = row_ptr(v, r + i) + b * kBytes;
        prefetch_span(p + kAhead * kBytes, kBytes);
        const float* scf = pre[i][b - b0];
        AKV_UNROLL
        for (int h = 0; h < 2; ++h) {
          const __m512i q = load512(p + kQs + 64 * h);
          __m512i lo, hi;
          if constexpr (kQ5) {
            const __m512i qh = bcast256(p + 16);
            const __m512i hl = _mm512_and_si512(_mm512_slli_epi16(_mm512_srlv_epi16(qh, cnt[h][0]), 4), m10);
            const __m512i hh = _mm512_and_si512(_mm512_slli_epi16(_mm512_srlv_epi16(qh, cnt[h][1]), 4), m10);
            lo = and_or(_mm512_slli_epi16(_mm512_ternarylogic_epi32(q, hl, m4, 0xEC), 2), m7c,
                        m80);   // ((q & m4) | hl) << 2
            hi = and_or(_mm512_slli_epi16(_mm512_ternarylogic_epi32(_mm512_srli_epi16(q, 4), hh, m4, 0xEC), 2), m7c,
                        m80);
          } else {
            lo = and_or(_mm512_slli_epi16(q, 3), m78, m80);
            hi = and_or(_mm512_srli_epi16(q, 1), m78, m80);
          }
          const float* x = xb + 128 * h;
          const float* sc = scf + 4 * h;
          const float* kh = scf + 8 + 4 * h;
          s0[i] = two_runs_one(lo, ix, 0, x, sc[0], kh[0], s0[i]);
          s1[i] = two_runs_one(hi, ix, 0, x + 32, sc[1], kh[1], s1[i]);
          s0[i] = two_runs_one(lo, ix, 2, x + 64, sc[2], kh[2], s0[i]);
          s1[i] = two_runs_one(hi, ix, 2, x + 96, sc[3], kh[3], s1[i]);
        }
      }
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i) y[r + i] = hsum512(_mm512_add_ps(s0[i], s1[i])) - hsum(mn[i]);
}

// q6_k: per 128-element half n, A = elements 0..63 and B = 64..127 as one_plus codes 1 + c/64
// (c = the unsigned 6-bit code); (1 + c/64) - 1.5 = (c - 32)/64 exactly, so scf holds 64*d*sc and
// no term of sum(x) is left to cancel (a factorised 96*d*sc*sum(x) loses rows whose weights are
// mostly zero).
// The two code-to-float forms, chosen by the index set: one_plus codes less 1.5 (MidIdx: q6_k) and
// signed codes in the top byte (TopIdx: q2_k, q3_k). Run k is bytes 16k..16k+15 of v.
inline __m512 run_floats(__m512i v, const MidIdx& ix, int k) {
  return _mm512_sub_ps(one_plus(v, ix.k[k], ix.one), _mm512_set1_ps(1.5f));
}
inline __m512 run_floats(__m512i v, const TopIdx& ix, int k) { return top_f32(v, ix.k[k]); }
inline __m512 one_run(__m512i v, const auto& ix, int k, const float* x, float sc, __m512 acc) {
  return _mm512_fmadd_ps(_mm512_mul_ps(run_floats(v, ix, k), _mm512_loadu_ps(x)), _mm512_set1_ps(sc), acc);
}
// Eight runs of 16 (A: elements 0..63, B: 64..127 of a 128-element half) with per-run scales.
template <class Idx>
inline void eight_runs(__m512i A, __m512i B, const Idx& ix, const float* x0, const float* sc, __m512& s0, __m512& s1) {
  s0 = one_run(A, ix, 0, x0, sc[0], s0);
  s1 = one_run(A, ix, 1, x0 + 16, sc[1], s1);
  s0 = one_run(A, ix, 2, x0 + 32, sc[2], s0);
  s1 = one_run(A, ix, 3, x0 + 48, sc[3], s1);
  s0 = one_run(B, ix, 0, x0 + 64, sc[4], s0);
  s1 = one_run(B, ix, 1, x0 + 80, sc[5], s1);
  s0 = one_run(B, ix, 2, x0 + 96, sc[6], s0);
  s1 = one_run(B, ix, 3, x0 + 112, sc[7], s1);
}

template <int R>
void q6_k_n(const CpuArgs& a, int64_t r, float* y) {
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 256;
  const MidIdx ix;
  const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30), m7e = _mm512_set1_epi8(0x7E),
                m80 = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i cA = counts2(4, 2), cB = counts2(0, 2);
  __m512 s0[R], s1[R];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) s0[i] = s1[i] = _mm512_setzero_ps();
  alignas(64) float scf[R][16];
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = a.x + b * 256;
    AKV_UNROLL
    for (int i = 0; i < R; ++i) {
      const uint8_t* p = row_ptr(v, r + i) + b * 210;
      prefetch_span(p + kAhead * 210, 210);
      const float d = load_f16(p + 208);
      const __m512 sc = _mm512_cvtepi32_ps(i8x16_to_i32(p + 192));
      _mm512_store_ps(scf[i], _mm512_mul_ps(sc, _mm512_set1_ps(64.0f * d)));
      AKV_UNROLL
      for (int n = 0; n < 2; ++n) {
        const __m512i l = load512(p + 64 * n), hh = bcast256(p + 128 + 32 * n);
        const __m512i A6 = _mm512_ternarylogic_epi32(l, _mm512_and_si512(_mm512_sllv_epi16(hh, cA), m30), m4, 0xEC);
        const __m512i B6 = _mm512_ternarylogic_epi32(_mm512_srli_epi16(l, 4),
                                                     _mm512_and_si512(_mm512_srlv_epi16(hh, cB), m30), m4, 0xEC);
        const __m512i A = and_or(_mm512_slli_epi16(A6, 1), m7e, m80), B = and_or(_mm512_slli_epi16(B6, 1), m7e, m80);
        eight_runs(A, B, ix, xb + 128 * n, scf[i] + 8 * n, s0[i], s1[i]);
      }
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i) y[r + i] = hsum512(_mm512_add_ps(s0[i], s1[i]));
}

// q2_k: element 128n + 32j + l is (qs[32n + l] >> 2j) & 3; run k has scale sc[k] & 15, min sc[k] >> 4.
// Run k is centred on its code k_k (cpu_centre.hpp), subtracted from the code bytes: kb holds the
// 16 k_k, spread over the 4 runs of A (runs 8n..8n+3) and of B (8n+4..8n+7) by one vpermb each.
inline __m512i run_spread(int first_run) {
  alignas(64) int8_t idx[64];
  for (int i = 0; i < 64; ++i) idx[i] = static_cast<int8_t>(first_run + i / 16);
  return _mm512_load_si512(idx);
}
template <int R>
void q2_k_n(const CpuArgs& a, int64_t r, float* y) {
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 256;
  const TopIdx ix;
  const __m512i m3 = _mm512_set1_epi8(3);
  const __m512i cA = counts2(0, 2), cB = counts2(4, 6);
  const __m128i m4x = _mm_set1_epi8(0x0F);
  const __m512i spread[2][2] = {{run_spread(0), run_spread(4)}, {run_spread(8), run_spread(12)}};
  __m512 s0[R], s1[R], mn[R];
  // Run scales (16 floats) and centre codes (16 bytes) are prepared kChunk super-blocks at a time
  // before their dot loop (as in k4_n).
  alignas(64) float scf_pre[R][kChunk][16];
  alignas(16) uint8_t k_pre[R][kChunk][16];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) s0[i] = s1[i] = mn[i] = _mm512_setzero_ps();
  for (int64_t b0 = 0; b0 < nb; b0 += kChunk) {
    const int64_t b1 = std::min<int64_t>(nb, b0 + kChunk);
    AKV_UNROLL
    for (int i = 0; i < R; ++i)
      for (int64_t b = b0; b < b1; ++b) {
        const uint8_t* p = row_ptr(v, r + i) + b * 84;
        const float d = load_f16(p + 80), dmin = load_f16(p + 82);
        const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m512 d1 =
            _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(sc, m4x))), _mm512_set1_ps(d));
        const __m512 m1 = _mm512_mul_ps(
            _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(sc, 4), m4x))), _mm512_set1_ps(dmin));
        // k = round(m1 / d1) in [0, 3], by rcp14 (centre_block); max() gives 0 for 0 * inf.
        const __m512 kq =
            _mm512_roundscale_ps(_mm512_mul_ps(m1, _mm512_rcp14_ps(d1)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m512 k = _mm512_min_ps(_mm512_max_ps(kq, _mm512_setzero_ps()), _mm512_set1_ps(3.0f));
        _mm_store_si128(reinterpret_cast<__m128i*>(k_pre[i][b - b0]), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(k)));
        _mm512_store_ps(scf_pre[i][b - b0], _mm512_mul_ps(d1, _mm512_set1_ps(kTop)));
        mn[i] = _mm512_fmadd_ps(_mm512_fnmadd_ps(d1, k, m1), _mm512_loadu_ps(a.xsum16 + b * 16), mn[i]);
      }
    for (int64_t b = b0; b < b1; ++b) {
      const float* xb = a.x + b * 256;
      AKV_UNROLL
      for (int i = 0; i < R; ++i) {
        const uint8_t* p = row_ptr(v, r + i) + b * 84;
        prefetch_span(p + kAhead * 84, 84);
        const __m512i kb = _mm512_castsi128_si512(_mm_load_si128(reinterpret_cast<const __m128i*>(k_pre[i][b - b0])));
        const float* scf = scf_pre[i][b - b0];
        AKV_UNROLL
        for (int n = 0; n < 2; ++n) {
          const __m512i q = bcast256(p + 16 + 32 * n);
          const __m512i A = _mm512_sub_epi8(_mm512_and_si512(_mm512_srlv_epi16(q, cA), m3),
                                            _mm512_permutexvar_epi8(spread[n][0], kb));
          const __m512i B = _mm512_sub_epi8(_mm512_and_si512(_mm512_srlv_epi16(q, cB), m3),
                                            _mm512_permutexvar_epi8(spread[n][1], kb));
          eight_runs(A, B, ix, xb + 128 * n, scf + 8 * n, s0[i], s1[i]);
        }
      }
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i) y[r + i] = hsum512(_mm512_sub_ps(_mm512_add_ps(s0[i], s1[i]), mn[i]));
}

// q3_k: element 128n + 32j + l is ((qs[32n + l] >> 2j) & 3) | (bit 4n+j of hmask[l]) << 2, minus 4;
// run k has the signed 6-bit scale s_k - 32.
template <int R>
void q3_k_n(const CpuArgs& a, int64_t r, float* y) {
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 256;
  const TopIdx ix;
  const __m512i m3 = _mm512_set1_epi8(3), m4 = _mm512_set1_epi8(4), k4 = _mm512_set1_epi8(4);
  const __m512i cA = counts2(0, 2), cB = counts2(4, 6);
  // hmask bit 4n+j moved to bit 2: shift right by (4n+j) then left by 2 -> right by 4n+j-2 or left.
  const __m512i hc[2][2] = {{counts2(0, 1), counts2(2, 3)}, {counts2(4, 5), counts2(6, 7)}};
  __m512 s0[R], s1[R];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) s0[i] = s1[i] = _mm512_setzero_ps();
  alignas(64) float scf[R][16];
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = a.x + b * 256;
    AKV_UNROLL
    for (int i = 0; i < R; ++i) {
      const uint8_t* p = row_ptr(v, r + i) + b * 110;
      prefetch_span(p + kAhead * 110, 110);
      const float d = load_f16(p + 108) * kTop;
      constexpr uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f;
      uint32_t aux[4];
      std::memcpy(aux, p + 96, 12);
      const uint32_t tmp = aux[2];
      aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
      aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
      aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
      aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
      const __m128i sc = _mm_sub_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(aux)), _mm_set1_epi8(32));
      _mm512_store_ps(scf[i], _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(sc)), _mm512_set1_ps(d)));
      const __m512i hm = bcast256(p);
      AKV_UNROLL
      for (int n = 0; n < 2; ++n) {
        const __m512i q = bcast256(p + 32 + 32 * n);
        const __m512i hA = _mm512_and_si512(_mm512_slli_epi16(_mm512_srlv_epi16(hm, hc[n][0]), 2), m4);
        const __m512i hB = _mm512_and_si512(_mm512_slli_epi16(_mm512_srlv_epi16(hm, hc[n][1]), 2), m4);
        const __m512i A = _mm512_sub_epi8(_mm512_ternarylogic_epi32(_mm512_srlv_epi16(q, cA), hA, m3, 0xEC), k4);
        const __m512i B = _mm512_sub_epi8(_mm512_ternarylogic_epi32(_mm512_srlv_epi16(q, cB), hB, m3, 0xEC), k4);
        eight_runs(A, B, ix, xb + 128 * n, scf[i] + 8 * n, s0[i], s1[i]);
      }
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i) y[r + i] = hsum512(_mm512_add_ps(s0[i], s1[i]));
}

// iq4_xs over R rows: 8 sub-blocks of 32 with 6-bit scales (ls - 32) * d; the codes look up their
// values by vpermps (iq4_block32).
template <int R>
void iq4_xs_n(const CpuArgs& a, int64_t r, float* y) {
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 256;
  const __m512 table = iq4_table();
  __m512 s[R];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) s[i] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = a.x + b * 256;
    AKV_UNROLL
    for (int i = 0; i < R; ++i) {
      const uint8_t* p = row_ptr(v, r + i) + b * 136;
      prefetch_span(p + kAhead * 136, 136);
      const float d = load_f16(p);
      const uint32_t sh = load_u16(p + 2), sl = load_u32(p + 4);
      AKV_UNROLL
      for (int ib = 0; ib < 8; ++ib) {
        const int ls = static_cast<int>(((sl >> (4 * ib)) & 0xF) | (((sh >> (2 * ib)) & 3) << 4));
        s[i] = iq4_block32(p + 8 + 16 * ib, xb + 32 * ib, d * static_cast<float>(ls - 32), table, s[i]);
      }
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i) y[r + i] = hsum512(s[i]);
}

}   // namespace vb
#endif

#if AKVIEW_CPU_VBMI
constexpr int kR = 2;   // rows per pass
constexpr std::array kRows = {
    CpuKernelRow{TypeId::q2_k, &rows_by<kR, &vb::q2_k_n<kR>, &vb::q2_k_n<1>>, nullptr, nullptr, "avx512vbmi x2 rows"},
    CpuKernelRow{TypeId::q3_k, &rows_by<kR, &vb::q3_k_n<kR>, &vb::q3_k_n<1>>, nullptr, nullptr, "avx512vbmi x2 rows"},
    CpuKernelRow{TypeId::q4_k, &rows_by<kR, &vb::k4_n<false, kR>, &vb::k4_n<false, 1>>, nullptr, nullptr,
                 "avx512vbmi x2 rows"},
    CpuKernelRow{TypeId::q5_k, &rows_by<kR, &vb::k4_n<true, kR>, &vb::k4_n<true, 1>>, nullptr, nullptr,
                 "avx512vbmi x2 rows"},
    CpuKernelRow{TypeId::q6_k, &rows_by<kR, &vb::q6_k_n<kR>, &vb::q6_k_n<1>>, nullptr, nullptr, "avx512vbmi x2 rows"},
    CpuKernelRow{TypeId::iq4_xs, &rows_by<kR, &vb::iq4_xs_n<kR>, &vb::iq4_xs_n<1>>, nullptr, nullptr, "avx512 x2 rows"},
};
#elif AKVIEW_CPU_AVX2
constexpr int kR = 4;   // rows per pass
template <class F>
constexpr CpuRowsFn kAvx2 = &rows_by<kR, &unpacked_n<F, kR>, &unpacked_n<F, 1>>;
constexpr std::array kRows = {
    CpuKernelRow{TypeId::q2_k, kAvx2<av::Q2K>, nullptr, nullptr, "avx2 x4 rows"},
    CpuKernelRow{TypeId::q3_k, kAvx2<av::Q3K>, nullptr, nullptr, "avx2 x4 rows"},
    CpuKernelRow{TypeId::q4_k, kAvx2<av::Q4K<false>>, nullptr, nullptr, "avx2 x4 rows"},
    CpuKernelRow{TypeId::q5_k, kAvx2<av::Q4K<true>>, nullptr, nullptr, "avx2 x4 rows"},
    CpuKernelRow{TypeId::q6_k, kAvx2<av::Q6K>, nullptr, nullptr, "avx2 x4 rows"},
    CpuKernelRow{TypeId::iq4_xs, kAvx2<av::Iq4Xs>, nullptr, nullptr, "avx2 x4 rows"},
};
#else
constexpr std::array<CpuKernelRow, 0> kRows = {};
#endif

}   // namespace

std::span<const CpuKernelRow> cpu_kernels_kquant() { return kRows; }

}   // namespace akview::compute
