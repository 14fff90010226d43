// cpu kernels for plain float rows: f32, f16 (F16C), bf16 (shift into the high half), and the FP8
// types as f16 bits (F16C): E5M2 is an f16's top byte; E4M3FN's 7 bits below the sign, placed at
// f16 bits 7..13, read as an f16 2^-8 of the value (subnormals included) and times 256, with the
// NaN codes (S.1111.111) made NaN.
#include <algorithm>
#include <array>
#include <limits>

#include "compute/cpu_kernels.hpp"
#include "compute/cpu_simd.hpp"
#include "core/decode/float_formats.hpp"

namespace akview::compute {
namespace {
using namespace simd;

#if AKVIEW_CPU_AVX2
struct LoadF32 {
  static constexpr int kBytes = 4;
  static __m256 load8(const uint8_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
  static float load1(const uint8_t* p) { return load_f32(p); }
};
struct LoadF16 {
  static constexpr int kBytes = 2;
  static __m256 load8(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float load1(const uint8_t* p) { return load_f16(p); }
};
struct LoadBf16 {
  static constexpr int kBytes = 2;
  static __m256 load8(const uint8_t* p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
  static float load1(const uint8_t* p) { return load_bf16(p); }
};

struct LoadE5m2 {
  static constexpr int kBytes = 1;
  static __m256 load8(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_slli_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))), 8));
  }
  static float load1(const uint8_t* p) { return fp::e5m2_to_f32(*p); }
};
struct LoadE4m3 {
  static constexpr int kBytes = 1;
  static __m256 load8(const uint8_t* p) {
    // Sign-extended, shifted by 7: bits 7..13 the code's exponent and mantissa, 15 its sign; 14 cleared.
    const __m128i h =
        _mm_and_si128(_mm_slli_epi16(_mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))), 7),
                      _mm_set1_epi16(static_cast<short>(0xBF80)));
    const __m256 v = _mm256_mul_ps(_mm256_cvtph_ps(h), _mm256_set1_ps(256.0f));
    const __m128i nan = _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x3F80)), _mm_set1_epi16(0x3F80));
    return _mm256_blendv_ps(v, _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()),
                            _mm256_castsi256_ps(_mm256_cvtepi16_epi32(nan)));
  }
  static float load1(const uint8_t* p) { return fp::e4m3fn_to_f32(*p); }
};

template <class L>
void float_rows(const CpuArgs& a, int64_t r0, int64_t r1, float* y) {
  const TensorView& v = *a.view;
  const int64_t n = v.n_cols;
  const float* x = a.x;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 32 <= n; j += 32) {
      const uint8_t* p = row + j * L::kBytes;
      s0 = _mm256_fmadd_ps(L::load8(p), _mm256_loadu_ps(x + j), s0);
      s1 = _mm256_fmadd_ps(L::load8(p + 8 * L::kBytes), _mm256_loadu_ps(x + j + 8), s1);
      s2 = _mm256_fmadd_ps(L::load8(p + 16 * L::kBytes), _mm256_loadu_ps(x + j + 16), s2);
      s3 = _mm256_fmadd_ps(L::load8(p + 24 * L::kBytes), _mm256_loadu_ps(x + j + 24), s3);
    }
    for (; j + 8 <= n; j += 8) s0 = _mm256_fmadd_ps(L::load8(row + j * L::kBytes), _mm256_loadu_ps(x + j), s0);
    float acc = hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; j < n; ++j) acc += L::load1(row + j * L::kBytes) * x[j];
    y[r] = acc;
  }
}
#if AKVIEW_CPU_AVX512
// 16-lane loads of the same three storage types (named L##16 for AKV_FLOAT_ROWS).
struct LoadF3216 {
  static __m512 load16(const uint8_t* p) { return _mm512_loadu_ps(p); }
};
struct LoadF1616 {
  static __m512 load16(const uint8_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
};
struct LoadBf1616 {
  static __m512 load16(const uint8_t* p) {
    return _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
  }
};

struct LoadE5m216 {
  static __m512 load16(const uint8_t* p) {
    return _mm512_cvtph_ps(
        _mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 8));
  }
};
struct LoadE4m316 {
  static __m512 load16(const uint8_t* p) {
    const __m256i h = _mm256_and_si256(
        _mm256_slli_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 7),
        _mm256_set1_epi16(static_cast<short>(0xBF80)));
    const __mmask16 nan =
        _mm256_cmpeq_epi16_mask(_mm256_and_si256(h, _mm256_set1_epi16(0x3F80)), _mm256_set1_epi16(0x3F80));
    return _mm512_mask_mov_ps(_mm512_mul_ps(_mm512_cvtph_ps(h), _mm512_set1_ps(256.0f)), nan,
                              _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN()));
  }
};

// R rows at a time over 32 columns per step (each x load serves R rows), with a software prefetch
// ~1 KiB ahead in each row; the remainder columns go through float_rows' tail per row.
template <class L, class L16, int R>
void float_n(const CpuArgs& a, int64_t r, float* y) {
  const TensorView& v = *a.view;
  const int64_t n = v.n_cols & ~int64_t{31};
  const uint8_t* rows[R];
  __m512 s0[R], s1[R];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) {
    rows[i] = v.data.data() + static_cast<uint64_t>(r + i) * v.row_bytes;
    s0[i] = s1[i] = _mm512_setzero_ps();
  }
  for (int64_t j = 0; j < n; j += 32) {
    const __m512 x0 = _mm512_loadu_ps(a.x + j), x1 = _mm512_loadu_ps(a.x + j + 16);
    AKV_UNROLL
    for (int i = 0; i < R; ++i) {
      const uint8_t* p = rows[i] + j * L::kBytes;
      prefetch_span(p + 1024, 32 * L::kBytes);
      s0[i] = _mm512_fmadd_ps(L16::load16(p), x0, s0[i]);
      s1[i] = _mm512_fmadd_ps(L16::load16(p + 16 * L::kBytes), x1, s1[i]);
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i) {
    float acc = hsum512(_mm512_add_ps(s0[i], s1[i]));
    for (int64_t j = n; j < v.n_cols; ++j) acc += L::load1(rows[i] + j * L::kBytes) * a.x[j];
    y[r + i] = acc;
  }
}
template <class L, class L16>
void float_rows_512(const CpuArgs& a, int64_t r0, int64_t r1, float* y) {
  int64_t r = r0;
  for (; r + 2 <= r1; r += 2) float_n<L, L16, 2>(a, r, y);
  for (; r < r1; ++r) float_n<L, L16, 1>(a, r, y);
}
#define AKV_FLOAT_ROWS(L) &float_rows_512<L, L##16>
constexpr const char* kVariant = "avx512 x2 rows";
#else
#define AKV_FLOAT_ROWS(L) &float_rows<L>
constexpr const char* kVariant = "avx2";
#endif
#else
struct LoadF32 {
  static constexpr int kBytes = 4;
  static float load1(const uint8_t* p) { return load_f32(p); }
};
struct LoadF16 {
  static constexpr int kBytes = 2;
  static float load1(const uint8_t* p) { return load_f16(p); }
};
struct LoadBf16 {
  static constexpr int kBytes = 2;
  static float load1(const uint8_t* p) { return load_bf16(p); }
};
struct LoadE5m2 {
  static constexpr int kBytes = 1;
  static float load1(const uint8_t* p) { return fp::e5m2_to_f32(*p); }
};
struct LoadE4m3 {
  static constexpr int kBytes = 1;
  static float load1(const uint8_t* p) { return fp::e4m3fn_to_f32(*p); }
};

template <class L>
void float_rows(const CpuArgs& a, int64_t r0, int64_t r1, float* y) {
  const TensorView& v = *a.view;
  float buf[256];
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
    float acc = 0;
    for (int64_t j0 = 0; j0 < v.n_cols; j0 += 256) {
      const int64_t m = std::min<int64_t>(256, v.n_cols - j0);
      for (int64_t j = 0; j < m; ++j) buf[j] = L::load1(row + (j0 + j) * L::kBytes);
      acc += dot_f32(buf, a.x + j0, m);
    }
    y[r] = acc;
  }
}
#define AKV_FLOAT_ROWS(L) &float_rows<L>
constexpr const char* kVariant = "scalar";
#endif

constexpr std::array kRows = {
    CpuKernelRow{TypeId::f32, AKV_FLOAT_ROWS(LoadF32), nullptr, nullptr, kVariant},
    CpuKernelRow{TypeId::f16, AKV_FLOAT_ROWS(LoadF16), nullptr, nullptr, kVariant},
    CpuKernelRow{TypeId::bf16, AKV_FLOAT_ROWS(LoadBf16), nullptr, nullptr, kVariant},
    CpuKernelRow{TypeId::f8_e5m2, AKV_FLOAT_ROWS(LoadE5m2), nullptr, nullptr, kVariant},
    CpuKernelRow{TypeId::f8_e4m3, AKV_FLOAT_ROWS(LoadE4m3), nullptr, nullptr, kVariant},
};

}   // namespace

std::span<const CpuKernelRow> cpu_kernels_float() { return kRows; }

}   // namespace akview::compute
