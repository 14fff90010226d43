// MLX quantized tensors (packed U32 weight + scales [+ biases]): affine 2/3/4/5/6/8 bits with
// f16/bf16/f32 scales and biases, mxfp4 and mxfp8 (E8M0 scales), nvfp4 (E4M3 scales, optional
// global scale / (448*6)). FORMATS.md §3.2-3.4; the row loops and byte diagram are in composite.hpp.
#include "core/decode/composite.hpp"
#include "core/decode/decoders.hpp"

namespace akview::decode {

using composite::FpMode;

std::span<const AffineKernelPair> affine_vector_kernels() {
#if defined(AKVIEW_DECODE_AVX2)
  static constexpr AffineKernelPair kPairs[] = {
      {4, composite::affine_group<4>, composite::affine_group_avx2<4>},
      {8, composite::affine_group<8>, composite::affine_group_avx2<8>},
  };
  return kPairs;
#else
  return {};
#endif
}

void decode_mlx_affine(const TensorView& v, int64_t b, int64_t e, float* o) { composite::affine_rows(v, b, e, o); }
void decode_mlx_mxfp4(const TensorView& v, int64_t b, int64_t e, float* o) {
  composite::fp_rows<FpMode::mxfp4>(v, b, e, o, true);
}
void decode_mlx_nvfp4(const TensorView& v, int64_t b, int64_t e, float* o) {
  composite::fp_rows<FpMode::nvfp4>(v, b, e, o, true);
}
void decode_mlx_mxfp8(const TensorView& v, int64_t b, int64_t e, float* o) {
  composite::fp_rows<FpMode::mxfp8>(v, b, e, o, true);
}

}   // namespace akview::decode
