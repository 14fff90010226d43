// Elements per quantization group of a view, as list_groups (groups.cpp) cuts it: composite types
// their group size; ggml blocks the block or sub-block its table lists (32 for q4_k, 16 for q6_k,
// 256 for q8_k); 0 for types without groups. core/explain steps through the same groups.
#pragma once

#include <cstdint>

#include "core/tensor_view.hpp"

namespace akview {

uint32_t group_cols(const TensorView& view);

}   // namespace akview
