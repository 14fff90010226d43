// Scalar reference decoders: any row range of any decodable type to f32.
// The truth that compute backends are checked against (FORMATS.md §1.4, §2.7, §3, §4.5).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/result.hpp"
#include "core/tensor_view.hpp"

namespace akview {

// True when values of `type` can be decoded (false: listed, but marked unsupported).
bool can_decode(TypeId type);

// A stated assumption behind the decoded values of `type` (e.g. the unverified nibble order of
// safetensors F4), for the UI and JSON to show; empty when there is none.
std::string_view decode_caveat(TypeId type);

// Checks that `view` is self-consistent for decoding (row bytes, spans, composite bits/group size,
// scale and bias spans, global scale) without decoding anything.
Status validate_view(const TensorView& view);

// Decodes rows [row_begin, row_end) of `view` into `out`, which holds (row_end - row_begin) * n_cols
// floats, row-major. Fails (never crashes) on a bad range, an inconsistent view or an undecodable type,
// and with ErrorCode::truncated when the mapped file has shrunk under the view (core/fault_guard.hpp):
// safe to call on any thread, each call guards its own reads.
Status decode_rows(const TensorView& view, int64_t row_begin, int64_t row_end, float* out);

}   // namespace akview
