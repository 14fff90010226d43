// Ternary block types TQ1_0 and TQ2_0 (values -1, 0, +1 times d). FORMATS.md §2.7; order of
// operations as dequantize_row_tq*_0 in ggml-quants.c.
#include "core/decode/decoders.hpp"
#include "core/decode/float_formats.hpp"

namespace akview::decode {
namespace {

// TQ1_0 (256, 54 bytes): base-3 packing, 5 trits per byte (4 in qh)
//   +0 u8 qs[48] | +48 u8 qh[4] | +52 f16 d
//   trit n of byte x = ((uint8_t)(x * 3^n) * 3) >> 8   (the product wraps mod 256 on purpose)
//   elements: qs[0..31] x 5 trits (n-major), qs[32..47] x 5 trits, qh[0..3] x 4 trits
inline float trit(uint8_t x, uint8_t pow3, float d) {
  const uint8_t q = static_cast<uint8_t>(x * pow3);
  const int xi = (static_cast<uint16_t>(q) * 3) >> 8;
  return static_cast<float>(xi - 1) * d;
}
void tq1_0_block(const uint8_t* __restrict b, float* __restrict y) {
  static constexpr uint8_t kPow3[6] = {1, 3, 9, 27, 81, 243};
  const uint8_t* qs = b;
  const uint8_t* qh = b + 48;
  const float d = fp::f16_to_f32(fp::load_u16(b + 52));
  for (int n = 0; n < 5; ++n)
    for (int m = 0; m < 32; ++m) *y++ = trit(qs[m], kPow3[n], d);
  for (int n = 0; n < 5; ++n)
    for (int m = 0; m < 16; ++m) *y++ = trit(qs[32 + m], kPow3[n], d);
  for (int n = 0; n < 4; ++n)
    for (int j = 0; j < 4; ++j) *y++ = trit(qh[j], kPow3[n], d);
}

// TQ2_0 (256, 66 bytes): 2-bit codes, y = (q - 1) * d
//   +0 u8 qs[64] | +64 f16 d
//   for half j in {0, 32}, shift l in 0..3, m in 0..31: element = (qs[j+m] >> 2l) & 3
void tq2_0_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = fp::f16_to_f32(fp::load_u16(b + 64));
  for (int j = 0; j < 64; j += 32)
    for (int l = 0; l < 4; ++l)
      for (int m = 0; m < 32; ++m) *y++ = static_cast<float>(((b[j + m] >> (2 * l)) & 3) - 1) * d;
}

}   // namespace

void decode_tq1_0(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::tq1_0, tq1_0_block>(v, b, e, o);
}
void decode_tq2_0(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::tq2_0, tq2_0_block>(v, b, e, o);
}

}   // namespace akview::decode
