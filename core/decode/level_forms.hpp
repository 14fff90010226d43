// Internal to core/decode: the quant types whose 32-value sub-blocks take at most 16 values (Q4_0,
// Q4_1, IQ4_NL, IQ4_XS, Q4_K). A form gives, per block, each sub-block's 16 levels — the float the
// decoder gives for code 0..15, by the decoder's own float operations in its order (core/decode is
// built with -ffp-contract=off) — and each value's code in value order, so that a sub-block's 32
// values are levels[code[i]]. Whole-tensor passes (value statistics) count codes per level and work
// on 16 levels instead of 32 values; tests/decode/stats_fast_test.cpp holds them to the decoders.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/decode/float_formats.hpp"
#include "core/decode/iq_grids.hpp"
#include "core/decode/kquant_scales.hpp"
#include "core/types.hpp"

namespace akview::decode::levels {

using fp::f16_to_f32;
using fp::load_u16;
using iq::kIq4nlValues;

inline constexpr int kLevels = 16;
inline constexpr int kSubElems = 32;

// The 16 nibbles of 16 bytes as 32 codes: low nibbles first, then high (Q4_0, Q4_1, IQ4_NL, IQ4_XS).
inline void split_nibbles16(const uint8_t* q, uint8_t* codes) {
  for (int j = 0; j < 16; ++j) {
    codes[j] = q[j] & 0xF;
    codes[j + 16] = q[j] >> 4;
  }
}

// Q4_0: y = (q - 8) * d
struct Q40 {
  static constexpr TypeId kType = TypeId::q4_0;
  static constexpr int kSubs = 1;
  static void levels(const uint8_t* b, float* lv) {
    const float d = f16_to_f32(load_u16(b));
    for (int q = 0; q < kLevels; ++q) lv[q] = static_cast<float>(q - 8) * d;
  }
  static void codes(const uint8_t* b, uint8_t* c) { split_nibbles16(b + 2, c); }
};

// Q4_1: y = q * d + m
struct Q41 {
  static constexpr TypeId kType = TypeId::q4_1;
  static constexpr int kSubs = 1;
  static void levels(const uint8_t* b, float* lv) {
    const float d = f16_to_f32(load_u16(b)), m = f16_to_f32(load_u16(b + 2));
    for (int q = 0; q < kLevels; ++q) lv[q] = static_cast<float>(q) * d + m;
  }
  static void codes(const uint8_t* b, uint8_t* c) { split_nibbles16(b + 4, c); }
};

// IQ4_NL: y = d * kvalues[q]
struct Iq4Nl {
  static constexpr TypeId kType = TypeId::iq4_nl;
  static constexpr int kSubs = 1;
  static void levels(const uint8_t* b, float* lv) {
    const float d = f16_to_f32(load_u16(b));
    for (int q = 0; q < kLevels; ++q) lv[q] = d * static_cast<float>(kIq4nlValues[q]);
  }
  static void codes(const uint8_t* b, uint8_t* c) { split_nibbles16(b + 2, c); }
};

// IQ4_XS: y = (d * (ls - 32)) * kvalues[q], ls the sub-block's 6-bit scale
struct Iq4Xs {
  static constexpr TypeId kType = TypeId::iq4_xs;
  static constexpr int kSubs = 8;
  static void levels(const uint8_t* b, float* lv) {
    const float d = f16_to_f32(load_u16(b));
    const uint16_t scales_h = load_u16(b + 2);
    for (int ib = 0; ib < kSubs; ++ib) {
      const int ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4);
      const float dl = d * static_cast<float>(ls - 32);
      for (int q = 0; q < kLevels; ++q) lv[kLevels * ib + q] = dl * static_cast<float>(kIq4nlValues[q]);
    }
  }
  static void codes(const uint8_t* b, uint8_t* c) {
    for (int ib = 0; ib < kSubs; ++ib) split_nibbles16(b + 8 + 16 * ib, c + kSubElems * ib);
  }
};

// Q4_K: sub-block j of the 64-value chunk c: y = (d * sc) * q - (dmin * m); its codes are the low
// (j even) or high (j odd) nibbles of qs[32c .. 32c + 31]
struct Q4K {
  static constexpr TypeId kType = TypeId::q4_k;
  static constexpr int kSubs = 8;
  static void levels(const uint8_t* b, float* lv) {
    const float d = f16_to_f32(load_u16(b)), dmin = f16_to_f32(load_u16(b + 2));
    for (int j = 0; j < kSubs; ++j) {
      uint8_t sc, mn;
      kquant_scale_min(j, b + 4, &sc, &mn);
      const float dj = d * static_cast<float>(sc), mj = dmin * static_cast<float>(mn);
      for (int q = 0; q < kLevels; ++q) lv[kLevels * j + q] = dj * static_cast<float>(q) - mj;
    }
  }
  static void codes(const uint8_t* b, uint8_t* c) {
    const uint8_t* q = b + 16;
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) {
        c[64 * k + l] = q[32 * k + l] & 0xF;
        c[64 * k + 32 + l] = q[32 * k + l] >> 4;
      }
  }
};

}   // namespace akview::decode::levels
