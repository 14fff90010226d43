// Internal: the shared row loops of the composite (MLX / Ollama) types. FORMATS.md §3.2-3.4, §4.5.
// Packing: each row of the packed weight is one little-endian bit stream; element i sits at bits
// [i*bits, (i+1)*bits). A run of 8 elements is exactly `bits` bytes, and groups are multiples of 8
// elements (checked by decode_rows), so groups start on byte boundaries.
//
//   packed row:  | group 0: gs*bits/8 bytes | group 1 | ...        scales row: | s0 | s1 | ... (one per group)
//   affine:  y = scale * q + bias          (float32, two roundings, no FMA: core/decode is -ffp-contract=off)
//   mxfp4:   y = E2M1[q] * 2^(e-127)       (element 2k = low nibble of byte k)
//   nvfp4:   y = E2M1[q] * E4M3(s)         (group 16)      mxfp8: y = E4M3(byte) * 2^(e-127)
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/decode/float_formats.hpp"
#include "core/decode/simd.hpp"
#include "core/tensor_view.hpp"

namespace akview::decode::composite {

inline constexpr float kFp4Lut[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                      -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// A per-group scale or bias of an affine tensor: f16, bf16 or f32 (decode_rows checked the type).
inline float load_affine_param(TypeId type, const uint8_t* base, size_t index) {
  switch (type) {   // three storage types, one branch per group (not per element)
    case TypeId::f32: return fp::load_f32(base + 4 * index);
    case TypeId::bf16: return fp::bf16_to_f32(fp::load_u16(base + 2 * index));
    default: return fp::f16_to_f32(fp::load_u16(base + 2 * index));
  }
}
inline size_t affine_param_bytes(TypeId type) { return type == TypeId::f32 ? 4 : 2; }

template <int kBits>
inline void affine_group(const uint8_t* __restrict p, size_t n, float s, float b, float* __restrict y) {
  if constexpr (kBits == 8) {
    for (size_t j = 0; j < n; ++j) y[j] = s * static_cast<float>(p[j]) + b;
  } else if constexpr (kBits == 4) {
    for (size_t k = 0; k < n / 2; ++k) {
      y[2 * k] = s * static_cast<float>(p[k] & 0xF) + b;
      y[2 * k + 1] = s * static_cast<float>(p[k] >> 4) + b;
    }
  } else {
    constexpr uint64_t kMask = (uint64_t{1} << kBits) - 1;
    for (size_t c = 0; c < n / 8; ++c) {
      uint64_t w = 0;
      for (int k = 0; k < kBits; ++k) w |= static_cast<uint64_t>(p[c * kBits + k]) << (8 * k);
      for (int i = 0; i < 8; ++i) y[8 * c + i] = s * static_cast<float>((w >> (i * kBits)) & kMask) + b;
    }
  }
}

#if defined(AKVIEW_DECODE_AVX2)
// AVX2 / AVX-512 form of affine_group for 4 and 8 bits: the same s * q + b (mul, then add) per
// element; 16 bytes per step (4-bit: nibbles interleaved back into element order); the last < 32
// (4-bit) / < 16 (8-bit) elements of a group go through the scalar loop.
template <int kBits>
inline void affine_group_avx2(const uint8_t* __restrict p, size_t n, float s, float b, float* __restrict y) {
  size_t j = 0;
  if constexpr (kBits == 8) {
    for (; j + 16 <= n; j += 16) simd::muladd_u8x16(simd::load16(p + j), s, b, y + j);
    if (j < n) affine_group<8>(p + j, n - j, s, b, y + j);   // the last 8 of a group of 16k+8
  } else {
    static_assert(kBits == 4);
    for (; j + 32 <= n; j += 32) {
      const __m128i q = simd::load16(p + j / 2);
      const __m128i lo = simd::low_nibbles(q), hi = simd::high_nibbles(q);
      simd::muladd_u8x16(_mm_unpacklo_epi8(lo, hi), s, b, y + j);        // elements j..j+15
      simd::muladd_u8x16(_mm_unpackhi_epi8(lo, hi), s, b, y + j + 16);   // elements j+16..j+31
    }
    if (j < n) affine_group<4>(p + j / 2, n - j, s, b, y + j);
  }
}
#endif

// The group kernel used by the row loop: the AVX2 form where there is one.
template <int kBits>
inline void affine_group_fast(const uint8_t* __restrict p, size_t n, float s, float b, float* __restrict y) {
#if defined(AKVIEW_DECODE_AVX2)
  if constexpr (kBits == 4 || kBits == 8) return affine_group_avx2<kBits>(p, n, s, b, y);
#endif
  affine_group<kBits>(p, n, s, b, y);
}

template <int kBits>
void affine_rows_bits(const TensorView& v, int64_t row_begin, int64_t row_end, float* out) {
  const size_t n_cols = static_cast<size_t>(v.n_cols), gs = v.group_size, n_groups = n_cols / gs;
  const size_t group_bytes = gs * kBits / 8;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* row = v.data.data() + static_cast<size_t>(r) * v.row_bytes;
    const size_t g0 = static_cast<size_t>(r) * n_groups;
    for (size_t g = 0; g < n_groups; ++g) {
      const float s = load_affine_param(v.scales_type, v.scales.data(), g0 + g);
      const float b = load_affine_param(v.biases_type, v.biases.data(), g0 + g);
      affine_group_fast<kBits>(row + g * group_bytes, gs, s, b, out + g * gs);
    }
    out += n_cols;
  }
}

// Affine with bits 2, 3, 4, 5, 6 or 8 (decode_rows checked).
inline void affine_rows(const TensorView& v, int64_t row_begin, int64_t row_end, float* out) {
  switch (v.bits) {   // once per call
    case 2: return affine_rows_bits<2>(v, row_begin, row_end, out);
    case 3: return affine_rows_bits<3>(v, row_begin, row_end, out);
    case 4: return affine_rows_bits<4>(v, row_begin, row_end, out);
    case 5: return affine_rows_bits<5>(v, row_begin, row_end, out);
    case 6: return affine_rows_bits<6>(v, row_begin, row_end, out);
    default: return affine_rows_bits<8>(v, row_begin, row_end, out);
  }
}

enum class FpMode { mxfp4, nvfp4, mxfp8 };

// Global-scale factor of row r: 1 when absent; a scalar or one f32 per row (decode_rows checked).
inline float global_scale_of(const TensorView& v, int64_t r) {
  if (v.global_scale.empty()) return 1.0f;
  if (v.global_scale.size() == 4) return fp::load_f32(v.global_scale.data());
  return fp::load_f32(v.global_scale.data() + 4 * static_cast<size_t>(r));
}

// kGlobalDivisor: MLX divides the global scale by 448*6 (FORMATS.md §3.4); Ollama multiplies by it
// as stored (§4.5): pass 0 for "no division".
template <FpMode kMode>
void fp_rows(const TensorView& v, int64_t row_begin, int64_t row_end, float* out, bool mlx_global_rule) {
  const size_t n_cols = static_cast<size_t>(v.n_cols), gs = v.group_size, n_groups = n_cols / gs;
  const size_t group_bytes = gs * (kMode == FpMode::mxfp8 ? 8 : 4) / 8;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* row = v.data.data() + static_cast<size_t>(r) * v.row_bytes;
    const uint8_t* sc = v.scales.data() + static_cast<size_t>(r) * n_groups;
    for (size_t g = 0; g < n_groups; ++g) {
      const uint8_t* p = row + g * group_bytes;
      float* y = out + g * gs;
      if constexpr (kMode == FpMode::mxfp8) {
        const float s = fp::e8m0_to_f32(sc[g]);
        for (size_t j = 0; j < gs; ++j) y[j] = fp::e4m3_mlx_to_f32(p[j]) * s;
      } else {
        const float s = kMode == FpMode::mxfp4 ? fp::e8m0_to_f32(sc[g]) : fp::e4m3_mlx_to_f32(sc[g]);
        for (size_t k = 0; k < gs / 2; ++k) {
          y[2 * k] = kFp4Lut[p[k] & 0xF] * s;
          y[2 * k + 1] = kFp4Lut[p[k] >> 4] * s;
        }
      }
    }
    if (!v.global_scale.empty()) {
      float gscale = global_scale_of(v, r);
      if (mlx_global_rule) gscale = gscale / (448.0f * 6.0f);
      for (size_t j = 0; j < n_cols; ++j) out[j] = out[j] * gscale;
    }
    out += n_cols;
  }
}

}   // namespace akview::decode::composite
