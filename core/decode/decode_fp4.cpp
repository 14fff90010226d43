// ggml's FP4 block types MXFP4 (E8M0 block scale) and NVFP4 (four UE4M3 sub-block scales).
// FORMATS.md §2.7; ggml stores E2M1 doubled (kvalues) and halves the scale, so y = kvalue * d.
// Nibble order: element j = low nibble of byte j, element j + half = high nibble (not MLX's order).
#include "core/decode/decoders.hpp"
#include "core/decode/float_formats.hpp"

namespace akview::decode {
namespace {

constexpr int8_t kFp4Doubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// MXFP4 (32, 17 bytes)
//   +0 u8 e (E8M0) | +1 u8 qs[16]      d = 2^(e-128) (ggml's _half helper); y = kvalue * d
void mxfp4_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = fp::e8m0_half_to_f32(b[0]);
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>(kFp4Doubled[b[1 + j] & 0x0F]) * d;
    y[j + 16] = static_cast<float>(kFp4Doubled[b[1 + j] >> 4]) * d;
  }
}

// NVFP4 (64, 36 bytes)
//   +0 u8 d[4] (UE4M3, one per 16 elements) | +4 u8 qs[32] (8 bytes per sub-block)
//   sub-block s: element j = low nibble of qs[8s+j], element j+8 = high nibble; y = kvalue * d/2
void nvfp4_block(const uint8_t* __restrict b, float* __restrict y) {
  for (int s = 0; s < 4; ++s) {
    const float d = fp::ue4m3_half_to_f32(b[s]);
    const uint8_t* qs = b + 4 + 8 * s;
    for (int j = 0; j < 8; ++j) {
      y[16 * s + j] = static_cast<float>(kFp4Doubled[qs[j] & 0x0F]) * d;
      y[16 * s + j + 8] = static_cast<float>(kFp4Doubled[qs[j] >> 4]) * d;
    }
  }
}

}   // namespace

void decode_mxfp4(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::mxfp4, mxfp4_block>(v, b, e, o);
}
void decode_nvfp4(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::nvfp4, nvfp4_block>(v, b, e, o);
}

}   // namespace akview::decode
