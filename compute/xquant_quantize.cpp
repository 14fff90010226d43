// Activation quantization for the x-quant path (xquant.hpp): x -> q8_0 / q8_1 / q8_K blocks with
// ggml's rules (FORMATS.md §6), written from that description.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "compute/cpu_simd.hpp"
#include "compute/xquant.hpp"

namespace akview::compute {
namespace {

// The per-block scale and multiplier of q8_0 / q8_1. ggml's x86 AVX/AVX2 path multiplies by
// 127/amax and rounds ties to even; its reference path multiplies by 1/d and rounds half away.
#if defined(__AVX__)
constexpr bool kAvxRule = true;
#else
constexpr bool kAvxRule = false;
#endif

struct Q8Scale {
  float d = 0, id = 0;
};
[[maybe_unused]] Q8Scale q8_scale(const float* x) {
  float amax = 0;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  Q8Scale s;
  s.d = amax / 127.f;
  if constexpr (kAvxRule) s.id = amax != 0.0f ? 127.f / amax : 0.0f;
  else s.id = s.d != 0.0f ? 1.0f / s.d : 0.0f;
  return s;
}
[[maybe_unused]] int8_t q8_code(float v) {
  const float r = kAvxRule ? std::nearbyint(v) : std::round(v);   // nearbyint: ties to even (default mode)
  return static_cast<int8_t>(std::clamp(r, -128.0f, 127.0f));     // the AVX path packs with saturation
}

// ggml's nearest_int: adding 1.5 * 2^23 leaves round-half-even(f) + 2^22 in the low 23 mantissa bits.
[[maybe_unused]] int nearest_int(float f) {
  const float v = f + 12582912.0f;
  int32_t i;
  std::memcpy(&i, &v, 4);
  return (i & 0x007fffff) - 0x00400000;
}

#if AKVIEW_CPU_AVX2
// The same rules on 8 lanes: amax of a block, and q8_0 / q8_1 codes rounded to nearest even by
// vroundps (as ggml's AVX path), as int32 lanes; q8_K's nearest_int below. No product is fused.
inline float amax_of(const float* x, int n) {
  const __m256 abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 m = _mm256_setzero_ps();
  for (int j = 0; j < n; j += 8)
    m = _mm256_max_ps(_mm256_and_ps(abs, _mm256_loadu_ps(x + j)), m);   // a NaN x is passed over
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
}
inline __m256i codes8(const float* x, __m256 mult) {
  return _mm256_cvtps_epi32(
      _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x), mult), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
// 32 int32 lanes (4 vectors of x order) -> 32 bytes with signed saturation, in order.
inline void store_codes32(int8_t* q, __m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i packed =
      _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));   // lanes interleaved by 4
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q),
                      _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}
inline int hsum_i32(__m256i v) {
  __m128i h = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
  return _mm_cvtsi128_si32(_mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1)));
}
// One q8_0 / q8_1 block (the AVX rule): its codes, d (as float), and the sum of its codes.
inline int q8_32_avx2(const float* x, float& d, int8_t* qs) {
  const float amax = amax_of(x, 32);
  d = amax / 127.f;
  const __m256 mult = _mm256_set1_ps(amax != 0.0f ? 127.f / amax : 0.0f);
  const __m256i a = codes8(x, mult), b = codes8(x + 8, mult), c = codes8(x + 16, mult), e = codes8(x + 24, mult);
  store_codes32(qs, a, b, c, e);
  return hsum_i32(
      _mm256_add_epi32(_mm256_add_epi32(a, b), _mm256_add_epi32(c, e)));   // |codes| <= 127: no clamp differs
}
#endif

}   // namespace

uint16_t f32_to_f16_rne(float f) {
#if AKVIEW_CPU_AVX2
  return _cvtss_sh(f, 0);   // 0: round to nearest even
#else
  uint32_t b;
  std::memcpy(&b, &f, 4);
  const uint32_t sign = (b >> 16) & 0x8000, abs = b & 0x7fffffff;
  if (abs >= 0x7f800000) return static_cast<uint16_t>(sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0));
  if (abs >= 0x477ff000) return static_cast<uint16_t>(sign | 0x7c00);   // rounds to >= 65520: inf
  if (abs < 0x38800000) {                                               // f16 subnormal or zero
    if (abs < 0x33000000) return static_cast<uint16_t>(sign);           // below half the smallest subnormal
    const uint32_t man = (abs & 0x7fffff) | 0x800000;
    const int shift = 126 - static_cast<int>(abs >> 23);   // 14 + (113 - exp) ...
    const uint32_t q = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    return static_cast<uint16_t>(sign | (q + (rem > half || (rem == half && (q & 1)))));
  }
  const uint32_t q = (abs - 0x38000000) >> 13, rem = abs & 0x1fff;
  return static_cast<uint16_t>(sign | (q + (rem > 0x1000 || (rem == 0x1000 && (q & 1)))));
#endif
}

void quantize_q8_0(const float* x, int64_t n, BlockQ8_0* out) {
#if AKVIEW_CPU_AVX2
  for (int64_t b = 0; b < n / 32; ++b, x += 32) {
    float d;
    q8_32_avx2(x, d, out[b].qs);
    out[b].d = f32_to_f16_rne(d);
  }
#else
  for (int64_t b = 0; b < n / 32; ++b, x += 32) {
    const Q8Scale s = q8_scale(x);
    out[b].d = f32_to_f16_rne(s.d);
    for (int j = 0; j < 32; ++j) out[b].qs[j] = q8_code(x[j] * s.id);
  }
#endif
}

void quantize_q8_1(const float* x, int64_t n, BlockQ8_1* out) {
#if AKVIEW_CPU_AVX2
  for (int64_t b = 0; b < n / 32; ++b, x += 32) {
    float d;
    const int sum = q8_32_avx2(x, d, out[b].qs);
    out[b].d = f32_to_f16_rne(d);
    out[b].s = f32_to_f16_rne(d * static_cast<float>(sum));
  }
#else
  for (int64_t b = 0; b < n / 32; ++b, x += 32) {
    const Q8Scale s = q8_scale(x);
    out[b].d = f32_to_f16_rne(s.d);
    int sum = 0;
    for (int j = 0; j < 32; ++j) sum += out[b].qs[j] = q8_code(x[j] * s.id);
    out[b].s = f32_to_f16_rne(s.d * static_cast<float>(sum));
  }
#endif
}

void quantize_q8_k(const float* x, int64_t n, BlockQ8K* out) {
  for (int64_t b = 0; b < n / 256; ++b, x += 256) {
    BlockQ8K& o = out[b];
    float amax = 0, max = 0;
#if AKVIEW_CPU_AVX2
    amax = amax_of(x, 256);
    for (int j = 0; j < 256 && amax != 0.0f; ++j)
      if (std::fabs(x[j]) == amax) {   // the first x of the largest magnitude
        max = x[j];
        break;
      }
#else
    for (int j = 0; j < 256; ++j)
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
#endif
    if (amax == 0.0f) {   // ggml writes d = 0 and zero codes (and leaves bsums as they were; here 0)
      std::memset(&o, 0, sizeof o);
      continue;
    }
    const float iscale = -127.f / max;
#if AKVIEW_CPU_AVX2
    // nearest_int on 8 lanes, bit for bit (a NaN or infinite product too), then min(127, .)
    const __m256 mult = _mm256_set1_ps(iscale), magic = _mm256_set1_ps(12582912.0f);
    const __m256i low23 = _mm256_set1_epi32(0x007fffff), half = _mm256_set1_epi32(0x00400000),
                  top = _mm256_set1_epi32(127);
    for (int j = 0; j < 256; j += 32) {
      __m256i c[4];
      for (int k = 0; k < 4; ++k) {
        const __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(x + j + 8 * k), mult), magic);
        c[k] = _mm256_min_epi32(top, _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(v), low23), half));
      }
      store_codes32(o.qs + j, c[0], c[1], c[2], c[3]);
      o.bsums[j / 16] = static_cast<int16_t>(hsum_i32(_mm256_add_epi32(c[0], c[1])));
      o.bsums[j / 16 + 1] = static_cast<int16_t>(hsum_i32(_mm256_add_epi32(c[2], c[3])));
    }
#else
    for (int j = 0; j < 256; ++j) o.qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * x[j])));
    for (int k = 0; k < 16; ++k) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += o.qs[16 * k + j];
      o.bsums[k] = static_cast<int16_t>(sum);
    }
#endif
    o.d = 1 / iscale;
  }
}

}   // namespace akview::compute
