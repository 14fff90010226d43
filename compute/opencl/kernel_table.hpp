// Which OpenCL kernel (compute/kernels/*.cl) runs which storage type, and the arguments it takes:
// one row per type. A type without a row runs on the cpu backend.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/tensor_view.hpp"

namespace akview::compute {

// plain: (w, w_bytes, x, y, n_rows, n_cols). affine adds the scales and biases buffers with their
// byte counts after w, and (bits, group size, scale type, bias type) at the end.
enum class ArgLayout : uint8_t { plain, affine };

struct ClKernelRow {
  TypeId type;
  const char* kernel;
  ArgLayout layout = ArgLayout::plain;
};

inline constexpr std::array kClKernels = {
    ClKernelRow{TypeId::f32, "mv_f32"},
    ClKernelRow{TypeId::f16, "mv_f16"},
    ClKernelRow{TypeId::bf16, "mv_bf16"},
    ClKernelRow{TypeId::q4_0, "mv_q4_0"},
    ClKernelRow{TypeId::q4_1, "mv_q4_1"},
    ClKernelRow{TypeId::q5_0, "mv_q5_0"},
    ClKernelRow{TypeId::q5_1, "mv_q5_1"},
    ClKernelRow{TypeId::q8_0, "mv_q8_0"},
    ClKernelRow{TypeId::iq4_nl, "mv_iq4_nl"},
    ClKernelRow{TypeId::q2_k, "mv_q2_k"},
    ClKernelRow{TypeId::q3_k, "mv_q3_k"},
    ClKernelRow{TypeId::q4_k, "mv_q4_k"},
    ClKernelRow{TypeId::q5_k, "mv_q5_k"},
    ClKernelRow{TypeId::q6_k, "mv_q6_k"},
    ClKernelRow{TypeId::iq4_xs, "mv_iq4_xs"},
    ClKernelRow{TypeId::mlx_affine, "mv_affine", ArgLayout::affine},
    ClKernelRow{TypeId::ollama_int4, "mv_affine", ArgLayout::affine},
    ClKernelRow{TypeId::ollama_int8, "mv_affine", ArgLayout::affine},
};

// The work-group size of a launch with one work-item a row (CPU devices; the global size is rounded
// up to it). With several work-items a row (GPUs) the work-group is one row: program.hpp, row_lanes.
inline constexpr size_t kLocalSize = 16;

// The row whose kernel runs this view; nullptr when none does (no row for the type, or an affine
// view outside what mv_affine handles).
const ClKernelRow* find_cl_kernel(const TensorView& view);

// Scalar companion types as the kernels number them (common.cl ld_scalar); -1 for any other.
int cl_scalar_code(TypeId t);

}   // namespace akview::compute
