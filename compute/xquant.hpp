// The ggml-equivalent matvec path (`akview run --x-quant`): x is quantized to 8 bits the way ggml's
// CPU backend quantizes its activations for the weight type (its vec_dot type, FORMATS.md §6:
// q8_0 for q4_0 / q5_0 / q8_0 / iq4_nl, q8_1 for q4_1 / q5_1, q8_K for the K-quants and iq4_xs),
// then each row is an integer dot product of weight codes and x codes per block, combined in f32
// with the block scales. The exact path (f32 x) stays the backends' matvec; this one shows what the
// activation quantization costs.
//
// Arithmetic claimed (checked by tests/compute/xquant_test.cpp): every per-block (per-sub-block for
// the K-quants) sum of code products is exact in int32 (the SIMD kernels hold it as lanes, each
// exact over its own elements); only the combination with the scales and the sums over blocks and
// lanes round, in f32. So with y_q = sum_j w_j * xq_j in exact arithmetic (w the
// dequantized weights, xq the dequantized x codes; for q8_1 the stored s replaces d * sum(qs)):
//   |y - y_q| <= (n_blocks + 16) * 2^-24 * sum_j (|w_j| + mu_j) * |xq_j|
// where mu_j bounds the per-block offset the weight type subtracts (q4_1 / q5_1: |m|; q2_K: 15
// |dmin|; q4_K / q5_K: 63 |dmin|, taken twice since |d sc q| <= |w| + |dmin m|; 0 otherwise).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/result.hpp"
#include "core/tensor_view.hpp"

namespace akview::compute {

enum class ActQuant : uint8_t { q8_0, q8_1, q8_k };

// ggml's activation blocks, byte for byte (FORMATS.md §2.7: Q8_0 34 bytes, Q8_1 36, Q8_K 292).
struct BlockQ8_0 {
  uint16_t d;   // f16
  int8_t qs[32];
};
struct BlockQ8_1 {
  uint16_t d, s;   // f16: d, and d * sum(qs)
  int8_t qs[32];
};
struct BlockQ8K {
  float d;   // f32, negative when the largest-magnitude x is positive
  int8_t qs[256];
  int16_t bsums[16];
};
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ8_1) == 36 && sizeof(BlockQ8K) == 292);

// The vec_dot type ggml uses for x with weights of `type`; nullopt when this path has no kernel for it.
std::optional<ActQuant> act_quant_for(TypeId type);
std::string_view act_quant_name(ActQuant q);   // "q8_0", "q8_1", "q8_K"

// x (n a multiple of the block: 32, or 256 for q8_K) -> blocks, as ggml's CPU backend does on this
// build's target (on x86 with AVX the q8_0 / q8_1 multiplier is 127/amax with ties-to-even
// rounding; otherwise the reference 1/d with half-away rounding; q8_K uses the reference everywhere).
void quantize_q8_0(const float* x, int64_t n, BlockQ8_0* out);
void quantize_q8_1(const float* x, int64_t n, BlockQ8_1* out);
void quantize_q8_k(const float* x, int64_t n, BlockQ8K* out);

// IEEE binary16 from float, round to nearest even (ggml's FP32_TO_FP16 on F16C hardware).
uint16_t f32_to_f16_rne(float f);

// True when the x-quant path has a kernel for the view.
bool xquant_supports(const TensorView& view);
// Which kernel runs: the best this CPU and build have (AVX-512 VNNI, else AVX2, else scalar), or one
// of the others by name (tests and the bench run each; a path the build lacks falls back to scalar).
enum class XqPath : uint8_t { best, avx2, scalar };
// y[0..n_rows) = W xq with x quantized as above; runs on the shared thread pool.
Status xquant_matvec(const TensorView& view, const float* x, float* y, XqPath path = XqPath::best);
// Which kernel variant runs the view on `path` ("avx512-vnni", "avx2", "scalar"; "" when unsupported).
std::string_view xquant_variant(const TensorView& view, XqPath path = XqPath::best);

}   // namespace akview::compute
