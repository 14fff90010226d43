// Quantization groups of a tensor: for a row range, every block / sub-block / group with its
// scale(s), bias or min, decoded value range, levels used out of 2^bits and saturated codes.
// Computed lazily for the requested rows only (one row is decoded at a time).
#pragma once

#include <cstdint>
#include <vector>

#include "core/result.hpp"
#include "core/tensor_view.hpp"

namespace akview {

struct QuantGroup {
  int64_t row = 0;
  int64_t col = 0;            // first column of the group
  uint32_t n_cols = 0;        // elements in the group
  float scale = 0.0f;         // effective multiplier of the codes (K-quants: d * sub-scale)
  float bias = 0.0f;          // additive term (q4_1/q5_1: m; K-quants: -dmin * sub-min; affine: bias)
  bool has_super = false;     // K-quants / IQ types: the super-block fields below are meaningful
  float super_scale = 0.0f;   // super-block d
  float super_min = 0.0f;     // super-block dmin (0 where the type has none)
  uint8_t sub_scale = 0;      // raw sub-block scale code
  uint8_t sub_min = 0;        // raw sub-block min code
  float value_min = 0.0f;     // decoded values of the group (NaN-free min/max; NaN if all NaN)
  float value_max = 0.0f;
  uint32_t levels_used = 0;    // distinct codes present (lattice types: distinct decoded values)
  uint32_t levels_total = 0;   // 2^bits (3 for ternary; 0 for lattice codebooks, where codes are grid points)
  uint32_t saturated = 0;      // elements whose code is at either extreme of the code range
};

// True when `type` has quantization groups to list.
bool has_groups(TypeId type);

// Groups of rows [row_begin, row_end) of `view`, in row-major order. Fails on a bad range or view,
// or a type without groups (plain floats / integers).
Result<std::vector<QuantGroup>> list_groups(const TensorView& view, int64_t row_begin, int64_t row_end);

}   // namespace akview
