// The x-quant path's kernel tables (see xquant.hpp): one row per weight type, each an integer dot of
// weight codes with the quantized x over a range of rows. Kernels read x through XqInput, which
// holds the ggml blocks' contents unpacked for SIMD loads (codes contiguous, scales as float).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "compute/xquant.hpp"
#include "core/tensor_view.hpp"

// Integer dot-product instructions: AVX-512 VNNI (vpdpbusd) with BW/VL, and BMI2's pdep.
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__) && \
    defined(__BMI2__)
#define AKVIEW_XQ_VNNI512 1
#else
#define AKVIEW_XQ_VNNI512 0
#endif
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define AKVIEW_XQ_AVX2 1
#else
#define AKVIEW_XQ_AVX2 0
#endif

namespace akview::compute {

// x after quantization, unpacked: codes[j] is x code j; d[b] the block's scale as float (per 32
// for q8_0 / q8_1, per 256 for q8_K); sum4[k] = codes[4k] + .. + codes[4k+3]; bsum16[k] the sum
// over codes[16k .. 16k+15], q8_K's bsums (empty for q8_0 / q8_1: only the K-quant kernels read
// it); s[b] the q8_1 block's s as float; zpair[k] = z * (codes[2k] + codes[2k+1]) for a weight type
// whose AVX2 / AVX-512 kernels take its zero point z off each pair of products
// (XqKernelRow::pair_zero: q4_0, q5_0, q3_K, q6_K; empty otherwise).
struct XqInput {
  ActQuant kind = ActQuant::q8_0;
  std::vector<int8_t> codes;
  std::vector<float> d, s;
  std::vector<int32_t> sum4;
  std::vector<int16_t> bsum16, zpair;
};
XqInput make_xq_input(ActQuant kind, const float* x, int64_t n, int pair_zero = 0);

struct XqArgs {
  const TensorView* view = nullptr;
  const XqInput* x = nullptr;
};

using XqRowsFn = void (*)(const XqArgs& args, int64_t row_begin, int64_t row_end, float* y);

struct XqKernelRow {
  TypeId type;
  ActQuant act;
  XqRowsFn rows;
  const char* variant;   // "avx512-vnni" / "avx2" / "scalar": the best the build has
  XqRowsFn portable;     // the scalar kernel (same arithmetic; tests run every path)
  XqRowsFn avx2;         // the AVX2 kernel (nullptr when the build has no AVX2 or the type has none)
  int pair_zero = 0;     // the zero point its SIMD kernels read from XqInput::zpair (0: none)
};

// A table row's best kernel and its name: AVX-512 VNNI, else AVX2, else scalar (null: not built).
constexpr XqRowsFn best_rows(XqRowsFn vnni, XqRowsFn avx2, XqRowsFn scalar) {
  return vnni ? vnni : avx2 ? avx2 : scalar;
}
constexpr const char* best_name(XqRowsFn vnni, XqRowsFn avx2) {
  return vnni ? "avx512-vnni" : avx2 ? "avx2" : "scalar";
}

std::span<const XqKernelRow> xq_kernels_legacy();   // q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl
std::span<const XqKernelRow> xq_kernels_kquant();   // q2_k .. q6_k, iq4_xs

}   // namespace akview::compute
