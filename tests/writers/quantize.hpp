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

}  // namespace akview::testing
