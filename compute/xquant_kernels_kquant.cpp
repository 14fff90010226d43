// x-quant kernels for ggml's 256-element super-blocks against q8_K x (FORMATS.md §2.7, §6):
//   q2_k [scales 16][qs 64][d][dmin]      q3_k [hmask 32][qs 64][scales 12][d]
//   q4_k [d][dmin][scales 12][qs 128]     q5_k [d][dmin][scales 12][qh 32][qs 128]
//   q6_k [ql 128][qh 64][scales i8 16][d] iq4_xs [d][scales_h u16][scales_l 4][qs 128]
// Per super-block, with c_j the unsigned weight code, sc the sub-block scale, m the sub-block
// min (or zero point) and bsums the q8_K sums of 16 x codes:
//   P = sum_sub sc * sum_j c_j x_j       (int32, exact)
//   M = sum_sub m * sum_j x_j            (int32, exact; from bsums)
//   y += (d_x d) * P - (d_x dmin) * M    (f32)
// q3_k, q6_k and iq4_xs store signed codes: c = q + z with the zero points 4, 32 and 128, and
// z * sum(sc * bsums) comes off P in integers, so y += (d_x d) * P. The SIMD kernels sum P and M
// in lanes, each lane over fixed elements of the block, and take the float step per lane (as
// ggml does); a zero point comes off each pair of products before the scales (z times the x pair
// sums, XqInput::zpair), so every lane is exact over its own elements and no lanes cancel.
#include <array>
#include <cstring>

#include "compute/cpu_simd.hpp"
#include "compute/kquant_scales_simd.hpp"
#include "compute/xquant_kernels.hpp"
#include "core/decode/iq_grids.hpp"
#include "core/decode/kquant_scales.hpp"

namespace akview::compute {
namespace {
using simd::load_f16;
using simd::load_u16;
using simd::load_u32;

// One super-block unpacked for the scalar kernels: codes, per-16 scale and offset, dmin factor.
struct Unpacked {
  uint8_t c[256];
  int32_t sc[16], m[16];
  float d, dmin;
  bool zero_point = false;   // m is a zero point times sc, taken off P in integers (dmin unused)
};

void unpack_q2_k(const uint8_t* p, Unpacked& u) {
  for (int k = 0; k < 16; ++k) u.sc[k] = p[k] & 0xF, u.m[k] = p[k] >> 4;
  for (int n = 0; n < 2; ++n)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 32; ++l) u.c[128 * n + 32 * j + l] = (p[16 + 32 * n + l] >> (2 * j)) & 3;
  u.d = load_f16(p + 80), u.dmin = load_f16(p + 82);
}
void unpack_q3_k(const uint8_t* p, Unpacked& u) {   // c = q + 4 in 0..7, zero point 4
  int8_t s[16];
  decode::q3_k_unpack_scales(p + 96, s);
  for (int k = 0; k < 16; ++k) u.sc[k] = s[k] - 32, u.m[k] = 4 * (s[k] - 32);
  for (int n = 0; n < 2; ++n)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 32; ++l)
        u.c[128 * n + 32 * j + l] =
            static_cast<uint8_t>(((p[32 + 32 * n + l] >> (2 * j)) & 3) | (((p[l] >> (4 * n + j)) & 1) << 2));
  u.d = load_f16(p + 108), u.dmin = 0, u.zero_point = true;
}
template <bool kQ5>
void unpack_q45_k(const uint8_t* p, Unpacked& u) {
  const uint8_t* qs = p + (kQ5 ? 48 : 16);
  for (int c = 0; c < 4; ++c) {
    uint8_t sc0, m0, sc1, m1;
    decode::kquant_scale_min(2 * c, p + 4, &sc0, &m0);
    decode::kquant_scale_min(2 * c + 1, p + 4, &sc1, &m1);
    u.sc[4 * c] = u.sc[4 * c + 1] = sc0, u.m[4 * c] = u.m[4 * c + 1] = m0;
    u.sc[4 * c + 2] = u.sc[4 * c + 3] = sc1, u.m[4 * c + 2] = u.m[4 * c + 3] = m1;
    for (int l = 0; l < 32; ++l) {
      const int h0 = kQ5 ? ((p[16 + l] >> (2 * c)) & 1) << 4 : 0, h1 = kQ5 ? ((p[16 + l] >> (2 * c + 1)) & 1) << 4 : 0;
      u.c[64 * c + l] = static_cast<uint8_t>((qs[32 * c + l] & 0xF) | h0);
      u.c[64 * c + 32 + l] = static_cast<uint8_t>((qs[32 * c + l] >> 4) | h1);
    }
  }
  u.d = load_f16(p), u.dmin = load_f16(p + 2);
}
void unpack_q6_k(const uint8_t* p, Unpacked& u) {   // c = q + 32 in 0..63, zero point 32
  const int8_t* s = reinterpret_cast<const int8_t*>(p + 192);
  for (int k = 0; k < 16; ++k) u.sc[k] = s[k], u.m[k] = 32 * s[k];
  for (int n = 0; n < 2; ++n)
    for (int l = 0; l < 32; ++l) {
      const uint8_t* ql = p + 64 * n;
      const uint8_t qh = p[128 + 32 * n + l];
      uint8_t* c = u.c + 128 * n;
      c[l] = static_cast<uint8_t>((ql[l] & 0xF) | ((qh & 3) << 4));
      c[l + 32] = static_cast<uint8_t>((ql[l + 32] & 0xF) | (((qh >> 2) & 3) << 4));
      c[l + 64] = static_cast<uint8_t>((ql[l] >> 4) | (((qh >> 4) & 3) << 4));
      c[l + 96] = static_cast<uint8_t>((ql[l + 32] >> 4) | (((qh >> 6) & 3) << 4));
    }
  u.d = load_f16(p + 208), u.dmin = 0, u.zero_point = true;
}
void unpack_iq4_xs(const uint8_t* p, Unpacked& u) {   // c = value + 128, zero point 128
  const uint16_t h = load_u16(p + 2);
  for (int ib = 0; ib < 8; ++ib) {
    const int ls = (((p[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) | (((h >> (2 * ib)) & 3) << 4)) - 32;
    u.sc[2 * ib] = u.sc[2 * ib + 1] = ls, u.m[2 * ib] = u.m[2 * ib + 1] = 128 * ls;
    for (int j = 0; j < 16; ++j) {
      u.c[32 * ib + j] = static_cast<uint8_t>(decode::iq::kIq4nlValues[p[8 + 16 * ib + j] & 0xF] + 128);
      u.c[32 * ib + 16 + j] = static_cast<uint8_t>(decode::iq::kIq4nlValues[p[8 + 16 * ib + j] >> 4] + 128);
    }
  }
  u.d = load_f16(p), u.dmin = 0, u.zero_point = true;
}

using UnpackFn = void (*)(const uint8_t*, Unpacked&);
template <int kBytes, UnpackFn kUnpack>
void rows_scalar(const XqArgs& a, int64_t r0, int64_t r1, float* y) {
  const TensorView& v = *a.view;
  const XqInput& x = *a.x;
  const int64_t nb = v.n_cols / 256;
  Unpacked u;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
    float acc = 0;
    for (int64_t b = 0; b < nb; ++b) {
      kUnpack(row + b * kBytes, u);
      const int8_t* xc = x.codes.data() + 256 * b;
      const int16_t* bs = x.bsum16.data() + 16 * b;
      int32_t P = 0, M = 0;
      for (int k = 0; k < 16; ++k) {
        int32_t s = 0;
        for (int j = 16 * k; j < 16 * k + 16; ++j) s += u.c[j] * xc[j];
        P += u.sc[k] * s;
        M += u.m[k] * bs[k];
      }
      if (u.zero_point) P -= M, M = 0;   // (a q4_K/q5_K dmin of 0 is a real min factor: d*P - 0*M)
      acc += x.d[b] * u.d * static_cast<float>(P) - x.d[b] * u.dmin * static_cast<float>(M);
    }
    y[r] = acc;
  }
}

#if AKVIEW_XQ_AVX2
// AVX2 kernels for the K-quants and IQ4_XS: codes unpacked 32 at a time in registers, P (and M) as 8
// int32 lanes (exact), then per lane acc += (d_x d) * P - (d_x dmin) * M; the lanes are summed at
// the end of the row.
struct LaneAcc {
  __m256 p = _mm256_setzero_ps(), m = _mm256_setzero_ps();
  float sum() const { return simd::hsum(_mm256_sub_ps(p, m)); }
};
inline void step(LaneAcc& acc, __m256i P, float dp) {
  acc.p = _mm256_fmadd_ps(_mm256_cvtepi32_ps(P), _mm256_set1_ps(dp), acc.p);
}
// dd points at the block's f16 d, with dmin right after it.
inline void step_min(LaneAcc& acc, __m256i P, __m256i M, float dx, const uint8_t* dd) {
  const __m128 d = _mm_mul_ps(_mm_set1_ps(dx),
                              _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(load_u32(dd)))));   // [d_x d, d_x dmin]
  acc.p = _mm256_fmadd_ps(_mm256_cvtepi32_ps(P), _mm256_broadcastss_ps(d), acc.p);
  acc.m = _mm256_fmadd_ps(_mm256_cvtepi32_ps(M), _mm256_broadcastss_ps(_mm_movehdup_ps(d)), acc.m);
}
// 32 codes c with the zero point z against 32 x codes: the 16 pair sums of (c - z) x, as maddubs (u8
// by s8; codes below 64, so no pair saturates) less z times the x pair sums (zx2, XqInput::zpair).
inline __m256i pairs_less_zero(__m256i c, const int8_t* xc, const int16_t* zx2) {
  const __m256i p = _mm256_maddubs_epi16(c, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xc)));
  return _mm256_sub_epi16(p, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(zx2)));
}

// Word shuffle picking scale words 2t (low 128 bits) and 2t + 1 (high 128 bits) of 8 scales held in
// both lanes: the scales of two sub-blocks of 16 whose 32 codes share a vector.
inline __m256i pair_idx(int t) {
  return _mm256_set_m128i(_mm_set1_epi16(static_cast<short>(0x0100 * (4 * t + 3) + 4 * t + 2)),
                          _mm_set1_epi16(static_cast<short>(0x0100 * (4 * t + 1) + 4 * t)));
}
// 16 scales as words: the first 8 (lo) and the last 8 (hi), each in both lanes.
struct Scales16 {
  __m256i lo, hi;
  explicit Scales16(__m256i w) : lo(_mm256_permute2x128_si256(w, w, 0x00)), hi(_mm256_permute2x128_si256(w, w, 0x11)) {}
};
// The fifth (q5_K) or third (q3_K) code bit: bit `bit` of each byte of h, moved to `to` (0x10 / 0x04).
template <int kTo>
inline __m256i bit_to(__m256i h, int bit) {
  constexpr int kPos = kTo == 0x10 ? 4 : 2;
  const __m256i at = bit < kPos ? _mm256_slli_epi16(h, kPos - bit) : bit > kPos ? _mm256_srli_epi16(h, bit - kPos) : h;
  return _mm256_and_si256(at, _mm256_set1_epi8(kTo));
}

// q4_K / q5_K: sub-block 2c is the low nibbles of qs[32c..32c+31], 2c+1 the high ones (q5_K: bit 2c
// and 2c+1 of qh[l] is bit 4). The 6-bit scales and mins are unpacked with byte shuffles; each pair
// sum of codes times x (maddubs) is multiplied by its sub-block's scale in the madd; M is the mins
// times the sub-blocks' x sums (from bsums) by one madd.
template <bool kQ5>
void q45_k_avx2(const uint8_t* p, const XqInput& x, int64_t b, LaneAcc& acc) {
  const uint8_t* qs = p + (kQ5 ? 48 : 16);
  const int8_t* xc = x.codes.data() + 256 * b;
  const int16_t* bs = x.bsum16.data() + 16 * b;
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i qh = kQ5 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16)) : _mm256_setzero_si256();
  const __m128i sm = kq::k4_scales_mins(p + 4);
  // the x sums of the 8 sub-blocks of 32 (int16: at most 32 * 128)
  const __m128i xg = _mm_hadd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bs)),
                                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(bs + 8)));
  const __m256i M = _mm256_zextsi128_si256(_mm_madd_epi16(_mm_cvtepu8_epi16(_mm_srli_si128(sm, 8)), xg));
  const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm));   // 8 scales as words, in both lanes
  __m256i P = _mm256_setzero_si256();
  for (int c = 0; c < 4; ++c) {
    const __m256i s0 = _mm256_shuffle_epi8(sc, _mm256_set1_epi16(static_cast<short>(0x0100 * (4 * c + 1) + 4 * c)));
    const __m256i s1 = _mm256_shuffle_epi8(sc, _mm256_set1_epi16(static_cast<short>(0x0100 * (4 * c + 3) + 4 * c + 2)));
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * c));
    __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
    if constexpr (kQ5) {
      lo = _mm256_or_si256(lo, bit_to<0x10>(qh, 2 * c));
      hi = _mm256_or_si256(hi, bit_to<0x10>(qh, 2 * c + 1));
    }
    const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xc + 64 * c));
    const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xc + 64 * c + 32));
    P = _mm256_add_epi32(P, _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(lo, x0), s0),
                                             _mm256_madd_epi16(_mm256_maddubs_epi16(hi, x1), s1)));
  }
  step_min(acc, P, M, x.d[b], p);
}

// q6_K: c = q + 32 from 4 low bits in ql and 2 high bits in qh; 16 signed scales of 16 elements
// (words, picked per vector by pair_idx); the zero point 32 off each pair of products.
void q6_k_avx2(const uint8_t* p, const XqInput& x, int64_t b, LaneAcc& acc) {
  const int8_t* xc = x.codes.data() + 256 * b;
  const int16_t* zx2 = x.zpair.data() + 128 * b;
  const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
  const Scales16 sc(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 192))));
  __m256i P = _mm256_setzero_si256();
  for (int n = 0; n < 2; ++n) {
    const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64 * n));
    const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64 * n + 32));
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 128 + 32 * n));
    const __m256i c[4] = {
        _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(h, 4), m30)),
        _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(h, 2), m30)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(h, m30)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), _mm256_and_si256(_mm256_srli_epi16(h, 2), m30)),
    };
    const __m256i scn = n ? sc.hi : sc.lo;
    for (int t = 0; t < 4; ++t) {   // sub-blocks 8n + 2t and 8n + 2t + 1
      const __m256i pr = pairs_less_zero(c[t], xc + 128 * n + 32 * t, zx2 + 64 * n + 16 * t);
      P = _mm256_add_epi32(P, _mm256_madd_epi16(pr, _mm256_shuffle_epi8(scn, pair_idx(t))));
    }
  }
  step(acc, P, x.d[b] * load_f16(p + 208));
}

// q2_K: element 128n + 32j + l is (qs[32n + l] >> 2j) & 3, in sub-blocks 8n + 2j (l < 16) and
// 8n + 2j + 1; scale p[k] & 15, min p[k] >> 4 (M by one madd with bsums).
void q2_k_avx2(const uint8_t* p, const XqInput& x, int64_t b, LaneAcc& acc) {
  const int8_t* xc = x.codes.data() + 256 * b;
  const __m256i m3 = _mm256_set1_epi8(3);
  const __m256i sm = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  const __m256i w15 = _mm256_set1_epi16(15);
  const Scales16 sc(_mm256_and_si256(sm, w15));
  const __m256i M = _mm256_madd_epi16(_mm256_srli_epi16(sm, 4),
                                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsum16.data() + 16 * b)));
  __m256i P = _mm256_setzero_si256();
  for (int n = 0; n < 2; ++n) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16 + 32 * n));
    const __m256i scn = n ? sc.hi : sc.lo;
    for (int j = 0; j < 4; ++j) {
      const __m256i c = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), m3);
      const __m256i x32 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xc + 128 * n + 32 * j));
      P = _mm256_add_epi32(P, _mm256_madd_epi16(_mm256_maddubs_epi16(c, x32), _mm256_shuffle_epi8(scn, pair_idx(j))));
    }
  }
  step_min(acc, P, M, x.d[b], p + 80);
}

// q3_K: c = q + 4 in 0..7: the 2 low bits as q2_K's, bit 2 is bit 4n + j of hmask[l]; 16 signed
// 6-bit scales (kquant_scales_simd.hpp); the zero point 4 off each pair of products.
void q3_k_avx2(const uint8_t* p, const XqInput& x, int64_t b, LaneAcc& acc) {
  const int8_t* xc = x.codes.data() + 256 * b;
  const int16_t* zx2 = x.zpair.data() + 128 * b;
  const Scales16 sc(_mm256_cvtepi8_epi16(kq::q3k_scales(p + 96)));
  const __m256i m3 = _mm256_set1_epi8(3);
  const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  __m256i P = _mm256_setzero_si256();
  for (int n = 0; n < 2; ++n) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 + 32 * n));
    const __m256i scn = n ? sc.hi : sc.lo;
    for (int j = 0; j < 4; ++j) {
      const __m256i c = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 2 * j), m3), bit_to<0x04>(hm, 4 * n + j));
      const __m256i pr = pairs_less_zero(c, xc + 128 * n + 32 * j, zx2 + 64 * n + 16 * j);
      P = _mm256_add_epi32(P, _mm256_madd_epi16(pr, _mm256_shuffle_epi8(scn, pair_idx(j))));
    }
  }
  step(acc, P, x.d[b] * load_f16(p + 108));
}

// IQ4_XS: the signed IQ4_NL values v of the nibbles, dotted with x as |v| * (x with v's sign)
// (unsigned by signed bytes; q8_K codes are within ±127, so no pair of products saturates). The
// scalar kernel's c = v + 128 less its zero point 128 gives the same P.
void iq4_xs_avx2(const uint8_t* p, const XqInput& x, int64_t b, LaneAcc& acc) {
  const int8_t* xc = x.codes.data() + 256 * b;
  const __m256i table =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(decode::iq::kIq4nlValues)));
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  // the 8 scales as words: the nibbles of scales_l in order, plus bits 2ib..2ib+1 of scales_h (by a
  // multiply that puts them at the top of each word) times 16, less 32
  const __m128i sl = _mm_cvtsi32_si128(static_cast<int>(load_u32(p + 4)));
  const __m128i nib =
      _mm_cvtepu8_epi16(_mm_and_si128(_mm_unpacklo_epi8(sl, _mm_srli_epi16(sl, 4)), _mm_set1_epi8(0x0F)));
  const __m128i hb =
      _mm_srli_epi16(_mm_mullo_epi16(_mm_set1_epi16(static_cast<short>(load_u16(p + 2))),
                                     _mm_setr_epi16(1 << 14, 1 << 12, 1 << 10, 1 << 8, 1 << 6, 1 << 4, 1 << 2, 1)),
                     14);
  const __m128i ls = _mm_sub_epi16(_mm_or_si128(nib, _mm_slli_epi16(hb, 4)), _mm_set1_epi16(32));
  const __m256i sc = _mm256_set_m128i(ls, ls);
  auto two_halves = [](const int8_t* a, const int8_t* b2) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a))),
                                   _mm_loadu_si128(reinterpret_cast<const __m128i*>(b2)), 1);
  };
  __m256i P = _mm256_setzero_si256();
  for (int t = 0; t < 4; ++t) {   // sub-blocks ib = 2t (bytes 0-15 of q) and 2t + 1 (bytes 16-31)
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 8 + 32 * t));
    const __m256i lo = _mm256_shuffle_epi8(table, _mm256_and_si256(q, m4));
    const __m256i hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(q, 4), m4));
    const __m256i s01 = _mm256_shuffle_epi8(sc, pair_idx(t));
    const int8_t* x0 = xc + 64 * t;   // ib 2t: elements 0-15 low nibbles, 16-31 high; ib 2t+1 at +32
    const __m256i xl = two_halves(x0, x0 + 32), xh = two_halves(x0 + 16, x0 + 48);
    P = _mm256_add_epi32(
        P, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(lo, lo), _mm256_sign_epi8(xl, lo)), s01));
    P = _mm256_add_epi32(
        P, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(hi, hi), _mm256_sign_epi8(xh, hi)), s01));
  }
  step(acc, P, x.d[b] * load_f16(p));
}

using BlockAvx2Fn = void (*)(const uint8_t*, const XqInput&, int64_t, LaneAcc&);
template <int kBytes, BlockAvx2Fn kBlock>
void rows_avx2(const XqArgs& a, int64_t r0, int64_t r1, float* y) {
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 256;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
    LaneAcc acc;
    for (int64_t b = 0; b < nb; ++b) {
      simd::prefetch_span(row + (b + 8) * kBytes, kBytes);   // rows stream from memory: 8 blocks ahead
      kBlock(row + b * kBytes, *a.x, b, acc);
    }
    y[r] = acc.sum();
  }
}
#define XQ_AVX2(bytes, block) rows_avx2<bytes, block>
#else
#define XQ_AVX2(bytes, block) nullptr
#endif

#if AKVIEW_XQ_VNNI512
inline __m512i bcast256(const uint8_t* p) {
  return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline __m512i load512(const void* p) { return _mm512_loadu_si512(p); }
inline __m256i load256(const void* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
// 16-bit shift counts: `lo` in the low 256 bits, `hi` in the high 256 bits.
inline __m512i counts2(int lo, int hi) {
  return _mm512_inserti64x4(_mm512_set1_epi16(static_cast<short>(lo)), _mm256_set1_epi16(static_cast<short>(hi)), 1);
}
inline __m512i bits_of(__m512i v, int lo, int hi, int mask) {
  return _mm512_and_si512(_mm512_srlv_epi16(v, counts2(lo, hi)), _mm512_set1_epi8(static_cast<char>(mask)));
}
// Word-index vectors for vpermw: 64 codes = 32 pair sums; sub-blocks of 16 (4 per 64) or of 32 (2 per 64).
inline __m512i idx_by(int first, int lanes_per) {
  alignas(64) int16_t v[32];
  for (int i = 0; i < 32; ++i) v[i] = static_cast<int16_t>(first + i / lanes_per);
  return _mm512_load_si512(v);
}
inline __m512i dword_idx(int c) {   // dword lanes 0-7 -> 2c, 8-15 -> 2c + 1
  alignas(64) int32_t v[16];
  for (int i = 0; i < 16; ++i) v[i] = 2 * c + i / 8;
  return _mm512_load_si512(v);
}
// Constants of the kernels, built once per call.
struct Idx {
  __m512i s16[4] = {idx_by(0, 8), idx_by(4, 8), idx_by(8, 8), idx_by(12, 8)};
  __m512i s32[4] = {idx_by(0, 16), idx_by(2, 16), idx_by(4, 16), idx_by(6, 16)};
  __m512i d32[4] = {dword_idx(0), dword_idx(1), dword_idx(2), dword_idx(3)};
  // iq4 values + 128 in every 128-bit lane (vpshufb table)
  __m512i iq4 =
      _mm512_broadcast_i32x4(_mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(decode::iq::kIq4nlValues)),
                                           _mm_set1_epi8(static_cast<char>(0x80))));
  // word shifts 0 / 4 per 16 bytes: [q0-15 low nibbles, q0-15 high nibbles, q16-31 low, q16-31 high]
  __m512i nib = _mm512_set_epi64(4 * 0x0001000100010001ll, 4 * 0x0001000100010001ll, 0, 0, 4 * 0x0001000100010001ll,
                                 4 * 0x0001000100010001ll, 0, 0);
};
// sum over sub-block pairs of scale * (codes . x): maddubs (u8 x s8 pair sums, no saturation for codes
// below 64), then vpdpwssd (madd with the scales picked per word, added to acc in one op).
inline __m512i scaled_dot(__m512i codes, const int8_t* x, __m512i scales16, __m512i idx, __m512i acc) {
  const __m512i p16 = _mm512_maddubs_epi16(codes, load512(x));
  return _mm512_dpwssd_epi32(acc, p16, _mm512_permutexvar_epi16(idx, scales16));
}
// The same for codes with a zero point (q3_K, q6_K): z times the x pair sums (zx2, XqInput::zpair)
// come off each pair of products before the scales, so each lane is exact over its own elements.
inline __m512i scaled_dot_less_zero(__m512i codes, const int8_t* x, const int16_t* zx2, __m512i scales16, __m512i idx,
                                    __m512i acc) {
  const __m512i p16 = _mm512_sub_epi16(_mm512_maddubs_epi16(codes, load512(x)), load512(zx2));
  return _mm512_dpwssd_epi32(acc, p16, _mm512_permutexvar_epi16(idx, scales16));
}

struct Acc {
  __m512 p = _mm512_setzero_ps();
  __m256 m = _mm256_setzero_ps();
  void add(__m512i P, float dp, __m256i M, float dm) {
    p = _mm512_fmadd_ps(_mm512_cvtepi32_ps(P), _mm512_set1_ps(dp), p);
    m = _mm256_fmadd_ps(_mm256_cvtepi32_ps(M), _mm256_set1_ps(dm), m);
  }
  float sum() const { return simd::hsum512(p) - simd::hsum(m); }
};

// One super-block of one row into acc; p the block, b its index (x block b).
using BlockFn = void (*)(const uint8_t* p, const XqInput& x, int64_t b, const Idx& idx, Acc& acc);
template <int kBytes, BlockFn kBlock>
void rows_vnni(const XqArgs& a, int64_t r0, int64_t r1, float* y) {
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 256;
  const Idx idx;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
    Acc acc;
    for (int64_t b = 0; b < nb; ++b) {
      simd::prefetch_span(row + (b + 8) * kBytes, kBytes);
      kBlock(row + b * kBytes, *a.x, b, idx, acc);
    }
    y[r] = acc.sum();
  }
}

void q2_k_block(const uint8_t* p, const XqInput& x, int64_t b, const Idx& idx, Acc& acc) {
  const int8_t* xb = x.codes.data() + 256 * b;
  const __m256i raw = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  const __m512i sc = _mm512_castsi256_si512(_mm256_and_si256(raw, _mm256_set1_epi16(0xF)));
  const __m256i M = _mm256_madd_epi16(_mm256_srli_epi16(raw, 4), load256(x.bsum16.data() + 16 * b));
  __m512i P = _mm512_setzero_si512();
  for (int n = 0; n < 2; ++n) {
    const __m512i q = bcast256(p + 16 + 32 * n);
    P = scaled_dot(bits_of(q, 0, 2, 3), xb + 128 * n, sc, idx.s16[2 * n], P);
    P = scaled_dot(bits_of(q, 4, 6, 3), xb + 128 * n + 64, sc, idx.s16[2 * n + 1], P);
  }
  acc.add(P, x.d[b] * load_f16(p + 80), M, x.d[b] * load_f16(p + 82));
}

void q3_k_block(const uint8_t* p, const XqInput& x, int64_t b, const Idx& idx, Acc& acc) {
  const int8_t* xb = x.codes.data() + 256 * b;
  // 16 6-bit scales: low 4 bits from bytes 0-7 (low nibbles, then high), top 2 bits from bytes 8-11.
  const uint32_t w0 = load_u32(p + 96), w1 = load_u32(p + 100), w2 = load_u32(p + 104), m4 = 0x0f0f0f0f,
                 m2 = 0x03030303;
  const __m128i s8 = _mm_sub_epi8(_mm_set_epi32(static_cast<int>(((w1 >> 4) & m4) | (((w2 >> 6) & m2) << 4)),
                                                static_cast<int>(((w0 >> 4) & m4) | (((w2 >> 4) & m2) << 4)),
                                                static_cast<int>((w1 & m4) | (((w2 >> 2) & m2) << 4)),
                                                static_cast<int>((w0 & m4) | ((w2 & m2) << 4))),
                                  _mm_set1_epi8(32));
  const __m512i sc = _mm512_castsi256_si512(_mm256_cvtepi8_epi16(s8));
  const int16_t* zx2 = x.zpair.data() + 128 * b;
  const __m512i hm = bcast256(p);
  __m512i P = _mm512_setzero_si512();
  for (int n = 0; n < 2; ++n) {
    const __m512i q = bcast256(p + 32 + 32 * n);
    for (int jp = 0; jp < 2; ++jp) {
      const __m512i hi = _mm512_slli_epi16(bits_of(hm, 4 * n + 2 * jp, 4 * n + 2 * jp + 1, 1), 2);
      const __m512i c = _mm512_or_si512(bits_of(q, 4 * jp, 4 * jp + 2, 3), hi);
      P = scaled_dot_less_zero(c, xb + 128 * n + 64 * jp, zx2 + 64 * n + 32 * jp, sc, idx.s16[2 * n + jp], P);
    }
  }
  acc.add(P, x.d[b] * load_f16(p + 108), _mm256_setzero_si256(), 0.0f);
}

template <bool kQ5>
void q45_k_block(const uint8_t* p, const XqInput& x, int64_t b, const Idx& idx, Acc& acc) {
  constexpr int kQs = kQ5 ? 48 : 16;
  const int8_t* xb = x.codes.data() + 256 * b;
  uint64_t scales, mins;
  decode::kquant_scales_mins8(p + 4, &scales, &mins);
  const __m512i sc = _mm512_castsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<long long>(scales))));
  const __m128i mn = _mm_cvtsi64_si128(static_cast<long long>(mins));
  const __m256i M =
      _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mn, mn)), load256(x.bsum16.data() + 16 * b));
  __m512i P = _mm512_setzero_si512();
  [[maybe_unused]] const __m512i qh = kQ5 ? bcast256(p + 16) : _mm512_setzero_si512();
  for (int c = 0; c < 4; ++c) {
    __m512i codes = bits_of(bcast256(p + kQs + 32 * c), 0, 4, 0x0F);
    if constexpr (kQ5) codes = _mm512_or_si512(codes, _mm512_slli_epi16(bits_of(qh, 2 * c, 2 * c + 1, 1), 4));
    P = scaled_dot(codes, xb + 64 * c, sc, idx.s32[c], P);
  }
  acc.add(P, x.d[b] * load_f16(p), M, x.d[b] * load_f16(p + 2));
}

void q6_k_block(const uint8_t* p, const XqInput& x, int64_t b, const Idx& idx, Acc& acc) {
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const int8_t* xb = x.codes.data() + 256 * b;
  const int16_t* zx2 = x.zpair.data() + 128 * b;
  const __m512i sc =
      _mm512_castsi256_si512(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 192))));
  __m512i P = _mm512_setzero_si512();
  // The high 2 bits of a code go to bits 4-5: for the first 64 codes of a half (qh bits 0-1 / 2-3)
  // by shifting qh left 4 / 2, for the next 64 (bits 4-5 / 6-7) right 0 / 2; one vpternlogd then
  // merges them under the low nibble.
  const __m512i m30 = _mm512_set1_epi8(0x30), up = counts2(4, 2), down = counts2(0, 2);
  for (int n = 0; n < 2; ++n) {
    const __m512i ql = load512(p + 64 * n), qh = bcast256(p + 128 + 32 * n);
    const __m512i lo =
        _mm512_ternarylogic_epi32(ql, m4, _mm512_and_si512(_mm512_sllv_epi16(qh, up), m30), 0xEA);   // (ql & m4) | high
    const __m512i hi = _mm512_ternarylogic_epi32(_mm512_srli_epi16(ql, 4), m4,
                                                 _mm512_and_si512(_mm512_srlv_epi16(qh, down), m30), 0xEA);
    P = scaled_dot_less_zero(lo, xb + 128 * n, zx2 + 64 * n, sc, idx.s16[2 * n], P);
    P = scaled_dot_less_zero(hi, xb + 128 * n + 64, zx2 + 64 * n + 32, sc, idx.s16[2 * n + 1], P);
  }
  acc.add(P, x.d[b] * load_f16(p + 208), _mm256_setzero_si256(), 0.0f);
}

void iq4_xs_block(const uint8_t* p, const XqInput& x, int64_t b, const Idx& idx, Acc& acc) {
  const int8_t* xb = x.codes.data() + 256 * b;
  const int32_t* s4 = x.sum4.data() + 64 * b;
  // ls_ib - 32: low 4 bits from the nibbles of scales_l (even ib low, odd ib high), top 2 bits from scales_h.
  const uint32_t L = load_u32(p + 4);
  const __m128i lo = _mm_unpacklo_epi8(_mm_cvtsi32_si128(static_cast<int>(L & 0x0f0f0f0f)),
                                       _mm_cvtsi32_si128(static_cast<int>((L >> 4) & 0x0f0f0f0f)));
  const __m128i ls = _mm_sub_epi8(
      _mm_or_si128(lo, _mm_cvtsi64_si128(static_cast<long long>(_pdep_u64(load_u16(p + 2), 0x3030303030303030ull)))),
      _mm_set1_epi8(32));
  const __m512i ls32 = _mm512_castsi256_si512(_mm256_cvtepi8_epi32(ls));
  __m512i P = _mm512_setzero_si512();
  for (int c = 0; c < 4; ++c) {
    const uint8_t* q = p + 8 + 32 * c;
    const __m256i b0 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
    const __m256i b1 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16)));
    const __m512i n4 = _mm512_and_si512(
        _mm512_srlv_epi16(_mm512_inserti64x4(_mm512_castsi256_si512(b0), b1, 1), idx.nib), _mm512_set1_epi8(0x0F));
    const __m512i codes = _mm512_shuffle_epi8(idx.iq4, n4);
    const __m512i init = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(load512(s4 + 16 * c), 7));
    const __m512i dot = _mm512_dpbusd_epi32(init, codes, load512(xb + 64 * c));
    P = _mm512_add_epi32(P, _mm512_mullo_epi32(dot, _mm512_permutexvar_epi32(idx.d32[c], ls32)));
  }
  acc.add(P, x.d[b] * load_f16(p), _mm256_setzero_si256(), 0.0f);
}
#endif

#if AKVIEW_XQ_VNNI512
#define XQ_VNNI(bytes, block) (rows_vnni<bytes, block>)
#else
#define XQ_VNNI(bytes, block) nullptr
#endif
// One row per type: its best kernel and name, the scalar kernel, the AVX2 kernel, the zero point its
// SIMD kernels take off pairs.
#define XQ_ROW(type, bytes, vnni_block, unpack, avx2, pair_zero)                                           \
  XqKernelRow {                                                                                            \
    TypeId::type, ActQuant::q8_k, best_rows(XQ_VNNI(bytes, vnni_block), avx2, rows_scalar<bytes, unpack>), \
        best_name(XQ_VNNI(bytes, vnni_block), avx2), rows_scalar<bytes, unpack>, avx2, pair_zero           \
  }
constexpr std::array kTable = {
    XQ_ROW(q2_k, 84, q2_k_block, unpack_q2_k, XQ_AVX2(84, q2_k_avx2), 0),
    XQ_ROW(q3_k, 110, q3_k_block, unpack_q3_k, XQ_AVX2(110, q3_k_avx2), 4),
    XQ_ROW(q4_k, 144, q45_k_block<false>, unpack_q45_k<false>, XQ_AVX2(144, q45_k_avx2<false>), 0),
    XQ_ROW(q5_k, 176, q45_k_block<true>, unpack_q45_k<true>, XQ_AVX2(176, q45_k_avx2<true>), 0),
    XQ_ROW(q6_k, 210, q6_k_block, unpack_q6_k, XQ_AVX2(210, q6_k_avx2), 32),
    XQ_ROW(iq4_xs, 136, iq4_xs_block, unpack_iq4_xs, XQ_AVX2(136, iq4_xs_avx2), 0),
};
#undef XQ_ROW
#undef XQ_VNNI
#undef XQ_AVX2

}   // namespace

std::span<const XqKernelRow> xq_kernels_kquant() { return kTable; }

}   // namespace akview::compute
