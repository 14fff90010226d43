// Ollama tensor blobs (FORMATS.md §4.5): MLX packing and formulas, with `.scale` / `.bias`
// companions; int4/int8 are MLX affine (group size from the blob), nvfp4/mxfp4/mxfp8 are MLX's fp
// modes, and an optional `.global_scale` (f32 scalar or one per row) is a plain multiply of the
// result (Ollama's Dequantize applies it on top, without MLX's / (448*6)).
#include "core/decode/composite.hpp"
#include "core/decode/decoders.hpp"

namespace akview::decode {

using composite::FpMode;

void decode_ollama_affine(const TensorView& v, int64_t b, int64_t e, float* o) { composite::affine_rows(v, b, e, o); }
void decode_ollama_nvfp4(const TensorView& v, int64_t b, int64_t e, float* o) {
  composite::fp_rows<FpMode::nvfp4>(v, b, e, o, false);
}
void decode_ollama_mxfp4(const TensorView& v, int64_t b, int64_t e, float* o) {
  composite::fp_rows<FpMode::mxfp4>(v, b, e, o, false);
}
void decode_ollama_mxfp8(const TensorView& v, int64_t b, int64_t e, float* o) {
  composite::fp_rows<FpMode::mxfp8>(v, b, e, o, false);
}

}   // namespace akview::decode
