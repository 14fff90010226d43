// cpu kernels for MLX affine quantization and Ollama int4/int8 blobs (FORMATS.md §3.2-3.4, §4.5):
// w = scale * q + bias per group, q packed as one little-endian bit stream per row (element i at
// bits [i*bits, (i+1)*bits)). Fused as y = sum_g scale_g * sum((q - k_g) x) + (scale_g k_g + bias_g) * sum(x),
// k_g the code nearest the group's zero (cpu_centre.hpp), so rows whose terms cancel keep their digits.
// With AVX-512 VBMI and groups of a multiple of 64: every width over several rows, 64 codes a step
// (namespace vb). Otherwise 2/4/8 bits: SIMD, with x permuted once per matvec to match the
// nibble/crumb interleave; 3/5/6 bits: with VBMI 16 codes at a time by one vpmultishiftqb, else 8
// codes from `bits` bytes at a time into a 32-float buffer, then a dot.
#include <algorithm>
#include <array>

#include "compute/cpu_centre.hpp"
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

// n scalars of `type` (f16 / bf16 / f32) at p -> out, 16 or 8 at a time where the build has the
// vectors (a row's groups: one indirect call per scale and bias cost as much as the row's dot).
void load_scalars(TypeId type, const uint8_t* p, int64_t n, float* out) {
  int64_t k = 0;
#if AKVIEW_CPU_AVX512
  if (type == TypeId::f16) {
    for (; k + 16 <= n; k += 16)
      _mm512_storeu_ps(out + k, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2 * k))));
  } else if (type == TypeId::bf16) {
    for (; k + 16 <= n; k += 16)
      _mm512_storeu_ps(
          out + k, _mm512_castsi512_ps(_mm512_slli_epi32(
                       _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2 * k))), 16)));
  }
#elif AKVIEW_CPU_AVX2
  if (type == TypeId::f16) {
    for (; k + 8 <= n; k += 8)
      _mm256_storeu_ps(out + k, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * k))));
  } else if (type == TypeId::bf16) {
    for (; k + 8 <= n; k += 8)
      _mm256_storeu_ps(out + k,
                       _mm256_castsi256_ps(_mm256_slli_epi32(
                           _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * k))), 16)));
  }
#endif
  const ScalarLoadFn load = scalar_loader(type);
  const uint64_t bytes = type_info(type).block_bytes;
  for (; k < n; ++k) out[k] = load(p + k * bytes);
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
  const bool vbmi_2bit = AKVIEW_CPU_VBMI && v.bits == 2 && v.group_size % 64 == 0;   // reads x in order
  if ((v.bits != 2 && v.bits != 4) || vbmi_2bit) {
    xperm.clear();
    return;
  }
  const int per_byte = 8 / v.bits, lanes = lanes_for(v.bits), chunk = lanes * per_byte;
  xperm.resize(static_cast<size_t>(v.n_cols));
  for (int64_t c = 0; c + chunk <= v.n_cols; c += chunk)
    for (int s = 0; s < per_byte; ++s)
      for (int i = 0; i < lanes; ++i) xperm[c + lanes * s + i] = x[c + i * per_byte + s];
}

// Decodes 32 codes of kBits (3, 5, 6, or any) starting at element e0 (a multiple of 8), minus k: 8 codes
// are exactly kBits bytes, read as one little-endian word: with one 8-byte load where the row has
// 8 bytes left (a byte-wise copy through the stack stalls the wide reload), byte by byte at its end.
template <int kBits>
void decode_codes32(const uint8_t* __restrict row, uint64_t row_bytes, int64_t e0, int k_code, float* __restrict out) {
  constexpr uint64_t kMask = kBits >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * kBits)) - 1;
  for (int k = 0; k < 32; k += 8) {
    const uint64_t at = static_cast<uint64_t>(e0 + k) * kBits / 8;
    uint64_t word = 0;
    if (at + 8 <= row_bytes) {
      std::memcpy(&word, row + at, 8);
      word &= kMask;
    } else {
      for (int i = 0; i < kBits; ++i) word |= static_cast<uint64_t>(row[at + i]) << (8 * i);
    }
    for (int i = 0; i < 8; ++i)
      out[k + i] = static_cast<float>(static_cast<int>((word >> (i * kBits)) & ((1u << kBits) - 1)) - k_code);
  }
}

constexpr bool kSimdBits(int bits) { return AKVIEW_CPU_AVX2 && (bits == 8 || bits == 4 || bits == 2); }
constexpr bool kVbmiBits(int bits) { return AKVIEW_CPU_VBMI && (bits == 3 || bits == 5 || bits == 6); }

// sum over one group of (q - k) * x: a vector of partial sums on the SIMD path, a float otherwise.
// sum over `n` codes from element e0 (a multiple of 8) of (q - k) * x, one code at a time: the
// end of a row, where a 16-byte load would run past it.
template <int kBits>
float tail_dot(const uint8_t* row, uint64_t row_bytes, int64_t e0, int64_t n, int k, const float* x) {
  float acc = 0;
  for (int64_t c = 0; c < n; c += 8) {
    const uint64_t at = static_cast<uint64_t>(e0 + c) * kBits / 8;
    uint64_t word = 0;
    for (int i = 0; i < kBits && at + i < row_bytes; ++i) word |= static_cast<uint64_t>(row[at + i]) << (8 * i);
    for (int i = 0; i < 8 && c + i < n; ++i)
      acc += static_cast<float>(static_cast<int>((word >> (i * kBits)) & ((1u << kBits) - 1)) - k) * x[e0 + c + i];
  }
  return acc;
}

template <int kBits>
auto group_dot(const uint8_t* row, uint64_t row_bytes, int64_t e0, int64_t g, int k, const float* x,
               const float* xperm) {
#if AKVIEW_CPU_VBMI
  if constexpr (kVbmiBits(kBits)) {
    // 16 codes are 2*kBits bytes: pshufb puts the first kBits of them in qword 0 and the next kBits
    // in qword 1, vpmultishiftqb takes code j of a qword from its bit j*kBits, the mask keeps kBits
    // bits; the 16 codes become floats (vpmovzxbd, vcvtdq2ps) less k. The last 16 codes of a row
    // (a 16-byte load would pass its end) go one at a time.
    static const __m128i kSpread = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, kBits, kBits + 1, kBits + 2, kBits + 3,
                                                 kBits + 4, kBits + 5, kBits + 6, kBits + 7);
    static const __m128i kShifts =
        _mm_setr_epi8(0, kBits, 2 * kBits, 3 * kBits, 4 * kBits, 5 * kBits, 6 * kBits, 7 * kBits, 0, kBits, 2 * kBits,
                      3 * kBits, 4 * kBits, 5 * kBits, 6 * kBits, 7 * kBits);
    const __m128i mask = _mm_set1_epi8((1 << kBits) - 1);
    const __m512i kv = _mm512_set1_epi32(k);
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t e = 0;
    auto sixteen = [&](int64_t at_e) {
      const uint64_t at = static_cast<uint64_t>(e0 + at_e) * kBits / 8;
      __m128i b = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + at)), kSpread);
      b = _mm_and_si128(_mm_multishift_epi64_epi8(kShifts, b), mask);
      return _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(b), kv));
    };
    for (; e + 32 <= g && static_cast<uint64_t>(e0 + e + 16) * kBits / 8 + 16 <= row_bytes; e += 32) {
      acc0 = _mm512_fmadd_ps(sixteen(e), _mm512_loadu_ps(x + e0 + e), acc0);
      acc1 = _mm512_fmadd_ps(sixteen(e + 16), _mm512_loadu_ps(x + e0 + e + 16), acc1);
    }
    __m512 acc = _mm512_add_ps(acc0, acc1);
    if (e < g)
      acc =
          _mm512_add_ps(acc, _mm512_zextps128_ps512(_mm_set_ss(tail_dot<kBits>(row, row_bytes, e0 + e, g - e, k, x))));
    return acc;
  } else
#endif
#if AKVIEW_CPU_AVX512
      if constexpr (kBits == 8 || kBits == 4) {
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    const uint8_t* p = row + e0 * kBits / 8;
    const __m512i kv = _mm512_set1_epi32(k);
    if constexpr (kBits == 8) {
      for (int64_t e = 0; e < g; e += 32) {
        acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(u8x16_to_i32(p + e), kv)),
                               _mm512_loadu_ps(x + e0 + e), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(u8x16_to_i32(p + e + 16), kv)),
                               _mm512_loadu_ps(x + e0 + e + 16), acc1);
      }
    } else {
      const __m512i mask = _mm512_set1_epi32(0x0F);
      for (int64_t e = 0; e < g; e += 32) {
        const __m512i w = u8x16_to_i32(p + e / 2);
        acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_and_si512(w, mask), kv)),
                               _mm512_loadu_ps(xperm + e0 + e), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(w, 4), kv)),
                               _mm512_loadu_ps(xperm + e0 + e + 16), acc1);
      }
    }
    return _mm512_add_ps(acc0, acc1);
  } else
#endif
#if AKVIEW_CPU_AVX2
      if constexpr (kSimdBits(kBits)) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    const uint8_t* p = row + e0 * kBits / 8;
    const __m256i kv = _mm256_set1_epi32(k);
    auto centred = [&](__m256i q) { return _mm256_cvtepi32_ps(_mm256_sub_epi32(q, kv)); };
    if constexpr (kBits == 8) {
      for (int64_t e = 0; e < g; e += 16) {
        acc0 = _mm256_fmadd_ps(centred(u8x8_to_i32(p + e)), _mm256_loadu_ps(x + e0 + e), acc0);
        acc1 = _mm256_fmadd_ps(centred(u8x8_to_i32(p + e + 8)), _mm256_loadu_ps(x + e0 + e + 8), acc1);
      }
    } else if constexpr (kBits == 4) {
      const __m256i mask = _mm256_set1_epi32(0x0F);
      for (int64_t e = 0; e < g; e += 16) {
        const __m256i w = u8x8_to_i32(p + e / 2);
        acc0 = _mm256_fmadd_ps(centred(_mm256_and_si256(w, mask)), _mm256_loadu_ps(xperm + e0 + e), acc0);
        acc1 = _mm256_fmadd_ps(centred(_mm256_srli_epi32(w, 4)), _mm256_loadu_ps(xperm + e0 + e + 8), acc1);
      }
    } else {
      const __m256i mask = _mm256_set1_epi32(3);
      for (int64_t e = 0; e < g; e += 32) {
        const __m256i w = u8x8_to_i32(p + e / 4);
        const float* xp = xperm + e0 + e;
        acc0 = _mm256_fmadd_ps(centred(_mm256_and_si256(w, mask)), _mm256_loadu_ps(xp), acc0);
        acc1 = _mm256_fmadd_ps(centred(_mm256_and_si256(_mm256_srli_epi32(w, 2), mask)), _mm256_loadu_ps(xp + 8), acc1);
        acc0 =
            _mm256_fmadd_ps(centred(_mm256_and_si256(_mm256_srli_epi32(w, 4), mask)), _mm256_loadu_ps(xp + 16), acc0);
        acc1 = _mm256_fmadd_ps(centred(_mm256_srli_epi32(w, 6)), _mm256_loadu_ps(xp + 24), acc1);
      }
    }
    return _mm256_add_ps(acc0, acc1);
  }
#endif
  if constexpr (!kSimdBits(kBits) && !kVbmiBits(kBits)) {
    // Whole group first, then the dot: reading a vector right after the scalar stores that wrote it
    // stalls on store forwarding.
    alignas(64) float buf[256];
    float acc = 0;
    for (int64_t e = 0; e < g; e += 256) {
      const int64_t n = std::min<int64_t>(256, g - e);
      for (int64_t c = 0; c < n; c += 32) decode_codes32<kBits>(row, row_bytes, e0 + e + c, k, buf + c);
      acc += dot_f32(buf, x + e0 + e, n);
    }
    return acc;
  }
}

// acc + s * dot, and the final sum, for each accumulator kind group_dot returns.
[[maybe_unused]] inline float scale_add(float dot, float s, float acc) { return acc + s * dot; }
[[maybe_unused]] inline float reduce(float acc) { return acc; }
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
  const uint64_t sbytes = type_info(v.scales_type).block_bytes, bbytes = type_info(v.biases_type).block_bytes;
  thread_local std::vector<float> sc, bi, kc, bc;   // per group of the row: scale, bias, k, centred bias
  for (auto* vec : {&sc, &bi, &kc, &bc}) vec->resize(static_cast<size_t>(groups));
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = v.data.data() + static_cast<uint64_t>(r) * v.row_bytes;
    const uint64_t gi0 = static_cast<uint64_t>(r) * static_cast<uint64_t>(groups);
    load_scalars(v.scales_type, v.scales.data() + gi0 * sbytes, groups, sc.data());
    load_scalars(v.biases_type, v.biases.data() + gi0 * bbytes, groups, bi.data());
    centre_groups(sc.data(), bi.data(), groups, (1 << kBits) - 1, kc.data(), bc.data());
    float bias_acc = 0;
    using Dot = decltype(group_dot<kBits>(row, v.row_bytes, 0, g, 0, a.x, a.xperm));
    Dot vacc{};   // float, __m256 or __m512: zero
    for (int64_t gi = 0; gi < groups; ++gi) {
      float xs = 0;
      for (int64_t k = gi * g / 16; k < (gi + 1) * g / 16; ++k) xs += a.xsum16[k];
      bias_acc += bc[gi] * xs;
      vacc = scale_add(group_dot<kBits>(row, v.row_bytes, gi * g, g, static_cast<int>(kc[gi]), a.x, a.xperm), sc[gi],
                       vacc);
    }
    y[r] = reduce(vacc) + bias_acc;
  }
}

#if AKVIEW_CPU_VBMI
// AVX-512 VBMI kernels over R rows at a time for 2- to 6- and 8-bit codes with groups of a
// multiple of 64. Per row, the group scales and biases are converted to f32 once (vector loaders per
// scalar type); the bias term sum_g (s_g k_g + b_g) * xg_g (centred groups) is one dot with the group
// sums of x. 4-bit codes become one_plus floats (cpu_simd.hpp) against xperm (lo nibbles of 16 bytes,
// then their hi nibbles), 2/3/5/6-bit codes one_plus floats in element order (OddBits); 8-bit codes
// are widened 16 at a time (vpmovzxbd + vcvtdq2ps) as in q8_0.
namespace vb {

struct RowScales {
  std::vector<float> b, xg;   // scratch for one row's biases; the group sums of x (shared by all rows)
};

// For row r: sc[g] = k_scale * scale_g, kc[g] = the code offset k_g (cpu_centre.hpp) in the form
// the kernel subtracts from its code floats (one_plus codes of `levels` steps: 1 + k/levels; levels
// 0: plain codes, k). Returns the bias term
// sum_g (scale_g k_g + b_g) xg_g. 16 groups per step: a serial scalar chain here would cost a third
// of a row's time.
float row_scales(const CpuArgs& a, int64_t r, float k_scale, float levels, int top, RowScales& rs, float* sc,
                 float* kc) {
  const TensorView& v = *a.view;
  const int64_t groups = v.n_cols / v.group_size;
  const uint64_t sb = type_info(v.scales_type).block_bytes, bb = type_info(v.biases_type).block_bytes;
  const uint64_t g0 = static_cast<uint64_t>(r) * static_cast<uint64_t>(groups);
  rs.b.resize(static_cast<size_t>(groups));
  load_scalars(v.scales_type, v.scales.data() + g0 * sb, groups, sc);
  load_scalars(v.biases_type, v.biases.data() + g0 * bb, groups, rs.b.data());
  __m512 acc = _mm512_setzero_ps();
  const __m512 scale = _mm512_set1_ps(k_scale), zero = _mm512_setzero_ps(),
               topv = _mm512_set1_ps(static_cast<float>(top));
  const __m512 kmul = _mm512_set1_ps(levels > 0 ? 1.0f / levels : 1.0f),
               kadd = _mm512_set1_ps(levels > 0 ? 1.0f : 0.0f);
  int64_t g = 0;
  for (; g + 16 <= groups; g += 16) {
    const __m512 s16 = _mm512_loadu_ps(sc + g), b16 = _mm512_loadu_ps(rs.b.data() + g);
    // k = round(-b/s) clamped to [0, top] (rcp14: see centre_block); max() gives 0 for a NaN.
    const __m512 q = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_sub_ps(zero, b16), _mm512_rcp14_ps(s16)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 k = _mm512_min_ps(_mm512_max_ps(q, zero), topv);
    acc = _mm512_fmadd_ps(_mm512_fmadd_ps(s16, k, b16), _mm512_loadu_ps(rs.xg.data() + g), acc);
    _mm512_storeu_ps(kc + g, _mm512_fmadd_ps(k, kmul, kadd));
    _mm512_storeu_ps(sc + g, _mm512_mul_ps(s16, scale));
  }
  float bias = hsum512(acc);
  for (; g < groups; ++g) {
    const CentredGroup c = centre_block(sc[g], rs.b[g], top);
    bias += c.bias * rs.xg[g];
    kc[g] = levels > 0 ? 1.0f + c.k / levels : c.k;
    sc[g] *= k_scale;
  }
  return bias;
}

void group_x_sums(const CpuArgs& a, RowScales& rs) {
  const TensorView& v = *a.view;
  const int64_t groups = v.n_cols / v.group_size, per = v.group_size / 16;
  rs.xg.assign(static_cast<size_t>(groups), 0.0f);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t k = 0; k < per; ++k) rs.xg[g] += a.xsum16[g * per + k];
}

// 2/3/5/6-bit codes of a 64-element step (8*kBits bytes) as one_plus bytes, in element order: each
// qword gets the kBits bytes of its 8 codes (vpermb), vpmultishiftqb rotates code j of a qword to
// bits 7-kBits..6 of byte j, and one vpternlogd keeps them under a set top bit: a byte 1ccc...0
// that one_plus turns into 1 + c/2^kBits. The masked load reads exactly the step's bytes.
template <int kBits>
struct OddBits {
  static constexpr int kShift = 7 - kBits;
  __m512i spread, ctrl, keep = _mm512_set1_epi8(static_cast<char>(((1 << kBits) - 1) << kShift)),
                        top = _mm512_set1_epi8(static_cast<char>(0x80));
  OddBits() {
    alignas(64) uint8_t sp[64], ct[64];
    for (int i = 0; i < 64; ++i) {
      sp[i] = static_cast<uint8_t>(kBits * (i / 8) + std::min(i % 8, kBits - 1));
      ct[i] = static_cast<uint8_t>((kBits * (i % 8) - kShift + 64) % 64);
    }
    spread = _mm512_load_si512(sp);
    ctrl = _mm512_load_si512(ct);
  }
  __m512i codes(const uint8_t* p) const {
    const __m512i b = _mm512_permutexvar_epi8(spread, _mm512_maskz_loadu_epi8((uint64_t{1} << (8 * kBits)) - 1, p));
    return _mm512_ternarylogic_epi32(_mm512_multishift_epi64_epi8(ctrl, b), keep, top, 0xEA);
  }
};

// One 64-element step of a group into two partial sums of (q - k) x, kv holding the group's k as
// row_scales put it. 4-bit: (1 + q/16) - (1 + k/16) = (q - k)/16 exactly; the step's 32 bytes give
// two runs of 16 lo nibbles (xperm 0..15, 32..47) and two of hi nibbles (16..31, 48..63). 2/3/5/6-bit:
// the same with 2^kBits steps, four runs of 16 in element order (OddBits). 8-bit: 16 codes widened
// per vector against x.
template <int kBits>
inline void affine_step(const uint8_t* row, int64_t e, const CpuArgs& a, const MidIdx& ix, __m512 kv, __m512& t0,
                        __m512& t1) {
  if constexpr (kBits == 2 || kBits == 3 || kBits == 5 || kBits == 6) {
    static const OddBits<kBits> odd;
    const uint8_t* p = row + e * kBits / 8;
    prefetch_span(p + 512, 8 * kBits);
    const __m512i c = odd.codes(p);
    const float* x = a.x + e;
    t0 = _mm512_fmadd_ps(_mm512_sub_ps(one_plus(c, ix.k[0], ix.one), kv), _mm512_loadu_ps(x), t0);
    t1 = _mm512_fmadd_ps(_mm512_sub_ps(one_plus(c, ix.k[1], ix.one), kv), _mm512_loadu_ps(x + 16), t1);
    t0 = _mm512_fmadd_ps(_mm512_sub_ps(one_plus(c, ix.k[2], ix.one), kv), _mm512_loadu_ps(x + 32), t0);
    t1 = _mm512_fmadd_ps(_mm512_sub_ps(one_plus(c, ix.k[3], ix.one), kv), _mm512_loadu_ps(x + 48), t1);
  } else if constexpr (kBits == 4) {
    const __m256i m78 = _mm256_set1_epi8(0x78), m80 = _mm256_set1_epi8(static_cast<char>(0x80));
    const uint8_t* p = row + e / 2;
    prefetch_span(p + 512, 32);
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m512i lo = _mm512_castsi256_si512(_mm256_ternarylogic_epi32(_mm256_slli_epi16(q, 3), m78, m80, 0xEA));
    const __m512i hi = _mm512_castsi256_si512(_mm256_ternarylogic_epi32(_mm256_srli_epi16(q, 1), m78, m80, 0xEA));
    const float* xp = a.xperm + e;
    t0 = _mm512_fmadd_ps(_mm512_sub_ps(one_plus(lo, ix.k[0], ix.one), kv), _mm512_loadu_ps(xp), t0);
    t1 = _mm512_fmadd_ps(_mm512_sub_ps(one_plus(hi, ix.k[0], ix.one), kv), _mm512_loadu_ps(xp + 16), t1);
    t0 = _mm512_fmadd_ps(_mm512_sub_ps(one_plus(lo, ix.k[1], ix.one), kv), _mm512_loadu_ps(xp + 32), t0);
    t1 = _mm512_fmadd_ps(_mm512_sub_ps(one_plus(hi, ix.k[1], ix.one), kv), _mm512_loadu_ps(xp + 48), t1);
  } else {
    const uint8_t* p = row + e;
    prefetch_span(p + 1024, 64);
    t0 = _mm512_fmadd_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(u8x16_to_i32(p)), kv), _mm512_loadu_ps(a.x + e), t0);
    t1 =
        _mm512_fmadd_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(u8x16_to_i32(p + 16)), kv), _mm512_loadu_ps(a.x + e + 16), t1);
    t0 =
        _mm512_fmadd_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(u8x16_to_i32(p + 32)), kv), _mm512_loadu_ps(a.x + e + 32), t0);
    t1 =
        _mm512_fmadd_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(u8x16_to_i32(p + 48)), kv), _mm512_loadu_ps(a.x + e + 48), t1);
  }
}

// R rows: per group, sum the steps, then one multiply by the row's (prepared) group scale.
template <int kBits, int R>
void affine_n(const CpuArgs& a, int64_t r, float* y, RowScales& rs, std::vector<float>* sc, std::vector<float>* kc) {
  constexpr float kLevels = kBits == 8 ? 0.0f : static_cast<float>(1 << kBits);   // one_plus codes below 8 bits
  constexpr float kScale = kBits == 8 ? 1.0f : kLevels;
  const TensorView& v = *a.view;
  const int64_t g = v.group_size, groups = v.n_cols / g;
  const MidIdx ix;
  float bias[R];
  __m512 acc[R];
  const uint8_t* rows[R];
  AKV_UNROLL
  for (int i = 0; i < R; ++i) {
    bias[i] = row_scales(a, r + i, kScale, kLevels, (1 << kBits) - 1, rs, sc[i].data(), kc[i].data());
    acc[i] = _mm512_setzero_ps();
    rows[i] = v.data.data() + static_cast<uint64_t>(r + i) * v.row_bytes;
  }
  for (int64_t gi = 0; gi < groups; ++gi) {
    const int64_t e0 = gi * g;
    AKV_UNROLL
    for (int i = 0; i < R; ++i) {
      __m512 t0 = _mm512_setzero_ps(), t1 = _mm512_setzero_ps();
      const __m512 kv = _mm512_set1_ps(kc[i][gi]);
      for (int64_t e = e0; e < e0 + g; e += 64) affine_step<kBits>(rows[i], e, a, ix, kv, t0, t1);
      acc[i] = _mm512_fmadd_ps(_mm512_add_ps(t0, t1), _mm512_set1_ps(sc[i][gi]), acc[i]);
    }
  }
  AKV_UNROLL
  for (int i = 0; i < R; ++i) y[r + i] = hsum512(acc[i]) + bias[i];
}

template <int kBits>
void affine_rows_vbmi(const CpuArgs& a, int64_t r0, int64_t r1, float* y) {
  constexpr int R = kBits == 4 ? 2 : 4;
  thread_local RowScales rs;
  thread_local std::vector<float> sc[R], kc[R];
  const int64_t groups = a.view->n_cols / a.view->group_size;
  group_x_sums(a, rs);
  for (auto& s : sc) s.resize(static_cast<size_t>(groups));
  for (auto& k : kc) k.resize(static_cast<size_t>(groups));
  int64_t r = r0;
  for (; r + R <= r1; r += R) affine_n<kBits, R>(a, r, y, rs, sc, kc);
  for (; r < r1; ++r) affine_n<kBits, 1>(a, r, y, rs, sc, kc);
}

}   // namespace vb
#endif

struct BitsRow {
  int bits;
  CpuRowsFn rows;
};
constexpr std::array kByBits = {
    BitsRow{2, &affine_rows_bits<2>}, BitsRow{3, &affine_rows_bits<3>}, BitsRow{4, &affine_rows_bits<4>},
    BitsRow{5, &affine_rows_bits<5>}, BitsRow{6, &affine_rows_bits<6>}, BitsRow{8, &affine_rows_bits<8>},
};

#if AKVIEW_CPU_VBMI
// Groups of a multiple of 64: the multi-row kernels.
constexpr std::array kVbmiByBits = {
    BitsRow{2, &vb::affine_rows_vbmi<2>}, BitsRow{3, &vb::affine_rows_vbmi<3>}, BitsRow{4, &vb::affine_rows_vbmi<4>},
    BitsRow{5, &vb::affine_rows_vbmi<5>}, BitsRow{6, &vb::affine_rows_vbmi<6>}, BitsRow{8, &vb::affine_rows_vbmi<8>},
};
#endif

void affine_rows(const CpuArgs& a, int64_t r0, int64_t r1, float* y) {
#if AKVIEW_CPU_VBMI
  if (a.view->group_size % 64 == 0)
    for (const auto& row : kVbmiByBits)
      if (row.bits == a.view->bits) return row.rows(a, r0, r1, y);
#endif
  for (const auto& row : kByBits)
    if (row.bits == a.view->bits) return row.rows(a, r0, r1, y);
}

constexpr const char* kVariant = AKVIEW_CPU_VBMI     ? "avx512vbmi (groups of 64k)"
                                 : AKVIEW_CPU_AVX512 ? "avx512 (4/8), avx2 (2)"
                                 : AKVIEW_CPU_AVX2   ? "avx2 (2/4/8 bit)"
                                                     : "block";
constexpr std::array kRows = {
    CpuKernelRow{TypeId::mlx_affine, &affine_rows, &accepts_affine, &prepare_affine, kVariant},
    CpuKernelRow{TypeId::ollama_int4, &affine_rows, &accepts_affine, &prepare_affine, kVariant},
    CpuKernelRow{TypeId::ollama_int8, &affine_rows, &accepts_affine, &prepare_affine, kVariant},
};

}   // namespace

std::span<const CpuKernelRow> cpu_kernels_affine() { return kRows; }

}   // namespace akview::compute
