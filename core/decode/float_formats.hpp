// Scalar helpers: little-endian loads and the small float formats (f16, bf16, E8M0, UE4M3, E4M3,
// E5M2, FNUZ variants, E2M1/E2M3/E3M2 minifloats) widened exactly to float32.
// FORMATS.md §1.4, §2.7 "Minimal scalar helpers", §3.4 and Appendix A (the E8M0/E4M3 disagreements).
// Everything is branch-light and pointer-cast free so the decoders' loops vectorise and UBSan stays quiet.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace akview::fp {

inline uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}
inline uint64_t load_u64(const uint8_t* p) {
  return static_cast<uint64_t>(load_u32(p)) | (static_cast<uint64_t>(load_u32(p + 4)) << 32);
}
inline float bits_f32(uint32_t b) { return std::bit_cast<float>(b); }
inline uint32_t f32_bits(float f) { return std::bit_cast<uint32_t>(f); }
inline float load_f32(const uint8_t* p) { return bits_f32(load_u32(p)); }
inline double load_f64(const uint8_t* p) { return std::bit_cast<double>(load_u64(p)); }

// IEEE binary16 -> float32, exact for every input (subnormals, inf, NaN), branchless:
// normals/inf/NaN are rebased by an exponent offset and a 2^-112 multiply; subnormals are made
// by subtracting 0.5 from a float whose mantissa holds the half's mantissa.
inline float f16_to_f32(uint16_t h) {
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  const float normalized = bits_f32((two_w >> 4) + (0xE0u << 23)) * 0x1p-112f;
  const float denormalized = bits_f32((two_w >> 17) | (126u << 23)) - 0.5f;
  const uint32_t magnitude = two_w < (1u << 27) ? f32_bits(denormalized) : f32_bits(normalized);
  return bits_f32(sign | magnitude);
}
inline float bf16_to_f32(uint16_t h) { return bits_f32(static_cast<uint32_t>(h) << 16); }

// E8M0 as ggml and MLX decode it: 2^(e-127); e == 0 gives 2^-127 (a float32 subnormal); e == 255
// gives +inf (MLX, ggml's plain helper). OCP would say NaN for 255 (see e8m0_ocp_to_f32).
inline float e8m0_to_f32(uint8_t e) { return bits_f32(e == 0 ? 0x00400000u : static_cast<uint32_t>(e) << 23); }
// ggml's MXFP4 helper: half of the above (the FP4 table is doubled); e < 2 are subnormal, 255 -> 2^127.
inline float e8m0_half_to_f32(uint8_t e) {
  return bits_f32(e < 2 ? (0x00200000u << e) : static_cast<uint32_t>(e - 1) << 23);
}
// torch float8_e8m0fnu / safetensors F8_E8M0: like e8m0_to_f32 but 0xFF is NaN.
inline float e8m0_ocp_to_f32(uint8_t e) { return e == 0xFF ? bits_f32(0x7FC00000u) : e8m0_to_f32(e); }

// ggml's UE4M3 NVFP4 sub-block scale, already halved: bit 7 ignored, 0 and 0x7F -> 0,
// exponent bias 7, subnormals man * 2^-9. All results are exact in float32.
inline float ue4m3_half_to_f32(uint8_t x) {
  if (x == 0 || x == 0x7F) return 0.0f;
  const uint32_t exp = (x >> 3) & 0xF, man = x & 7;
  // exp==0: man * 2^-9 * 0.5; else (1 + man/8) * 2^(exp-7) * 0.5 = (8 + man) * 2^(exp-11)
  const float raw =
      exp == 0 ? static_cast<float>(man) * 0x1p-10f : static_cast<float>(8 + man) * bits_f32((exp - 11 + 127) << 23);
  return raw;
}

// Generic minifloat: 1 sign bit, `E` exponent bits (bias 2^(E-1)-1 unless given), `M` mantissa bits,
// no inf/NaN encodings (the OCP MX element types E2M1, E2M3, E3M2).
template <int E, int M>
inline float minifloat_to_f32(uint32_t code, int bias = (1 << (E - 1)) - 1) {
  const uint32_t sign = (code >> (E + M)) & 1;
  const uint32_t exp = (code >> M) & ((1u << E) - 1);
  const uint32_t man = code & ((1u << M) - 1);
  // value = (exp ? 2^M + man : man) * 2^(max(exp,1) - bias - M); exact in float32.
  const int e = (exp == 0 ? 1 : static_cast<int>(exp)) - bias - M;
  const float mag =
      static_cast<float>(exp == 0 ? man : (1u << M) + man) * bits_f32(static_cast<uint32_t>(e + 127) << 23);
  return sign ? -mag : mag;
}
inline float e2m1_to_f32(uint8_t c) { return minifloat_to_f32<2, 1>(c & 0xF); }
inline float e2m3_to_f32(uint8_t c) { return minifloat_to_f32<2, 3>(c & 0x3F); }
inline float e3m2_to_f32(uint8_t c) { return minifloat_to_f32<3, 2>(c & 0x3F); }

// FP8 E4M3FN (torch float8_e4m3fn, safetensors F8_E4M3): bias 7, 0x7F/0xFF are NaN, no inf, max 448.
inline float e4m3fn_to_f32(uint8_t c) {
  if ((c & 0x7F) == 0x7F) return bits_f32(0x7FC00000u | (static_cast<uint32_t>(c & 0x80) << 24));
  return minifloat_to_f32<4, 3>(c);
}
// MLX's FromFP8 (FORMATS.md §3.4): same bit layout, but no NaN: 0x7F decodes to 480.
inline float e4m3_mlx_to_f32(uint8_t c) { return minifloat_to_f32<4, 3>(c); }
// FP8 E5M2 (IEEE-like, bias 15): exactly the top byte of an f16.
inline float e5m2_to_f32(uint8_t c) { return f16_to_f32(static_cast<uint16_t>(c << 8)); }
// AMD FNUZ variants: bias 8 / 16, 0x80 is the only NaN, no negative zero, no inf.
inline float e4m3fnuz_to_f32(uint8_t c) {
  if (c == 0x80) return bits_f32(0x7FC00000u);
  return minifloat_to_f32<4, 3>(c, 8);
}
inline float e5m2fnuz_to_f32(uint8_t c) {
  if (c == 0x80) return bits_f32(0x7FC00000u);
  return minifloat_to_f32<5, 2>(c, 16);
}

}   // namespace akview::fp
