// The step-through of one quantization group: for element (row, col) of a tensor, the bytes that
// hold its group, the fields read from them (scales, mins, biases, super-block scales and how they
// are unpacked), the bits split into codes (IQ types: grid indices, signs and grid points), the
// formula with its numbers, and the group's values. The values are computed here step by step with
// the decoders' float operations in the same order, so they equal decode_rows bit for bit (tests).
// FORMATS.md §2.7 (GGUF blocks), §3.2-3.4 (MLX), §4.5 (Ollama blobs). No UI: reports print it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "core/tensor_view.hpp"

namespace akview {

struct ExplainStep {
  std::string label;            // "d (f16)", "6-bit scale and min of sub-block 5", "codes"
  std::string formula;          // how it is read or computed, with the numbers of this group
  std::vector<double> values;   // what the step yields (codes, scales, signs, ...); may be empty
};

// A quantization family: what is stored, the formula, bits per weight, where it comes from.
struct QuantFamily {
  std::string_view key;     // "kquant", "iq_lattice", "mlx_affine", ...
  std::string_view title;   // "ggml K-quants"
  std::string_view paragraph;
};

struct GroupExplanation {
  int64_t row = 0, col = 0;     // the element asked for
  int64_t group_col = 0;        // first column of its group (the group lies in `row`)
  uint32_t group_n = 0;         // elements in the group
  uint64_t bytes_offset = 0;    // where `bytes` start: the data span's origin + offset in it
  std::vector<uint8_t> bytes;   // the block (ggml) or packed group (MLX / Ollama) holding it
  std::vector<ExplainStep> steps;
  std::vector<float> values;   // the group's values, element order (== decode_rows)
  const QuantFamily* family = nullptr;
  std::string bits_per_weight;   // "4.5 bits per weight: 144 bytes per 256 weights"
};

// Absolute file offsets of the view's spans, so the steps can name where each byte lives; all 0
// gives offsets relative to each span's start.
struct SpanOrigins {
  uint64_t data = 0, scales = 0, biases = 0, global_scale = 0;
};

// The group of `view` holding element (row, col). Fails on an undecodable type or inconsistent view,
// and with ErrorCode::out_of_bounds naming the range when row or col lies outside the tensor.
Result<GroupExplanation> explain_element(const TensorView& view, int64_t row, int64_t col,
                                         const SpanOrigins& origins = {});

// The family of `type` (every type has one; plain dtypes are "float" / "integer").
const QuantFamily& quant_family(TypeId type);

}   // namespace akview
