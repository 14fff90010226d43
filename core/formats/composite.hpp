// Composite quantized tensors (FORMATS.md §3.3, §4.5): a packed U32 weight plus companion scales
// (+ biases, + a global scale) become ONE logical tensor with a QuantInfo; shared by the MLX and
// Ollama openers.
#pragma once

#include <cstdint>
#include <string>

#include "core/model.hpp"
#include "core/result.hpp"

namespace akview {

struct CompositeSpec {
  uint32_t weight = kNone;
  uint32_t scales = kNone;
  uint32_t biases = kNone;         // required for affine modes, absent otherwise
  uint32_t global_scale = kNone;   // optional (nvfp4)
  TypeId type = TypeId::mlx_affine;
  uint8_t bits = 0;
  uint32_t group_size = 0;
};

// Checks §3.1's mode rules and §3.3's shape rule (w_cols*32/bits == s_cols*group_size, equal
// leading dims, biases shaped like scales, scale dtypes); on success the weight becomes the logical
// tensor [..., w_cols*32/bits] of `spec.type` and the companions are flagged kTensorCompanion.
// On failure nothing changes and an unsupported error at the weight says why (the caller marks the
// tensor unsupported with its message).
Status make_composite(Model& model, const CompositeSpec& spec);

// Marks tensor `index` unsupported and adds a Note naming it (the model stays open).
void mark_unsupported(Model& model, uint32_t index, const std::string& why);

// Reorders Model::tensors so each composite's companions follow it directly (shown beneath it).
void order_companions(Model& model);

}   // namespace akview
