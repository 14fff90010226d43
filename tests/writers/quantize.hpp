// Simple quantizers for fixtures and the demo model: f32 rows -> ggml blocks (FORMATS.md §2.7
// layouts). They aim for valid, plausible blocks, not llama.cpp's error-minimising searches.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/types.hpp"

namespace akview::testing {

uint16_t f32_to_f16(float f);    // IEEE binary16, round to nearest even
uint16_t f32_to_bf16(float f);   // round to nearest even

// Quantizes `values` (whole rows; the length a multiple of the type's block) into `type`:
// f32, f16, bf16, q8_0, q4_0, q4_k, q6_k. Returns an empty vector for any other type.
std::vector<uint8_t> quantize(TypeId type, std::span<const float> values);

// MLX affine quantization (FORMATS.md §3.2-3.4) of a row-major [rows, cols] matrix: `weight` is the
// LSB-first bit stream of each row (the bytes of the packed U32 tensor [rows, cols*bits/32]); `scales`
// and `biases` are [rows, cols/group] in `scale_type` (f16 or bf16), w = scale * q + bias with bias =
// the group minimum. bits 2, 4 or 8; cols a multiple of group and of 32. Empty on bad arguments.
struct AffineQuantized {
  std::vector<uint8_t> weight, scales, biases;
};
AffineQuantized quantize_affine(std::span<const float> values, int64_t cols, int bits, int64_t group,
                                TypeId scale_type);

}   // namespace akview::testing
