// cpu kernels for ggml's ternary blocks (FORMATS.md §2.7), values (t - 1) * d with t in {0, 1, 2}:
//   tq1_0 [qs 48][qh 4][d f16]: 5 trits per qs byte, 4 per qh byte; trit n of byte x is
//     ((uint8)(x * 3^n) * 3) >> 8; elements: qs[0..31] x 5 trits (n-major), qs[32..47] x 5, qh x 4
//   tq2_0 [qs 64][d f16]: 2-bit codes, element 128h + 32l + m = (qs[32h + m] >> 2l) & 3
// Both through the unpacked kernel (cpu_unpacked_rows.hpp), with AVX-512 too: a block's 256 codes
// t - 1 as signed bytes, one scale d. tq1_0's trits come 16 at a time from word multiplies: the
// low byte of x * 3^n, then its high byte times 3 by one vpmulhuw.
#include <array>

#include "compute/cpu_row_groups.hpp"
#include "compute/cpu_unpacked_rows.hpp"

namespace akview::compute {
namespace {

#if AKVIEW_CPU_AVX2
using namespace unpack;

// Trits minus 1 of 16 bytes (as words in w, zero-extended) for the powers of 3 in pow3 (words).
inline __m256i trits16(__m256i w, __m256i pow3) {
  const __m256i low = _mm256_and_si256(_mm256_mullo_epi16(w, pow3), _mm256_set1_epi16(0xFF));
  return _mm256_sub_epi16(_mm256_mulhi_epu16(low, _mm256_set1_epi16(3 << 8)), _mm256_set1_epi16(1));
}
// Words (16 per vector, in element order) -> bytes, stored at q.
inline void store_words(int8_t* q, __m256i w) {
  const __m256i b = _mm256_packs_epi16(w, w);   // lane-wise: bytes 0..7 = words 0..7, 16..23 = words 8..15
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm256_castsi256_si128(_mm256_permute4x64_epi64(b, 0x08)));
}

struct Tq1 {
  static constexpr int kElems = 256, kBytes = 54;
  static constexpr bool kBias = false;
  static __m256 unpack(const uint8_t* p, const float*, int8_t* q, float* s) {
    constexpr std::array<int16_t, 5> kPow3 = {1, 3, 9, 27, 81};
    const __m256i a0 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));        // qs 0..15
    const __m256i a1 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)));   // qs 16..31
    const __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 32)));    // qs 32..47
    for (int n = 0; n < 5; ++n) {
      const __m256i pw = _mm256_set1_epi16(kPow3[n]);
      store_words(q + 32 * n, trits16(a0, pw));
      store_words(q + 32 * n + 16, trits16(a1, pw));
      store_words(q + 160 + 16 * n, trits16(b, pw));
    }
    // qh: element 240 + 4n + j is trit n of qh[j]
    const __m256i h = _mm256_cvtepu8_epi16(_mm_set1_epi32(static_cast<int>(simd::load_u32(p + 48))));
    store_words(q + 240, trits16(h, _mm256_setr_epi16(1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27)));
    const float d = simd::load_f16(p + 52);
    for (int j = 0; j < 16; ++j) s[j] = d;
    return _mm256_setzero_ps();
  }
};

struct Tq2 {
  static constexpr int kElems = 256, kBytes = 66;
  static constexpr bool kBias = false;
  static __m256 unpack(const uint8_t* p, const float*, int8_t* q, float* s) {
    const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
    for (int h = 0; h < 2; ++h) {
      const __m256i v = load256(p + 32 * h);
      for (int l = 0; l < 4; ++l)
        store256(q + 128 * h + 32 * l, _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(v, 2 * l), m3), one));
    }
    const float d = simd::load_f16(p + 64);
    for (int j = 0; j < 16; ++j) s[j] = d;
    return _mm256_setzero_ps();
  }
};

constexpr int kR = 4;
constexpr std::array kRows = {
    CpuKernelRow{TypeId::tq1_0, &rows_by<kR, &unpacked_n<Tq1, kR>, &unpacked_n<Tq1, 1>>, nullptr, nullptr,
                 "avx2 x4 rows"},
    CpuKernelRow{TypeId::tq2_0, &rows_by<kR, &unpacked_n<Tq2, kR>, &unpacked_n<Tq2, 1>>, nullptr, nullptr,
                 "avx2 x4 rows"},
};
#else
constexpr std::array<CpuKernelRow, 0> kRows = {};
#endif

}   // namespace

std::span<const CpuKernelRow> cpu_kernels_ternary() { return kRows; }

}   // namespace akview::compute
