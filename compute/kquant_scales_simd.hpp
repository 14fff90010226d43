// The K-quants' packed 6-bit scales unpacked with SSE byte ops, shared by the cpu kernels and the
// x-quant kernels (the scalar forms: core/decode/kquant_scales.hpp). Read in registers: built in
// memory and reloaded as a vector, they stall on store forwarding.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>

namespace akview::compute::kq {

// q4_K / q5_K: 12 bytes -> 8 scales (bytes 0..7) and 8 mins (bytes 8..15). Reads 16 bytes at q
// (the blocks hold them: the codes follow).
inline __m128i k4_scales_mins(const uint8_t* q) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  const __m128i A = _mm_shuffle_epi8(b, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
  const __m128i B = _mm_shuffle_epi8(b, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
  const __m128i lo = _mm_and_si128(A, _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0));
  const __m128i hi =
      _mm_and_si128(_mm_srli_epi16(A, 4), _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15));
  return _mm_or_si128(_mm_or_si128(lo, hi), _mm_and_si128(_mm_srli_epi16(B, 2), _mm_set1_epi8(0x30)));
}

// q3_K: 12 bytes -> 16 signed scales (less their offset 32): low 4 bits from byte k (k < 8) or the
// high nibble of byte k - 8, high 2 bits from byte 8 + k%4 shifted by 2*(k/4), by one byte shuffle
// and dword blends. Reads exactly the 12 bytes.
inline __m128i q3k_scales(const uint8_t* sc) {
  uint32_t w2;
  std::memcpy(&w2, sc + 8, 4);
  const __m128i b = _mm_insert_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc)), static_cast<int>(w2), 2);
  const __m128i low = _mm_and_si128(_mm_unpacklo_epi64(b, _mm_srli_epi16(b, 4)), _mm_set1_epi8(0x0F));
  const __m128i h = _mm_shuffle_epi8(b, _mm_setr_epi8(8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11));
  __m128i hs = _mm_blend_epi32(h, _mm_srli_epi16(h, 2), 0x2);
  hs = _mm_blend_epi32(hs, _mm_srli_epi16(h, 4), 0x4);
  hs = _mm_blend_epi32(hs, _mm_srli_epi16(h, 6), 0x8);
  return _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(_mm_and_si128(hs, _mm_set1_epi8(3)), 4)), _mm_set1_epi8(32));
}

}   // namespace akview::compute::kq
#endif
