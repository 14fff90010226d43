// cpu kernels for FP4 codes with an E8M0 scale per 32 elements (FORMATS.md §2.7, §3.2):
//   GGUF mxfp4 blocks [e u8][qs 16]: element j = low nibble of qs[j], j+16 = its high nibble;
//     w = kvalue(q) * 2^(e-128) (ggml's doubled E2M1 values and halved scale)
//   MLX / Ollama mxfp4: codes packed per row, element 2k = low nibble of byte k, 2k+1 = its high
//     nibble; one u8 E8M0 scale per group of 32 in the scales tensor; w = E2M1(q) * 2^(s-127)
// The 16 code values are looked up by vpermps (iq4_block32) and each block's sum is multiplied by
// its scale, a power of two: the products are the decoder's. MLX's pair order is undone by
// permuting x once per matvec (even elements of each 32, then odd ones).
#include <array>

#include "compute/cpu_row_groups.hpp"
#include "compute/cpu_unpacked_rows.hpp"
#include "core/decode/composite.hpp"
#include "core/decode/float_formats.hpp"

namespace akview::compute {
namespace {

#if AKVIEW_CPU_AVX512
// A block's scale from its E8M0 byte, as the decoders compute it (ggml halves it).
struct E8m0Table {
  std::array<float, 256> half{}, plain{};
  E8m0Table() {
    for (int e = 0; e < 256; ++e) {
      half[e] = fp::e8m0_half_to_f32(static_cast<uint8_t>(e));
      plain[e] = fp::e8m0_to_f32(static_cast<uint8_t>(e));
    }
  }
};
const E8m0Table& e8m0() {
  static const E8m0Table t;
  return t;
}

#endif

#if AKVIEW_CPU_AVX2
// Groups of 32, 4-bit codes, one u8 scale per group, no second-level scale.
bool accepts_mlx_mxfp4(const TensorView& v) {
  return v.bits == 4 && v.group_size == 32 && v.n_cols % 32 == 0 && v.scales_type == TypeId::u8 &&
         v.scales.size() >= static_cast<uint64_t>(v.n_rows) * static_cast<uint64_t>(v.n_cols / 32) &&
         v.biases.empty() && v.global_scale.empty();
}
// xperm[32g + k] = x[32g + 2k] and xperm[32g + 16 + k] = x[32g + 2k + 1]: lo nibbles first, as iq4_block32 reads them.
void prepare_mlx_mxfp4(const TensorView& v, const float* x, std::vector<float>& xperm) {
  xperm.resize(static_cast<size_t>(v.n_cols));
  for (int64_t c = 0; c + 32 <= v.n_cols; c += 32)
    for (int k = 0; k < 16; ++k) {
      xperm[c + k] = x[c + 2 * k];
      xperm[c + 16 + k] = x[c + 2 * k + 1];
    }
}

#endif

#if AKVIEW_CPU_AVX2 && !AKVIEW_CPU_AVX512
// GGUF mxfp4 on AVX2 (the unpacked kernel, cpu_unpacked_rows.hpp): ggml's doubled E2M1 values are
// whole numbers, so the codes become signed bytes by one vpshufb; the scale is the block's.
struct Mxfp4 {
  static constexpr int kElems = 32, kBytes = 17;
  static constexpr bool kBias = false;
  static __m256 unpack(const uint8_t* p, const float*, int8_t* q, float* s) {
    const __m256i values = _mm256_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12, 0, 1, 2, 3, 4, 6,
                                            8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
    unpack::store256(q, _mm256_shuffle_epi8(values, unpack::nibbles32(p + 1)));
    s[0] = s[1] = fp::e8m0_half_to_f32(p[0]);
    return _mm256_setzero_ps();
  }
};
// MLX / Ollama mxfp4: the same values (the plain E2M1 ones doubled), the group's E8M0 byte from the
// scales beside, halved; x in even / odd order (prepare_mlx_mxfp4) to match nibbles32.
struct MlxMxfp4 {
  static constexpr int kElems = 32, kBytes = 16;
  static constexpr bool kBias = false;
  static const uint8_t* side(const TensorView& v, int64_t row) {
    return v.scales.data() + static_cast<uint64_t>(row) * static_cast<uint64_t>(v.n_cols / 32);
  }
  static void unpack(const uint8_t* p, const float*, int8_t* q, float* s, uint8_t e) {
    const __m256i values = _mm256_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12, 0, 1, 2, 3, 4, 6,
                                            8, 12, 0, -1, -2, -3, -4, -6, -8, -12);
    unpack::store256(q, _mm256_shuffle_epi8(values, unpack::nibbles32(p)));
    s[0] = s[1] = fp::e8m0_to_f32(e) * 0.5f;
  }
};
constexpr int kR = 4;
constexpr std::array kRows = {
    CpuKernelRow{TypeId::mxfp4, &rows_by<kR, &unpacked_n<Mxfp4, kR>, &unpacked_n<Mxfp4, 1>>, nullptr, nullptr,
                 "avx2 x4 rows"},
    CpuKernelRow{TypeId::mlx_mxfp4, &rows_by<kR, &unpacked_n<MlxMxfp4, kR>, &unpacked_n<MlxMxfp4, 1>>,
                 &accepts_mlx_mxfp4, &prepare_mlx_mxfp4, "avx2 x4 rows"},
    CpuKernelRow{TypeId::ollama_mxfp4, &rows_by<kR, &unpacked_n<MlxMxfp4, kR>, &unpacked_n<MlxMxfp4, 1>>,
                 &accepts_mlx_mxfp4, &prepare_mlx_mxfp4, "avx2 x4 rows"},
};
#elif AKVIEW_CPU_AVX512
// ggml's doubled E2M1 values (FORMATS.md §2.7) and MLX's plain ones.
__m512 ggml_fp4_values() { return _mm512_setr_ps(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12); }
__m512 mlx_fp4_values() { return _mm512_loadu_ps(decode::composite::kFp4Lut); }

inline const uint8_t* row_ptr(const TensorView& v, int64_t r) {
  return v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
}

// R rows, a 32-element block of each at a time (x loaded once for all of them). GGUF mxfp4: the
// blocks carry their E8M0 byte; MLX / Ollama (kMlx): 16 code bytes per group, the scales beside,
// against x permuted by prepare_mlx_mxfp4.
template <bool kMlx, int R>
void mxfp4_n(const CpuArgs& a, int64_t r, float* y) {
  const TensorView& v = *a.view;
  const int64_t nb = v.n_cols / 32;
  constexpr int kBytes = kMlx ? 16 : 17;
  const __m512 table = kMlx ? mlx_fp4_values() : ggml_fp4_values();
  const float* scale = kMlx ? e8m0().plain.data() : e8m0().half.data();
  const float* x = kMlx ? a.xperm : a.x;
  __m512 s[R];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) s[i] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    AKV_UNROLL
    for (int i = 0; i < R; ++i) {
      const uint8_t* p = row_ptr(v, r + i) + b * kBytes;
      simd::prefetch_span(p + 1024, kBytes);
      const uint8_t e =
          kMlx ? v.scales[static_cast<uint64_t>(r + i) * static_cast<uint64_t>(nb) + static_cast<uint64_t>(b)] : p[0];
      s[i] = iq4_block32(kMlx ? p : p + 1, x + b * 32, scale[e], table, s[i]);
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i) y[r + i] = simd::hsum512(s[i]);
}

constexpr int kR = 4;
constexpr std::array kRows = {
    CpuKernelRow{TypeId::mxfp4, &rows_by<kR, &mxfp4_n<false, kR>, &mxfp4_n<false, 1>>, nullptr, nullptr,
                 "avx512 x4 rows"},
    CpuKernelRow{TypeId::mlx_mxfp4, &rows_by<kR, &mxfp4_n<true, kR>, &mxfp4_n<true, 1>>, &accepts_mlx_mxfp4,
                 &prepare_mlx_mxfp4, "avx512 x4 rows"},
    CpuKernelRow{TypeId::ollama_mxfp4, &rows_by<kR, &mxfp4_n<true, kR>, &mxfp4_n<true, 1>>, &accepts_mlx_mxfp4,
                 &prepare_mlx_mxfp4, "avx512 x4 rows"},
};
#else
constexpr std::array<CpuKernelRow, 0> kRows = {};
#endif

}   // namespace

std::span<const CpuKernelRow> cpu_kernels_fp4() { return kRows; }

}   // namespace akview::compute
