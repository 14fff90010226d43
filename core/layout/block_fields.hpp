// Block field tables (PRODUCT.md "Layout", FORMATS.md §2.7, §3.2, §4.5): one row per storage type
// describing the fields of one block (e.g. q4_K: d f16 @0, dmin f16 @2, scales[12] @4, qs[128] @16),
// and for a tensor and a block index each field's absolute offset, size, raw hex, decoded value and
// meaning. Composite (MLX / Ollama) types describe one group: its packed words in the weight and
// the scale (and bias) rows of its companions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.hpp"
#include "core/result.hpp"

namespace akview {

// What a field holds, for colouring (the TUI's theme roles) and for tests.
enum class FieldRole : uint8_t { scale, min, sub_scales, codes, high_bits, signs, sums, value };

// How a field's bytes decode into its value text.
enum class FieldDecode : uint8_t {
  raw,   // bytes (hex only)
  f16,
  bf16,
  f32,
  f64,
  e8m0_half,    // ggml MXFP4 shared exponent: 2^(e-128)
  ue4m3_half,   // ggml NVFP4 sub-block scales (one per byte)
  u8s,
  i8s,
  u16s,
  i16s,
  nibbles,            // 4-bit codes, low nibble first per byte
  crumbs,             // 2-bit codes, lowest bits first per byte
  bits,               // 1-bit flags, lowest bit first
  kquant_scale_min,   // Q4_K/Q5_K 12 bytes -> 8 (scale, min) pairs of 6 bits
  q3_k_scales,        // Q3_K 12 bytes -> 16 6-bit scales (stored offset by 32)
  q2_k_scales,        // Q2_K 16 bytes: scale (low nibble) and min (high nibble)
  element,            // one element of a plain type (decoded by the tensor's type)
};

struct BlockField {
  std::string_view name;
  uint16_t offset = 0;   // bytes from the block's start
  uint16_t size = 0;
  FieldDecode decode = FieldDecode::raw;
  FieldRole role = FieldRole::codes;
  std::string_view meaning;
};

// The fields of one block of `type` (block_quant types: the table; plain types: one element
// field of the element's bytes; composite types: empty, see describe_block).
std::span<const BlockField> block_fields(TypeId type);

struct FieldReport {
  std::string name;
  uint64_t offset = 0;   // absolute in the file holding it
  uint64_t size = 0;
  std::string hex;
  std::string value;
  std::string meaning;
  FieldRole role = FieldRole::codes;
  uint32_t file = 0;   // which Model::files (companion rows of an Ollama tensor live in other blobs)
};

struct BlockReport {
  std::string name;
  std::string type;
  uint32_t file = 0;
  uint64_t offset = 0;   // the tensor's data
  uint64_t nbytes = 0;
  uint64_t block_bytes = 0;   // composite: the packed bytes of one group in the weight
  uint64_t block_elems = 0;
  uint64_t n_blocks = 0;
  uint64_t block = 0;
  std::vector<FieldReport> fields;
};

// The fields of block `block` of tensor `tensor_index`. Errors: not_found (block out of range),
// unsupported (a type with no block table), out_of_bounds (bytes outside the file).
Result<BlockReport> describe_block(const Model& model, uint32_t tensor_index, uint64_t block);

}   // namespace akview
