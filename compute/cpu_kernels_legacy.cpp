// cpu kernels for ggml's 32-element blocks (FORMATS.md §2.7): q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl.
//   q4_0  [d f16][qs 16]            q4_1 [d f16][m f16][qs 16]
//   q5_0  [d f16][qh 4][qs 16]      q5_1 [d f16][m f16][qh 4][qs 16]
//   q8_0  [d f16][qs i8 x32]        iq4_nl [d f16][qs 16] -> kvalues_iq4nl
// Nibble order: element j = low nibble of qs[j], element j+16 = high nibble.
#include <array>

#include "compute/cpu_block_kernel.hpp"

namespace akview::compute {
namespace {
using namespace simd;

[[maybe_unused]] void decode_q4_0(const uint8_t* __restrict b, float* __restrict out) {
  const float d = load_f16(b);
  for (int j = 0; j < 16; ++j) {
    out[j] = static_cast<float>((b[2 + j] & 0x0F) - 8) * d;
    out[j + 16] = static_cast<float>((b[2 + j] >> 4) - 8) * d;
  }
}
void decode_q4_1(const uint8_t* __restrict b, float* __restrict out) {
  const float d = load_f16(b), m = load_f16(b + 2);
  for (int j = 0; j < 16; ++j) {
    out[j] = static_cast<float>(b[4 + j] & 0x0F) * d + m;
    out[j + 16] = static_cast<float>(b[4 + j] >> 4) * d + m;
  }
}
void decode_q5_0(const uint8_t* __restrict b, float* __restrict out) {
  const float d = load_f16(b);
  const uint32_t qh = load_u32(b + 2);
  for (int j = 0; j < 16; ++j) {
    const int x0 = ((b[6 + j] & 0x0F) | (((qh >> j) << 4) & 0x10)) - 16;
    const int x1 = ((b[6 + j] >> 4) | ((qh >> (j + 12)) & 0x10)) - 16;
    out[j] = static_cast<float>(x0) * d;
    out[j + 16] = static_cast<float>(x1) * d;
  }
}
void decode_q5_1(const uint8_t* __restrict b, float* __restrict out) {
  const float d = load_f16(b), m = load_f16(b + 2);
  const uint32_t qh = load_u32(b + 4);
  for (int j = 0; j < 16; ++j) {
    const int x0 = (b[8 + j] & 0x0F) | (((qh >> j) << 4) & 0x10);
    const int x1 = (b[8 + j] >> 4) | ((qh >> (j + 12)) & 0x10);
    out[j] = static_cast<float>(x0) * d + m;
    out[j + 16] = static_cast<float>(x1) * d + m;
  }
}
[[maybe_unused]] void decode_q8_0(const uint8_t* __restrict b, float* __restrict out) {
  const float d = load_f16(b);
  for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
}

void decode_iq4_nl(const uint8_t* __restrict b, float* __restrict out) {
  const float d = load_f16(b);
#if AKVIEW_CPU_AVX2
  iq4_lookup32(b + 2, d, out);   // out is 32-float aligned: block_rows' buffer
  return;
#endif
  for (int j = 0; j < 16; ++j) {
    out[j] = d * kIq4nl[b[2 + j] & 0x0F];
    out[j + 16] = d * kIq4nl[b[2 + j] >> 4];
  }
}

#if AKVIEW_CPU_AVX2
// q8_0: two blocks per step so the two running sums hide the FMA latency.
[[maybe_unused]] void q8_0_rows(const CpuArgs& a, int64_t r0, int64_t r1, float* y) {
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 32;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    auto block = [&](int64_t b, __m256& s) {
      const uint8_t* p = row + b * 34;
      const float* xb = a.x + b * 32;
      __m256 t0 = _mm256_mul_ps(_mm256_cvtepi32_ps(i8x8_to_i32(p + 2)), _mm256_loadu_ps(xb));
      __m256 t1 = _mm256_mul_ps(_mm256_cvtepi32_ps(i8x8_to_i32(p + 10)), _mm256_loadu_ps(xb + 8));
      t0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i8x8_to_i32(p + 18)), _mm256_loadu_ps(xb + 16), t0);
      t1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i8x8_to_i32(p + 26)), _mm256_loadu_ps(xb + 24), t1);
      s = _mm256_fmadd_ps(_mm256_add_ps(t0, t1), _mm256_set1_ps(load_f16(p)), s);
    };
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
      block(b, s0);
      block(b + 1, s1);
    }
    if (b < nb) block(b, s0);
    y[r] = hsum(_mm256_add_ps(s0, s1));
  }
}

// q4_0: widen 8 bytes of nibbles to int32 lanes; low nibbles are elements 0..15, high 16..31.
void q4_0_rows(const CpuArgs& a, int64_t r0, int64_t r1, float* y) {
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 32;
  const __m256i mask = _mm256_set1_epi32(0x0F), eight = _mm256_set1_epi32(8);
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    auto block = [&](int64_t b, __m256& s) {
      const uint8_t* p = row + b * 18;
      const float* xb = a.x + b * 32;
      const __m256i v0 = u8x8_to_i32(p + 2), v1 = u8x8_to_i32(p + 10);
      __m256 t0 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_and_si256(v0, mask), eight)), _mm256_loadu_ps(xb));
      __m256 t1 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_and_si256(v1, mask), eight)), _mm256_loadu_ps(xb + 8));
      t0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(v0, 4), eight)), _mm256_loadu_ps(xb + 16), t0);
      t1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(v1, 4), eight)), _mm256_loadu_ps(xb + 24), t1);
      s = _mm256_fmadd_ps(_mm256_add_ps(t0, t1), _mm256_set1_ps(load_f16(p)), s);
    };
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
      block(b, s0);
      block(b + 1, s1);
    }
    if (b < nb) block(b, s0);
    y[r] = hsum(_mm256_add_ps(s0, s1));
  }
}
#if AKVIEW_CPU_AVX512
// q8_0 on 16 lanes: one block is two vectors.
void q8_0_rows_512(const CpuArgs& a, int64_t r0, int64_t r1, float* y) {
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 32;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    auto block = [&](int64_t b, __m512& s) {
      const uint8_t* p = row + b * 34;
      const float* xb = a.x + b * 32;
      __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(i8x16_to_i32(p + 2)), _mm512_loadu_ps(xb));
      t = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i8x16_to_i32(p + 18)), _mm512_loadu_ps(xb + 16), t);
      s = _mm512_fmadd_ps(t, _mm512_set1_ps(load_f16(p)), s);
    };
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
      block(b, s0);
      block(b + 1, s1);
    }
    if (b < nb) block(b, s0);
    y[r] = hsum512(_mm512_add_ps(s0, s1));
  }
}
constexpr auto q8_0_best = &q8_0_rows_512;
constexpr const char* kQ8Variant = "avx512";
#else
constexpr auto q8_0_best = &q8_0_rows;
constexpr const char* kQ8Variant = "avx2";
#endif
constexpr const char* kFast = "avx2";
#else
constexpr auto q8_0_rows = &block_rows<32, 34, &decode_q8_0>;
constexpr auto q4_0_rows = &block_rows<32, 18, &decode_q4_0>;
constexpr const char* kFast = "block";
constexpr auto q8_0_best = q8_0_rows;
constexpr const char* kQ8Variant = "block";
#endif

constexpr std::array kRows = {
    CpuKernelRow{TypeId::q4_0, q4_0_rows, nullptr, nullptr, kFast},
    CpuKernelRow{TypeId::q4_1, &block_rows<32, 20, &decode_q4_1>, nullptr, nullptr, "block"},
    CpuKernelRow{TypeId::q5_0, &block_rows<32, 22, &decode_q5_0>, nullptr, nullptr, "block"},
    CpuKernelRow{TypeId::q5_1, &block_rows<32, 24, &decode_q5_1>, nullptr, nullptr, "block"},
    CpuKernelRow{TypeId::q8_0, q8_0_best, nullptr, nullptr, kQ8Variant},
    CpuKernelRow{TypeId::iq4_nl, &block_rows<32, 18, &decode_iq4_nl>, nullptr, nullptr, "block"},
};

}  // namespace

std::span<const CpuKernelRow> cpu_kernels_legacy() { return kRows; }

}  // namespace akview::compute
