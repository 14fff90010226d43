// cpu kernels for MLX affine quantization and Ollama int4/int8 blobs (FORMATS.md §3.2-3.4, §4.5):
// w = scale * q + bias per group, q packed as one little-endian bit stream per row (element i at
// bits [i*bits, (i+1)*bits)). Fused as y = sum_g scale_g * sum(q x) + bias_g * sum(x).
// 2/4/8 bits: SIMD, with x permuted once per matvec to match the nibble/crumb interleave;
// 3/5/6 bits: 8 codes from `bits` bytes at a time into a 32-float buffer, then a dot.
#include <algorithm>
#include <array>

#include "compute/cpu_kernels.hpp"
#include "compute/cpu_simd.hpp"

namespace akview::compute {
namespace {
using namespace simd;

using ScalarLoadFn = float (*)(const uint8_t*);
struct ScalarLoader {
  TypeId type;
  ScalarLoadFn load;
};
constexpr std::array kScalarLoaders = {
    ScalarLoader{TypeId::f16, &load_f16},
    ScalarLoader{TypeId::bf16, &load_bf16},
    ScalarLoader{TypeId::f32, &load_f32},
};
ScalarLoadFn scalar_loader(TypeId t) {
  for (const auto& l : kScalarLoaders)
    if (l.type == t) return l.load;
  return nullptr;
}

bool accepts_affine(const TensorView& v) {
  const bool bits_ok = v.bits == 2 || v.bits == 3 || v.bits == 4 || v.bits == 5 || v.bits == 6 || v.bits == 8;
  return bits_ok && v.group_size >= 32 && v.group_size % 32 == 0 && v.n_cols % v.group_size == 0 &&
         scalar_loader(v.scales_type) && !v.biases.empty() && scalar_loader(v.biases_type) && v.global_scale.empty();
}

// Vector lanes the SIMD path uses per bit width (4-bit: 16 with AVX-512, so a chunk is 32 codes;
// 2-bit stays at 8 lanes, so a chunk of 32 codes never straddles a 32-element group).
constexpr int lanes_for(int bits) { return (AKVIEW_CPU_AVX512 && bits == 4) ? 16 : 8; }

// 2- and 4-bit codes are read `lanes` bytes at a time: lane i holds byte i, and code s of byte i
// is element i*per_byte + s. xperm puts x in that order: xperm[c + lanes*s + i] = x[c + i*per_byte + s].
void prepare_affine(const TensorView& v, const float* x, std::vector<float>& xperm) {
  if (v.bits != 2 && v.bits != 4) {
    xperm.clear();
    return;
  }
  const int per_byte = 8 / v.bits, lanes = lanes_for(v.bits), chunk = lanes * per_byte;
  xperm.resize(static_cast<size_t>(v.n_cols));
  for (int64_t c = 0; c + chunk <= v.n_cols; c += chunk)
    for (int s = 0; s < per_byte; ++s)
      for (int i = 0; i < lanes; ++i) xperm[c + lanes * s + i] = x[c + i * per_byte + s];
}

// Decodes 32 codes of kBits (3, 5, 6, or any) starting at element e0 (a multiple of 8): 8 codes
// are exactly kBits bytes, read as one little-endian word: with one 8-byte load where the row has
// 8 bytes left (a byte-wise copy through the stack stalls the wide reload), byte by byte at its end.
template <int kBits>
void decode_codes32(const uint8_t* __restrict row, uint64_t row_bytes, int64_t e0, float* __restrict out) {
  constexpr uint64_t kMask = (uint64_t{1} << (8 * kBits)) - 1;
  for (int k = 0; k < 32; k += 8) {
    const uint64_t at = static_cast<uint64_t>(e0 + k) * kBits / 8;
    uint64_t word = 0;
    if (at + 8 <= row_bytes) {
      std::memcpy(&word, row + at, 8);
      word &= kMask;
    } else {
      for (int i = 0; i < kBits; ++i) word |= static_cast<uint64_t>(row[at + i]) << (8 * i);
    }
    for (int i = 0; i < 8; ++i) out[k + i] = static_cast<float>((word >> (i * kBits)) & ((1u << kBits) - 1));
  }
}

constexpr bool kSimdBits(int bits) { return AKVIEW_CPU_AVX2 && (bits == 8 || bits == 4 || bits == 2); }

// sum over one group of q * x: a vector of partial sums on the SIMD path, a float otherwise.
template <int kBits>
auto group_dot(const uint8_t* row, uint64_t row_bytes, int64_t e0, int64_t g, const float* x, const float* xperm) {
#if AKVIEW_CPU_AVX512
  if constexpr (kBits == 8 || kBits == 4) {
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    const uint8_t* p = row + e0 * kBits / 8;
    if constexpr (kBits == 8) {
      for (int64_t e = 0; e < g; e += 32) {
        acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(u8x16_to_i32(p + e)), _mm512_loadu_ps(x + e0 + e), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(u8x16_to_i32(p + e + 16)), _mm512_loadu_ps(x + e0 + e + 16), acc1);
      }
    } else {
      const __m512i mask = _mm512_set1_epi32(0x0F);
      for (int64_t e = 0; e < g; e += 32) {
        const __m512i w = u8x16_to_i32(p + e / 2);
        acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(w, mask)), _mm512_loadu_ps(xperm + e0 + e), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(w, 4)), _mm512_loadu_ps(xperm + e0 + e + 16), acc1);
      }
    }
    return _mm512_add_ps(acc0, acc1);
  } else
#endif
#if AKVIEW_CPU_AVX2
  if constexpr (kSimdBits(kBits)) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    const uint8_t* p = row + e0 * kBits / 8;
    if constexpr (kBits == 8) {
      for (int64_t e = 0; e < g; e += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(u8x8_to_i32(p + e)), _mm256_loadu_ps(x + e0 + e), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(u8x8_to_i32(p + e + 8)), _mm256_loadu_ps(x + e0 + e + 8), acc1);
      }
    } else if constexpr (kBits == 4) {
      const __m256i mask = _mm256_set1_epi32(0x0F);
      for (int64_t e = 0; e < g; e += 16) {
        const __m256i w = u8x8_to_i32(p + e / 2);
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(w, mask)), _mm256_loadu_ps(xperm + e0 + e), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(w, 4)), _mm256_loadu_ps(xperm + e0 + e + 8), acc1);
      }
    } else {
      const __m256i mask = _mm256_set1_epi32(3);
      for (int64_t e = 0; e < g; e += 32) {
        const __m256i w = u8x8_to_i32(p + e / 4);
        const float* xp = xperm + e0 + e;
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(w, mask)), _mm256_loadu_ps(xp), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(w, 2), mask)), _mm256_loadu_ps(xp + 8), acc1);
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(w, 4), mask)), _mm256_loadu_ps(xp + 16), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(w, 6)), _mm256_loadu_ps(xp + 24), acc1);
      }
    }
    return _mm256_add_ps(acc0, acc1);
  }
#endif
  if constexpr (!kSimdBits(kBits)) {
    // Whole group first, then the dot (see cpu_block_kernel.hpp on store forwarding).
    alignas(64) float buf[256];
    float acc = 0;
    for (int64_t e = 0; e < g; e += 256) {
      const int64_t n = std::min<int64_t>(256, g - e);
      for (int64_t k = 0; k < n; k += 32) decode_codes32<kBits>(row, row_bytes, e0 + e + k, buf + k);
      acc += dot_f32(buf, x + e0 + e, n);
    }
    return acc;
  }
}

// acc + s * dot, and the final sum, for each accumulator kind group_dot returns.
inline float scale_add(float dot, float s, float acc) { return acc + s * dot; }
inline float reduce(float acc) { return acc; }
#if AKVIEW_CPU_AVX2
inline __m256 scale_add(__m256 dot, float s, __m256 acc) { return _mm256_fmadd_ps(dot, _mm256_set1_ps(s), acc); }
inline float reduce(__m256 acc) { return hsum(acc); }
#endif
#if AKVIEW_CPU_AVX512
inline __m512 scale_add(__m512 dot, float s, __m512 acc) { return _mm512_fmadd_ps(dot, _mm512_set1_ps(s), acc); }
inline float reduce(__m512 acc) { return hsum512(acc); }
#endif

template <int kBits>
void affine_rows_bits(const CpuArgs& a, int64_t r0, int64_t r1, float* y) {
  const TensorView& v = *a.view;
  const int64_t g = v.group_size, groups = v.n_cols / g;
  const ScalarLoadFn load_scale = scalar_loader(v.scales_type), load_bias = scalar_loader(v.biases_type);
  const uint64_t sbytes = type_info(v.scales_type).block_bytes, bbytes = type_info(v.biases_type).block_bytes;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
    const uint64_t gi0 = static_cast<uint64_t>(r) * static_cast<uint64_t>(groups);
    float bias_acc = 0;
    using Dot = decltype(group_dot<kBits>(row, v.row_bytes, 0, g, a.x, a.xperm));
    Dot vacc{};   // float, __m256 or __m512: zero
    for (int64_t gi = 0; gi < groups; ++gi) {
      const float s = load_scale(v.scales.data() + (gi0 + gi) * sbytes);
      const float b = load_bias(v.biases.data() + (gi0 + gi) * bbytes);
      float xs = 0;
      for (int64_t k = gi * g / 16; k < (gi + 1) * g / 16; ++k) xs += a.xsum16[k];
      bias_acc += b * xs;
      vacc = scale_add(group_dot<kBits>(row, v.row_bytes, gi * g, g, a.x, a.xperm), s, vacc);
    }
    y[r] = reduce(vacc) + bias_acc;
  }
}

struct BitsRow {
  int bits;
  CpuRowsFn rows;
};
constexpr std::array kByBits = {
    BitsRow{2, &affine_rows_bits<2>}, BitsRow{3, &affine_rows_bits<3>}, BitsRow{4, &affine_rows_bits<4>},
    BitsRow{5, &affine_rows_bits<5>}, BitsRow{6, &affine_rows_bits<6>}, BitsRow{8, &affine_rows_bits<8>},
};

void affine_rows(const CpuArgs& a, int64_t r0, int64_t r1, float* y) {
  for (const auto& row : kByBits)
    if (row.bits == a.view->bits) return row.rows(a, r0, r1, y);
}

constexpr const char* kVariant = AKVIEW_CPU_AVX512 ? "avx512 (4/8), avx2 (2)" : AKVIEW_CPU_AVX2 ? "avx2 (2/4/8 bit)" : "block";
constexpr std::array kRows = {
    CpuKernelRow{TypeId::mlx_affine, &affine_rows, &accepts_affine, &prepare_affine, kVariant},
    CpuKernelRow{TypeId::ollama_int4, &affine_rows, &accepts_affine, &prepare_affine, kVariant},
    CpuKernelRow{TypeId::ollama_int8, &affine_rows, &accepts_affine, &prepare_affine, kVariant},
};

}  // namespace

std::span<const CpuKernelRow> cpu_kernels_affine() { return kRows; }

}  // namespace akview::compute
