// ggml's IQ types: IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S (lattice codebooks) and
// IQ4_NL, IQ4_XS (a 16-entry non-linear table). FORMATS.md §2.7; operations in the order of
// dequantize_row_iq* (ggml-quants.c) so the results are bit-identical to ggml / gguf-py.
// Notation: grid(i) = 8 (IQ3: 4) bytes of a lattice point, signs byte bit j flips element j.
#include "core/decode/decoders.hpp"
#include "core/decode/float_formats.hpp"
#include "core/decode/iq_grids.hpp"

namespace akview::decode {
namespace {

using fp::f16_to_f32;
using fp::load_u16;
using fp::load_u32;
using iq::grid_byte;
using iq::kIq4nlValues;

// -1.0f or 1.0f by the bit's value, without a branch (random sign bits mispredict half the time; a
// multiply by this factor is ggml's own step, so even a NaN keeps its bits).
inline float sign_of(uint8_t signs, int j) {
  return fp::bits_f32(0x3F800000u | (static_cast<uint32_t>((signs >> j) & 1) << 31));
}

// IQ2_XXS (256, 66 bytes)
//   +0 f16 d | +2 u16 qs[32]: per 32-element sub-block ib, 8 bytes = aux0 (4 grid indices, 1 byte each)
//   and aux1 (LE u32: 4 x 7-bit sign indices, bits 28..31 the scale)
//   db = d * (0.5 + scale) * 0.25; y = db * grid * sign
void iq2_xxs_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  for (int ib = 0; ib < 8; ++ib) {
    const uint8_t* q = b + 2 + 8 * ib;
    const uint32_t aux1 = load_u32(q + 4);
    const float db = d * (0.5f + static_cast<float>(aux1 >> 28)) * 0.25f;
    for (int l = 0; l < 4; ++l) {
      const uint64_t g = iq::kIq2xxsGrid[q[l]];
      const uint8_t signs = iq::kSignsIq2xs[(aux1 >> (7 * l)) & 127];
      for (int j = 0; j < 8; ++j) y[j] = db * static_cast<float>(grid_byte(g, j)) * sign_of(signs, j);
      y += 8;
    }
  }
}

// IQ2_XS (256, 74 bytes)
//   +0 f16 d | +2 u16 qs[32] (9-bit grid index | 7-bit sign index << 9) | +66 u8 scales[8] (2 x 4 bits)
//   db[h] = d * (0.5 + nibble h) * 0.25 for the two 16-element halves of sub-block ib
void iq2_xs_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  const uint8_t* scales = b + 66;
  for (int ib = 0; ib < 8; ++ib) {
    const float db0 = d * (0.5f + static_cast<float>(scales[ib] & 0xF)) * 0.25f;
    const float db1 = d * (0.5f + static_cast<float>(scales[ib] >> 4)) * 0.25f;
    for (int l = 0; l < 4; ++l) {
      const uint16_t qv = load_u16(b + 2 + 2 * (4 * ib + l));
      const uint64_t g = iq::kIq2xsGrid[qv & 511];
      const uint8_t signs = iq::kSignsIq2xs[qv >> 9];
      const float db = l < 2 ? db0 : db1;
      for (int j = 0; j < 8; ++j) y[j] = db * static_cast<float>(grid_byte(g, j)) * sign_of(signs, j);
      y += 8;
    }
  }
}

// IQ2_S (256, 82 bytes)
//   +0 f16 d | +2 u8 qs[32] (grid index low 8 bits) | +34 u8 signs[32] | +66 u8 qh[8] (2 high bits
//   per index) | +74 u8 scales[8]      index = qs[l] | ((qh[ib] << (8 - 2l)) & 0x300)
void iq2_s_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  const uint8_t* qs = b + 2;
  const uint8_t* signs = b + 34;
  const uint8_t* qh = b + 66;
  const uint8_t* scales = b + 74;
  for (int ib = 0; ib < 8; ++ib) {
    const float db0 = d * (0.5f + static_cast<float>(scales[ib] & 0xF)) * 0.25f;
    const float db1 = d * (0.5f + static_cast<float>(scales[ib] >> 4)) * 0.25f;
    for (int l = 0; l < 4; ++l) {
      const float dl = l < 2 ? db0 : db1;
      const uint32_t idx = qs[4 * ib + l] | ((static_cast<uint32_t>(qh[ib]) << (8 - 2 * l)) & 0x300);
      const uint64_t g = iq::kIq2sGrid[idx];
      const uint8_t s = signs[4 * ib + l];
      for (int j = 0; j < 8; ++j) y[j] = dl * static_cast<float>(grid_byte(g, j)) * sign_of(s, j);
      y += 8;
    }
  }
}

// IQ3_XXS (256, 98 bytes)
//   +0 f16 d | +2 u8 qs[64] (1-byte grid indices, 4 elements each) | +66 u8 scales_and_signs[32]
//   per sub-block ib: LE u32 = 4 x 7-bit sign indices + 4-bit scale (bits 28..31)
//   db = d * (0.5 + scale) * 0.5
void iq3_xxs_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  const uint8_t* qs = b + 2;
  const uint8_t* ss = b + 66;
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t aux = load_u32(ss + 4 * ib);
    const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f;
    for (int l = 0; l < 4; ++l) {
      const uint8_t signs = iq::kSignsIq2xs[(aux >> (7 * l)) & 127];
      const uint32_t g1 = iq::kIq3xxsGrid[qs[2 * l]];
      const uint32_t g2 = iq::kIq3xxsGrid[qs[2 * l + 1]];
      for (int j = 0; j < 4; ++j) {
        y[j] = db * static_cast<float>(grid_byte(g1, j)) * sign_of(signs, j);
        y[j + 4] = db * static_cast<float>(grid_byte(g2, j)) * sign_of(signs, j + 4);
      }
      y += 8;
    }
    qs += 8;
  }
}

// IQ3_S (256, 110 bytes)
//   +0 f16 d | +2 u8 qs[64] | +66 u8 qh[8] (9th index bit) | +74 u8 signs[32] | +106 u8 scales[4]
//   two sub-blocks per scale byte: db = d * (1 + 2 * nibble)
//   index = qs[2l+k] | ((qh << (8 - 2l - k)) & 256)
void iq3_s_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  const uint8_t* qs = b + 2;
  const uint8_t* qh = b + 66;
  const uint8_t* signs = b + 74;
  const uint8_t* scales = b + 106;
  for (int ib = 0; ib < 8; ++ib) {
    const uint8_t sc = scales[ib / 2];
    const float db = d * static_cast<float>(1 + 2 * ((ib % 2) ? (sc >> 4) : (sc & 0xF)));
    const uint32_t h = qh[ib];
    for (int l = 0; l < 4; ++l) {
      const uint32_t i1 = qs[2 * l] | ((h << (8 - 2 * l)) & 256);
      const uint32_t i2 = qs[2 * l + 1] | ((h << (7 - 2 * l)) & 256);
      const uint32_t g1 = iq::kIq3sGrid[i1];
      const uint32_t g2 = iq::kIq3sGrid[i2];
      for (int j = 0; j < 4; ++j) {
        y[j] = db * static_cast<float>(grid_byte(g1, j)) * sign_of(signs[l], j);
        y[j + 4] = db * static_cast<float>(grid_byte(g2, j)) * sign_of(signs[l], j + 4);
      }
      y += 8;
    }
    qs += 8;
    signs += 4;
  }
}

constexpr float kIq1Delta = 0.125f;

// IQ1_S (256, 50 bytes)
//   +0 f16 d | +2 u8 qs[32] (grid index low 8 bits) | +34 u16 qh[8]: per sub-block, 4 x 3 high index
//   bits (bits 3l..3l+2), scale bits 12..14, delta sign bit 15
//   dl = d * (2*scale + 1); y = dl * (grid + delta)
void iq1_s_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  const uint8_t* qs = b + 2;
  for (int ib = 0; ib < 8; ++ib) {
    const uint16_t qh = load_u16(b + 34 + 2 * ib);
    const float dl = d * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
    const float delta = (qh & 0x8000) ? -kIq1Delta : kIq1Delta;
    for (int l = 0; l < 4; ++l) {
      const uint64_t g = iq::kIq1sGrid[qs[l] | (((qh >> (3 * l)) & 7) << 8)];
      for (int j = 0; j < 8; ++j) y[j] = dl * (static_cast<float>(static_cast<int8_t>(grid_byte(g, j))) + delta);
      y += 8;
    }
    qs += 4;
  }
}

// IQ1_M (256, 56 bytes)
//   +0 u8 qs[32] | +32 u8 qh[16] (per 8 elements: 3 high index bits + delta sign bit 3, two per byte)
//   +48 u8 scales[8] as 4 LE u16: 3-bit sub-scales (4 per u16), and the f16 d spread over the top
//   nibbles: d bits = sc0>>12 | (sc1>>8)&0xF0 | (sc2>>4)&0xF00 | sc3&0xF000
void iq1_m_block(const uint8_t* __restrict b, float* __restrict y) {
  const uint8_t* qs = b;
  const uint8_t* qh = b + 32;
  uint16_t sc[4];
  for (int k = 0; k < 4; ++k) sc[k] = load_u16(b + 48 + 2 * k);
  const uint16_t dbits =
      static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000));
  const float d = f16_to_f32(dbits);
  for (int ib = 0; ib < 8; ++ib) {
    const float dl1 = d * static_cast<float>(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 7) + 1);
    const float dl2 = d * static_cast<float>(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 7) + 1);
    const uint32_t idx[4] = {
        qs[0] | ((static_cast<uint32_t>(qh[0]) << 8) & 0x700u), qs[1] | ((static_cast<uint32_t>(qh[0]) << 4) & 0x700u),
        qs[2] | ((static_cast<uint32_t>(qh[1]) << 8) & 0x700u), qs[3] | ((static_cast<uint32_t>(qh[1]) << 4) & 0x700u)};
    const float delta[4] = {(qh[0] & 0x08) ? -kIq1Delta : kIq1Delta, (qh[0] & 0x80) ? -kIq1Delta : kIq1Delta,
                            (qh[1] & 0x08) ? -kIq1Delta : kIq1Delta, (qh[1] & 0x80) ? -kIq1Delta : kIq1Delta};
    for (int l = 0; l < 4; ++l) {
      const float dl = l < 2 ? dl1 : dl2;
      const uint64_t g = iq::kIq1sGrid[idx[l]];
      for (int j = 0; j < 8; ++j) y[j] = dl * (static_cast<float>(static_cast<int8_t>(grid_byte(g, j))) + delta[l]);
      y += 8;
    }
    qs += 4;
    qh += 2;
  }
}

// IQ4_NL (32, 18 bytes)
//   +0 f16 d | +2 u8 qs[16]: element j = low nibble, j+16 = high nibble; y = d * kvalues[nibble]
void iq4_nl_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(kIq4nlValues[b[2 + j] & 0xF]);
    y[j + 16] = d * static_cast<float>(kIq4nlValues[b[2 + j] >> 4]);
  }
}

// IQ4_XS (256, 136 bytes)
//   +0 f16 d | +2 u16 scales_h (2 high bits per sub-block) | +4 u8 scales_l[4] (4 low bits, 2 per byte)
//   +8 u8 qs[128] (16 bytes per 32-element sub-block, IQ4_NL nibble order)
//   ls = low | high << 4; dl = d * (ls - 32); y = dl * kvalues[nibble]
void iq4_xs_block(const uint8_t* __restrict b, float* __restrict y) {
  const float d = f16_to_f32(load_u16(b));
  const uint16_t scales_h = load_u16(b + 2);
  const uint8_t* scales_l = b + 4;
  const uint8_t* qs = b + 8;
  for (int ib = 0; ib < 8; ++ib) {
    const int ls = ((scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4);
    const float dl = d * static_cast<float>(ls - 32);
    for (int j = 0; j < 16; ++j) {
      y[j] = dl * static_cast<float>(kIq4nlValues[qs[j] & 0xF]);
      y[j + 16] = dl * static_cast<float>(kIq4nlValues[qs[j] >> 4]);
    }
    y += 32;
    qs += 16;
  }
}

}   // namespace

void decode_iq2_xxs(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::iq2_xxs, iq2_xxs_block>(v, b, e, o);
}
void decode_iq2_xs(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::iq2_xs, iq2_xs_block>(v, b, e, o);
}
void decode_iq2_s(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::iq2_s, iq2_s_block>(v, b, e, o);
}
void decode_iq3_xxs(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::iq3_xxs, iq3_xxs_block>(v, b, e, o);
}
void decode_iq3_s(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::iq3_s, iq3_s_block>(v, b, e, o);
}
void decode_iq1_s(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::iq1_s, iq1_s_block>(v, b, e, o);
}
void decode_iq1_m(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::iq1_m, iq1_m_block>(v, b, e, o);
}
void decode_iq4_nl(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::iq4_nl, iq4_nl_block>(v, b, e, o);
}
void decode_iq4_xs(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::iq4_xs, iq4_xs_block>(v, b, e, o);
}

}   // namespace akview::decode
