// Scalar reference decoders: any row range of any decodable type to f32.
// The truth that compute backends are checked against (FORMATS.md §1.4, §2.7, §3, §4.5).
#pragma once

#include <cstdint>

#include "core/result.hpp"
#include "core/tensor_view.hpp"

namespace akview {

// True when values of `type` can be decoded (false: listed, but marked unsupported).
bool can_decode(TypeId type);

// Decodes rows [row_begin, row_end) of `view` into `out`, which holds (row_end - row_begin) * n_cols
// floats, row-major. Fails (never crashes) on a bad range or an undecodable type.
Status decode_rows(const TensorView& view, int64_t row_begin, int64_t row_end, float* out);

}  // namespace akview
