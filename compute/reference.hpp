// The f64 reference matvec: decode_rows (core's scalar decoders) + double accumulation.
#pragma once

#include <cstdint>

#include "core/result.hpp"
#include "core/tensor_view.hpp"

namespace akview::compute {

// y[r] = sum_j w_rj x_j in double; abs_wx (optional) = sum_j |w_rj x_j|, the scale of the
// rounding error a float32 kernel may make on row r.
Status reference_matvec(const TensorView& view, const float* x, double* y, double* abs_wx = nullptr);
// The same for rows [row_begin, row_end) of the view: y[r - row_begin] (an MoE expert's slice of a
// stacked [experts, rows, cols] tensor).
Status reference_matvec_rows(const TensorView& view, int64_t row_begin, int64_t row_end, const float* x, double* y,
                             double* abs_wx = nullptr);

}   // namespace akview::compute
