// A tensor's bytes seen as a 2-D matrix of rows, for decoders and compute backends.
// Rows = product of all but the innermost logical dimension; cols = the innermost dimension.
#pragma once

#include <cstdint>
#include <span>

#include "core/model.hpp"
#include "core/result.hpp"
#include "core/types.hpp"

namespace akview {

struct TensorView {
  TypeId type = TypeId::f32;
  int64_t n_rows = 0;
  int64_t n_cols = 0;              // logical elements per row
  std::span<const uint8_t> data;   // all rows (for composite types: the packed weight)
  uint64_t row_bytes = 0;          // bytes per row of `data`

  // Composite types (MLX / Ollama) only.
  uint8_t bits = 0;
  uint32_t group_size = 0;
  TypeId scales_type = TypeId::f16;   // f16/bf16/f32 (affine) or u8 (E8M0 / E4M3 bytes)
  TypeId biases_type = TypeId::f16;
  std::span<const uint8_t> scales;         // [n_rows, n_cols / group_size]
  std::span<const uint8_t> biases;         // same shape as scales; empty when the mode has none
  std::span<const uint8_t> global_scale;   // f32 scalar or per-row vector; empty when absent

  // MappedFile::id() of the file `data` lies in (0: bytes of unknown lifetime): backends that keep
  // device copies of the weights cache them only when it is set.
  uint64_t source_id = 0;
};

// Builds the view of tensor `t` of `model`, checking every span against its file.
Result<TensorView> make_tensor_view(const Model& model, const Tensor& t);

}   // namespace akview
