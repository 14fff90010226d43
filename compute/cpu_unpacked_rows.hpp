// The AVX2 kernels of ggml's block types (machines without AVX-512): a format unpacks one block of
// a row into signed 8-bit codes and one float scale per 16 elements, and returns the block's bias
// term; one dot loop turns the codes into floats 8 at a time (vpmovsxbd + vcvtdq2ps) against x.
// Types with a min are centred (cpu_centre.hpp): the codes are q - k, the bias the sum over the
// block's groups of (s*k + b) * sum(x). R rows are unpacked per block and share its x loads.
#pragma once

#include <algorithm>
#include <cstdint>

#include "compute/cpu_kernels.hpp"
#include "compute/cpu_simd.hpp"

namespace akview::compute {

#if AKVIEW_CPU_AVX2
// A format F has kElems (elements per block, a multiple of 32), kBytes (bytes per block), kBias
// (whether blocks have a bias term) and
//   static __m256 unpack(const uint8_t* block, const float* xsum16, int8_t* q, float* s);
// which writes the kElems codes to q and kElems / 16 scales to s, given the block's x sums over
// each 16-element run, and returns the block's bias term spread over 8 lanes (ignored without kBias).
// Formats whose block scales sit beside the codes (MLX / Ollama groups) also have
//   static const uint8_t* side(const TensorView& v, int64_t row);
// and their unpack takes the block's byte of that row array as a fifth argument.
template <class F>
concept WithSide = requires(const TensorView& v) {
  F::side(v, int64_t{0});
};

template <class F, int R>
void unpacked_n(const CpuArgs& a, int64_t r, float* y) {
  // Blocks are unpacked kStep at a time (256 elements) before their dot loop: a 32-element block's
  // codes read back right after their store waited on the store.
  constexpr int kStep = F::kElems >= 256 ? 1 : 256 / F::kElems, kRuns = F::kElems / 16;
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / F::kElems;
  alignas(32) int8_t q[R][kStep * F::kElems];
  alignas(32) float s[R][kStep * kRuns];
  const uint8_t* rows[R];
  const uint8_t* sides[R] = {};
  __m256 acc0[R], acc1[R];
  __m256 bias[R];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) {
    rows[i] = v.data.data() + static_cast<uint64_t>(r + i) * v.row_bytes;
    if constexpr (WithSide<F>) sides[i] = F::side(v, r + i);
    acc0[i] = acc1[i] = bias[i] = _mm256_setzero_ps();
  }
  for (int64_t b0 = 0; b0 < nb; b0 += kStep) {
    const int n = static_cast<int>(std::min<int64_t>(kStep, nb - b0));
    AKV_UNROLL
    for (int i = 0; i < R; ++i)
      for (int k = 0; k < n; ++k) {
        const uint8_t* p = rows[i] + (b0 + k) * F::kBytes;
        simd::prefetch_span(p + 1024, F::kBytes);
        if constexpr (WithSide<F>) {
          F::unpack(p, a.xsum16 + (b0 + k) * kRuns, q[i] + k * F::kElems, s[i] + k * kRuns, sides[i][b0 + k]);
        } else {
          const __m256 bk = F::unpack(p, a.xsum16 + (b0 + k) * kRuns, q[i] + k * F::kElems, s[i] + k * kRuns);
          if constexpr (F::kBias) bias[i] = _mm256_add_ps(bias[i], bk);
        }
      }
    const float* xb = a.xperm + b0 * F::kElems;   // x, or x in a format's order (its prepare)
    for (int j = 0; j < n * kRuns; j += 2) {
      __m256 x0 = _mm256_loadu_ps(xb + 16 * j), x1 = _mm256_loadu_ps(xb + 16 * j + 8);
      __m256 x2 = _mm256_loadu_ps(xb + 16 * j + 16), x3 = _mm256_loadu_ps(xb + 16 * j + 24);
      // x in registers, shared by the R rows (folded into each row's multiply, x was loaded R times:
      // the loop is bound by loads)
      asm("" : "+x"(x0), "+x"(x1), "+x"(x2), "+x"(x3));
      AKV_UNROLL
      for (int i = 0; i < R; ++i) {
        const uint8_t* c = reinterpret_cast<const uint8_t*>(q[i] + 16 * j);
        __m256 t0 = _mm256_mul_ps(_mm256_cvtepi32_ps(simd::i8x8_to_i32(c)), x0);
        __m256 t1 = _mm256_mul_ps(_mm256_cvtepi32_ps(simd::i8x8_to_i32(c + 16)), x2);
        t0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(simd::i8x8_to_i32(c + 8)), x1, t0);
        t1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(simd::i8x8_to_i32(c + 24)), x3, t1);
        acc0[i] = _mm256_fmadd_ps(t0, _mm256_broadcast_ss(s[i] + j), acc0[i]);
        acc1[i] = _mm256_fmadd_ps(t1, _mm256_broadcast_ss(s[i] + j + 1), acc1[i]);
      }
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i)
    y[r + i] = simd::hsum(_mm256_add_ps(acc0[i], acc1[i])) + (F::kBias ? simd::hsum(bias[i]) : 0.0f);
}

// Helpers of the formats' unpack functions.
namespace unpack {
inline __m256i load256(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline void store256(int8_t* q, __m256i v) { _mm256_store_si256(reinterpret_cast<__m256i*>(q), v); }
// 16 bytes of nibbles -> 32 bytes: the low nibbles (elements 0..15), then the high nibbles (16..31).
inline __m256i nibbles32(const uint8_t* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_and_si256(_mm256_setr_m128i(v, _mm_srli_epi16(v, 4)), _mm256_set1_epi8(0x0F));
}
// 32 bits -> 32 bytes: `set` where bit j is set, 0 elsewhere.
inline __m256i bits32(uint32_t bits, __m256i set) {
  const __m256i spread =
      _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                          _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), set);
}
// 8 whole floats in [-128, 127] -> their bytes, in bytes 0..7 (and again in 8..15).
inline __m128i bytes8(__m256 k) {
  const __m256i k32 = _mm256_cvtps_epi32(k);
  const __m128i k16 = _mm_packs_epi32(_mm256_castsi256_si128(k32), _mm256_extracti128_si256(k32, 1));
  return _mm_packs_epi16(k16, k16);
}
}   // namespace unpack
#endif

}   // namespace akview::compute
