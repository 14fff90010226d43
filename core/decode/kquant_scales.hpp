// The packed 6-bit sub-block scales of the K-quants, shared by the decoders and groups.cpp.
// FORMATS.md §2.7 "K-quant scale/min helper" and the Q3_K per-index form.
#pragma once

#include <cstdint>
#include <cstring>

namespace akview::decode {

// Q4_K / Q5_K: 12 bytes -> 8 (scale, min) pairs of 6 bits.
//   bytes 0-3: scale j (low 6 bits) + top 2 bits of scale j+4
//   bytes 4-7: min j (low 6 bits) + top 2 bits of min j+4
//   bytes 8-11: low 4 bits of scale j+4 (low nibble) and min j+4 (high nibble)
inline void kquant_scale_min(int j, const uint8_t* q, uint8_t* sc, uint8_t* mn) {
  if (j < 4) {
    *sc = q[j] & 63;
    *mn = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *mn = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Q4_K / Q5_K: all 8 pairs at once, kquant_scale_min's rule done on four fields a word: byte j of
// `scales` is scale j, byte j of `mins` is min j (j = 0..7).
inline void kquant_scales_mins8(const uint8_t* q, uint64_t* scales, uint64_t* mins) {
  uint32_t u[3];
  std::memcpy(u, q, sizeof u);
  const uint32_t sc_high = (u[2] & 0x0f0f0f0f) | ((u[0] >> 2) & 0x30303030);
  const uint32_t m_high = ((u[2] >> 4) & 0x0f0f0f0f) | ((u[1] >> 2) & 0x30303030);
  *scales = (u[0] & 0x3f3f3f3f) | uint64_t{sc_high} << 32;
  *mins = (u[1] & 0x3f3f3f3f) | uint64_t{m_high} << 32;
}

// Q3_K: 12 bytes -> 16 6-bit scales (0..63, stored offset by 32):
//   s[k] = (k < 8 ? sc[k] & 0xF : sc[k-8] >> 4) | (((sc[8 + k%4] >> (2*(k/4))) & 3) << 4)
inline void q3_k_unpack_scales(const uint8_t* sc, int8_t* out) {
  for (int k = 0; k < 16; ++k) {
    const int low = k < 8 ? (sc[k] & 0xF) : (sc[k - 8] >> 4);
    const int high = (sc[8 + k % 4] >> (2 * (k / 4))) & 3;
    out[k] = static_cast<int8_t>(low | (high << 4));
  }
}

}   // namespace akview::decode
