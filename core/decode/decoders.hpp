// Internal to core/decode: the one signature every type's decoder has, the row decoders that the
// table in decode_table.cpp points at, and the helper that runs a block function over a row range.
// decode_rows() has validated the view and the range before any of these run.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/tensor_view.hpp"
#include "core/types.hpp"

namespace akview::decode {

// Decodes rows [row_begin, row_end) of a validated view into out ((row_end-row_begin) * n_cols floats).
using RowRangeDecoder = void (*)(const TensorView& view, int64_t row_begin, int64_t row_end, float* out);

// A block decoder: `block_bytes` bytes in, `block_elems` floats out.
using BlockDecoder = void (*)(const uint8_t* block, float* out);

// Runs `Block` over every block of the rows: rows are contiguous, so the range is one flat run of
// blocks and the block function is inlined into one straight loop (dispatch happens once per call).
template <size_t kBlockElems, size_t kBlockBytes, void (*Block)(const uint8_t*, float*)>
void decode_block_rows(const TensorView& v, int64_t row_begin, int64_t row_end, float* out) {
  const uint8_t* __restrict src = v.data.data() + static_cast<size_t>(row_begin) * v.row_bytes;
  const size_t n_blocks = static_cast<size_t>(row_end - row_begin) * (static_cast<size_t>(v.n_cols) / kBlockElems);
  for (size_t i = 0; i < n_blocks; ++i) Block(src + i * kBlockBytes, out + i * kBlockElems);
}

// decode_block_rows with the block's elements and bytes from `kType`'s row of the type table, so a block
// type's size is written once (core/types.hpp).
template <TypeId kType, void (*Block)(const uint8_t*, float*)>
void decode_type_rows(const TensorView& v, int64_t row_begin, int64_t row_end, float* out) {
  constexpr const TypeInfo& info = kTypeTable[static_cast<size_t>(kType)];
  static_assert(info.id == kType && info.block_elems > 0);
  decode_block_rows<info.block_elems, info.block_bytes, Block>(v, row_begin, row_end, out);
}

// Plain element types (decode_floats.cpp)
void decode_f32(const TensorView&, int64_t, int64_t, float*);
void decode_f16(const TensorView&, int64_t, int64_t, float*);
void decode_bf16(const TensorView&, int64_t, int64_t, float*);
void decode_f64(const TensorView&, int64_t, int64_t, float*);
void decode_i8(const TensorView&, int64_t, int64_t, float*);
void decode_i16(const TensorView&, int64_t, int64_t, float*);
void decode_i32(const TensorView&, int64_t, int64_t, float*);
void decode_i64(const TensorView&, int64_t, int64_t, float*);
void decode_u8(const TensorView&, int64_t, int64_t, float*);
void decode_u16(const TensorView&, int64_t, int64_t, float*);
void decode_u32(const TensorView&, int64_t, int64_t, float*);
void decode_u64(const TensorView&, int64_t, int64_t, float*);
void decode_bool(const TensorView&, int64_t, int64_t, float*);
void decode_f8_e4m3(const TensorView&, int64_t, int64_t, float*);
void decode_f8_e5m2(const TensorView&, int64_t, int64_t, float*);
void decode_f8_e8m0(const TensorView&, int64_t, int64_t, float*);
void decode_f8_e4m3fnuz(const TensorView&, int64_t, int64_t, float*);
void decode_f8_e5m2fnuz(const TensorView&, int64_t, int64_t, float*);
void decode_f6_e2m3(const TensorView&, int64_t, int64_t, float*);
void decode_f6_e3m2(const TensorView&, int64_t, int64_t, float*);
void decode_f4(const TensorView&, int64_t, int64_t, float*);
void decode_c64(const TensorView&, int64_t, int64_t, float*);
void decode_c128(const TensorView&, int64_t, int64_t, float*);

// ggml legacy quants (decode_legacy_quants.cpp)
void decode_q4_0(const TensorView&, int64_t, int64_t, float*);
void decode_q4_1(const TensorView&, int64_t, int64_t, float*);
void decode_q5_0(const TensorView&, int64_t, int64_t, float*);
void decode_q5_1(const TensorView&, int64_t, int64_t, float*);
void decode_q8_0(const TensorView&, int64_t, int64_t, float*);
void decode_q8_1(const TensorView&, int64_t, int64_t, float*);
void decode_q1_0(const TensorView&, int64_t, int64_t, float*);
void decode_q2_0(const TensorView&, int64_t, int64_t, float*);

// ggml K-quants (decode_kquants.cpp)
void decode_q2_k(const TensorView&, int64_t, int64_t, float*);
void decode_q3_k(const TensorView&, int64_t, int64_t, float*);
void decode_q4_k(const TensorView&, int64_t, int64_t, float*);
void decode_q5_k(const TensorView&, int64_t, int64_t, float*);
void decode_q6_k(const TensorView&, int64_t, int64_t, float*);
void decode_q8_k(const TensorView&, int64_t, int64_t, float*);

// ggml IQ types (decode_iquants.cpp, tables in iq_grids.cpp)
void decode_iq1_s(const TensorView&, int64_t, int64_t, float*);
void decode_iq1_m(const TensorView&, int64_t, int64_t, float*);
void decode_iq2_xxs(const TensorView&, int64_t, int64_t, float*);
void decode_iq2_xs(const TensorView&, int64_t, int64_t, float*);
void decode_iq2_s(const TensorView&, int64_t, int64_t, float*);
void decode_iq3_xxs(const TensorView&, int64_t, int64_t, float*);
void decode_iq3_s(const TensorView&, int64_t, int64_t, float*);
void decode_iq4_nl(const TensorView&, int64_t, int64_t, float*);
void decode_iq4_xs(const TensorView&, int64_t, int64_t, float*);

// ternary (decode_ternary.cpp) and FP4 blocks (decode_fp4.cpp)
void decode_tq1_0(const TensorView&, int64_t, int64_t, float*);
void decode_tq2_0(const TensorView&, int64_t, int64_t, float*);
void decode_mxfp4(const TensorView&, int64_t, int64_t, float*);
void decode_nvfp4(const TensorView&, int64_t, int64_t, float*);

// composite types (decode_mlx.cpp, decode_ollama.cpp)
void decode_mlx_affine(const TensorView&, int64_t, int64_t, float*);
void decode_mlx_mxfp4(const TensorView&, int64_t, int64_t, float*);
void decode_mlx_nvfp4(const TensorView&, int64_t, int64_t, float*);
void decode_mlx_mxfp8(const TensorView&, int64_t, int64_t, float*);
void decode_ollama_affine(const TensorView&, int64_t, int64_t, float*);
void decode_ollama_nvfp4(const TensorView&, int64_t, int64_t, float*);
void decode_ollama_mxfp4(const TensorView&, int64_t, int64_t, float*);
void decode_ollama_mxfp8(const TensorView&, int64_t, int64_t, float*);

}   // namespace akview::decode
