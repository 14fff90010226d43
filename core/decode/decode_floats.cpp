// Plain element types to float32: IEEE/bfloat floats, integers, bool, FP8/FP6/FP4 minifloats,
// complex (real part). FORMATS.md §1.4 (safetensors dtypes) and §2.6 (ggml F32/F16/BF16/F64/I*).
// Every element is read byte-wise (little-endian), so no pointer into the mapping is ever cast.
#include <cstring>

#if defined(__F16C__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/decode/decoders.hpp"
#include "core/decode/float_formats.hpp"

namespace akview::decode {
namespace {

// One element of `kBytes` bytes -> one float, over the flat run of rows.
template <size_t kBytes, float (*Elem)(const uint8_t*)>
void decode_elements(const TensorView& v, int64_t row_begin, int64_t row_end, float* __restrict out) {
  const uint8_t* __restrict src = v.data.data() + static_cast<size_t>(row_begin) * v.row_bytes;
  const size_t n = static_cast<size_t>(row_end - row_begin) * static_cast<size_t>(v.n_cols);
  for (size_t i = 0; i < n; ++i) out[i] = Elem(src + i * kBytes);
}

float elem_f16(const uint8_t* p) { return fp::f16_to_f32(fp::load_u16(p)); }
float elem_bf16(const uint8_t* p) { return fp::bf16_to_f32(fp::load_u16(p)); }
float elem_f64(const uint8_t* p) { return static_cast<float>(fp::load_f64(p)); }
float elem_i8(const uint8_t* p) { return static_cast<float>(static_cast<int8_t>(p[0])); }
float elem_i16(const uint8_t* p) { return static_cast<float>(static_cast<int16_t>(fp::load_u16(p))); }
float elem_i32(const uint8_t* p) { return static_cast<float>(static_cast<int32_t>(fp::load_u32(p))); }
float elem_i64(const uint8_t* p) { return static_cast<float>(static_cast<int64_t>(fp::load_u64(p))); }
float elem_u8(const uint8_t* p) { return static_cast<float>(p[0]); }
float elem_u16(const uint8_t* p) { return static_cast<float>(fp::load_u16(p)); }
float elem_u32(const uint8_t* p) { return static_cast<float>(fp::load_u32(p)); }
float elem_u64(const uint8_t* p) { return static_cast<float>(fp::load_u64(p)); }
float elem_bool(const uint8_t* p) { return p[0] != 0 ? 1.0f : 0.0f; }
float elem_e4m3(const uint8_t* p) { return fp::e4m3fn_to_f32(p[0]); }
float elem_e5m2(const uint8_t* p) { return fp::e5m2_to_f32(p[0]); }
float elem_e8m0(const uint8_t* p) { return fp::e8m0_ocp_to_f32(p[0]); }
float elem_e4m3fnuz(const uint8_t* p) { return fp::e4m3fnuz_to_f32(p[0]); }
float elem_e5m2fnuz(const uint8_t* p) { return fp::e5m2fnuz_to_f32(p[0]); }
// complex: the real part (the first of the two components); see decode_caveat().
float elem_c64(const uint8_t* p) { return fp::load_f32(p); }
float elem_c128(const uint8_t* p) { return static_cast<float>(fp::load_f64(p)); }

}   // namespace

// F32: a byte copy (bit-exact, NaN payloads kept).
void decode_f32(const TensorView& v, int64_t b, int64_t e, float* out) {
  const size_t n = static_cast<size_t>(e - b) * static_cast<size_t>(v.n_cols);
  if (n != 0) std::memcpy(out, v.data.data() + static_cast<size_t>(b) * v.row_bytes, n * sizeof(float));
}
// F16: with F16C (x86 -march=native) 8 halves per instruction, exact like the scalar path; the tail
// and other targets use the branchless scalar conversion.
void decode_f16(const TensorView& v, int64_t b, int64_t e, float* o) {
#if defined(__F16C__)
  const uint8_t* src = v.data.data() + static_cast<size_t>(b) * v.row_bytes;
  const size_t n = static_cast<size_t>(e - b) * static_cast<size_t>(v.n_cols);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));   // unaligned load intrinsic
    _mm256_storeu_ps(o + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) o[i] = elem_f16(src + 2 * i);
#else
  decode_elements<2, elem_f16>(v, b, e, o);
#endif
}
// BF16: with AVX2, 8 halves widened and shifted into the top of a float32 per instruction (the
// scalar bf16_to_f32 bit move); the tail and other targets use the scalar loop.
void decode_bf16(const TensorView& v, int64_t b, int64_t e, float* o) {
#if defined(__AVX2__)
  const uint8_t* src = v.data.data() + static_cast<size_t>(b) * v.row_bytes;
  const size_t n = static_cast<size_t>(e - b) * static_cast<size_t>(v.n_cols);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));   // unaligned load intrinsic
    _mm256_storeu_ps(o + i, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)));
  }
  for (; i < n; ++i) o[i] = elem_bf16(src + 2 * i);
#else
  decode_elements<2, elem_bf16>(v, b, e, o);
#endif
}
void decode_f64(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<8, elem_f64>(v, b, e, o); }
void decode_i8(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<1, elem_i8>(v, b, e, o); }
void decode_i16(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<2, elem_i16>(v, b, e, o); }
void decode_i32(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<4, elem_i32>(v, b, e, o); }
void decode_i64(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<8, elem_i64>(v, b, e, o); }
void decode_u8(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<1, elem_u8>(v, b, e, o); }
void decode_u16(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<2, elem_u16>(v, b, e, o); }
void decode_u32(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<4, elem_u32>(v, b, e, o); }
void decode_u64(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<8, elem_u64>(v, b, e, o); }
void decode_bool(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<1, elem_bool>(v, b, e, o); }
void decode_f8_e4m3(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<1, elem_e4m3>(v, b, e, o); }
void decode_f8_e5m2(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<1, elem_e5m2>(v, b, e, o); }
void decode_f8_e8m0(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<1, elem_e8m0>(v, b, e, o); }
void decode_f8_e4m3fnuz(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_elements<1, elem_e4m3fnuz>(v, b, e, o);
}
void decode_f8_e5m2fnuz(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_elements<1, elem_e5m2fnuz>(v, b, e, o);
}
void decode_c64(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<8, elem_c64>(v, b, e, o); }
void decode_c128(const TensorView& v, int64_t b, int64_t e, float* o) { decode_elements<16, elem_c128>(v, b, e, o); }

// F4 (safetensors, E2M1), 2 elements per byte. ASSUMED order (the crate does not specify it,
// FORMATS.md §1.4): element 2k = low nibble of byte k, element 2k+1 = high nibble (torch's
// float4_e2m1fn_x2 / MLX order).
//   byte k: [7..4 elem 2k+1][3..0 elem 2k]
namespace {
void f4_block(const uint8_t* __restrict b, float* __restrict y) {
  y[0] = fp::e2m1_to_f32(b[0] & 0xF);
  y[1] = fp::e2m1_to_f32(b[0] >> 4);
}
// F6 (safetensors), 4 elements in 3 bytes. ASSUMED: a little-endian bit stream, element k at bits
// [6k, 6k+6) of the 24-bit little-endian word (the same LSB-first rule as MLX packing).
//   bytes b0 b1 b2 -> w = b0 | b1<<8 | b2<<16; elem k = (w >> 6k) & 0x3F
void f6_e2m3_block(const uint8_t* __restrict b, float* __restrict y) {
  const uint32_t w = b[0] | (static_cast<uint32_t>(b[1]) << 8) | (static_cast<uint32_t>(b[2]) << 16);
  for (int k = 0; k < 4; ++k) y[k] = fp::e2m3_to_f32(static_cast<uint8_t>((w >> (6 * k)) & 0x3F));
}
void f6_e3m2_block(const uint8_t* __restrict b, float* __restrict y) {
  const uint32_t w = b[0] | (static_cast<uint32_t>(b[1]) << 8) | (static_cast<uint32_t>(b[2]) << 16);
  for (int k = 0; k < 4; ++k) y[k] = fp::e3m2_to_f32(static_cast<uint8_t>((w >> (6 * k)) & 0x3F));
}
}   // namespace

void decode_f4(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::f4, f4_block>(v, b, e, o);
}
void decode_f6_e2m3(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::f6_e2m3, f6_e2m3_block>(v, b, e, o);
}
void decode_f6_e3m2(const TensorView& v, int64_t b, int64_t e, float* o) {
  decode_type_rows<TypeId::f6_e3m2, f6_e3m2_block>(v, b, e, o);
}

}   // namespace akview::decode
