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
Q8Scale q8_scale(const float* x) {
  float amax = 0;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  Q8Scale s;
  s.d = amax / 127.f;
  if constexpr (kAvxRule)
    s.id = amax != 0.0f ? 127.f / amax : 0.0f;
  else
    s.id = s.d != 0.0f ? 1.0f / s.d : 0.0f;
  return s;
}
int8_t q8_code(float v) {
  const float r = kAvxRule ? std::nearbyint(v) : std::round(v);   // nearbyint: ties to even (default mode)
  return static_cast<int8_t>(std::clamp(r, -128.0f, 127.0f));      // the AVX path packs with saturation
}

// ggml's nearest_int: adding 1.5 * 2^23 leaves round-half-even(f) + 2^22 in the low 23 mantissa bits.
int nearest_int(float f) {
  const float v = f + 12582912.0f;
  int32_t i;
  std::memcpy(&i, &v, 4);
  return (i & 0x007fffff) - 0x00400000;
}

}  // namespace

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
    const int shift = 126 - static_cast<int>(abs >> 23);               // 14 + (113 - exp) ...
    const uint32_t q = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    return static_cast<uint16_t>(sign | (q + (rem > half || (rem == half && (q & 1)))));
  }
  const uint32_t q = (abs - 0x38000000) >> 13, rem = abs & 0x1fff;
  return static_cast<uint16_t>(sign | (q + (rem > 0x1000 || (rem == 0x1000 && (q & 1)))));
#endif
}

void quantize_q8_0(const float* x, int64_t n, BlockQ8_0* out) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32) {
    const Q8Scale s = q8_scale(x);
    out[b].d = f32_to_f16_rne(s.d);
    for (int j = 0; j < 32; ++j) out[b].qs[j] = q8_code(x[j] * s.id);
  }
}

void quantize_q8_1(const float* x, int64_t n, BlockQ8_1* out) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32) {
    const Q8Scale s = q8_scale(x);
    out[b].d = f32_to_f16_rne(s.d);
    int sum = 0;
    for (int j = 0; j < 32; ++j) sum += out[b].qs[j] = q8_code(x[j] * s.id);
    out[b].s = f32_to_f16_rne(s.d * static_cast<float>(sum));
  }
}

void quantize_q8_k(const float* x, int64_t n, BlockQ8K* out) {
  for (int64_t b = 0; b < n / 256; ++b, x += 256) {
    BlockQ8K& o = out[b];
    float amax = 0, max = 0;
    for (int j = 0; j < 256; ++j)
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    if (amax == 0.0f) {   // ggml writes d = 0 and zero codes (and leaves bsums as they were; here 0)
      std::memset(&o, 0, sizeof o);
      continue;
    }
    const float iscale = -127.f / max;
    for (int j = 0; j < 256; ++j) o.qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * x[j])));
    for (int k = 0; k < 16; ++k) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += o.qs[16 * k + j];
      o.bsums[k] = static_cast<int16_t>(sum);
    }
    o.d = 1 / iscale;
  }
}

}  // namespace akview::compute
