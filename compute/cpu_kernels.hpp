// The cpu backend's kernel tables: one row per storage type, each a fused dequant + dot over a
// range of rows that never materialises more than one block of f32 weights.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/tensor_view.hpp"

namespace akview::compute {

struct CpuArgs {
  const TensorView* view = nullptr;
  const float* x = nullptr;        // n_cols activations (f32, never quantized)
  const float* xsum16 = nullptr;   // sums of x over each 16-element run (min / bias terms)
  const float* xperm = nullptr;    // x permuted to match an interleaved packing (see prepare)
};

using CpuRowsFn = void (*)(const CpuArgs& args, int64_t row_begin, int64_t row_end, float* y);
using CpuAcceptsFn = bool (*)(const TensorView& view);
// Fills `xperm` from x when the kernel reads interleaved codes (left empty otherwise).
using CpuPrepareFn = void (*)(const TensorView& view, const float* x, std::vector<float>& xperm);

struct CpuKernelRow {
  TypeId type;
  CpuRowsFn rows;
  CpuAcceptsFn accepts = nullptr;   // extra checks (bits, scale types); nullptr: any view of the type
  CpuPrepareFn prepare = nullptr;
  const char* variant = "";   // "avx2" / "block" / "scalar": shown by the bench
};

std::span<const CpuKernelRow> cpu_kernels_float();     // f32, f16, bf16, f8_e5m2, f8_e4m3
std::span<const CpuKernelRow> cpu_kernels_legacy();    // q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl
std::span<const CpuKernelRow> cpu_kernels_kquant();    // q2_k, q3_k, q4_k, q5_k, q6_k, iq4_xs
std::span<const CpuKernelRow> cpu_kernels_affine();    // mlx.affine, ollama.int4, ollama.int8
std::span<const CpuKernelRow> cpu_kernels_fp4();       // mxfp4, mlx.mxfp4, ollama.mxfp4
std::span<const CpuKernelRow> cpu_kernels_iquant();    // iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m
std::span<const CpuKernelRow> cpu_kernels_ternary();   // tq1_0, tq2_0

}   // namespace akview::compute
