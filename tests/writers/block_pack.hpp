// Block packers for hand-made fixtures: ggml blocks and MLX affine bit streams built from explicit
// fields (scales, mins, per-element codes) rather than from values, so a test can place exactly the
// codes it needs (groups whose terms cancel, one non-zero weight). Layouts: FORMATS.md §2.7, §3.2.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/types.hpp"

namespace akview::testing {

// The fields of one block. `d` and `m` are stored as the type stores them (f16 for every type
// packed here); `m` is q4_1 / q5_1's m and the K-quants' dmin. `scales` / `mins` are the
// sub-block codes (q2_k: 16 x 4 bits; q3_k: 16 x 6 bits, unsigned as stored; q4_k / q5_k: 8 x 6
// bits; q6_k: 16 signed bytes). `codes` holds one code per element, as stored (unsigned, except
// q8_0's signed bytes): q4_0 decodes (code - 8) * d, q3_k (code - 4) * d * (scale - 32), q6_k
// (code - 32) * d * scale.
struct BlockCodes {
  float d = 0, m = 0;
  std::vector<int> scales, mins, codes;
};

// Types pack_block handles: q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q3_k, q4_k, q5_k, q6_k.
bool can_pack_block(TypeId type);
// Appends the block's bytes to `out`; false (nothing appended) for a type it does not pack or
// fields of the wrong count.
bool pack_block(TypeId type, const BlockCodes& fields, std::vector<uint8_t>& out);

// MLX affine codes of `bits` (1..8) as one LSB-first bit stream (element i at bits [i*bits,
// (i+1)*bits)): the bytes of the packed U32 weight. codes.size() * bits must be a multiple of 8.
std::vector<uint8_t> pack_affine_codes(std::span<const int> codes, int bits);

}   // namespace akview::testing
