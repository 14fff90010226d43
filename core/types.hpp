// The storage-type table: one row per type akview knows, across GGUF (ggml ids 0-42), SafeTensors
// dtypes, PyTorch dtypes and the composite quantized types of MLX and Ollama.
// FORMATS.md §1.4 (safetensors dtypes) and §2.6 (ggml_type codes, block sizes and type sizes).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace akview {

enum class TypeId : uint8_t {
  // ggml types (names are ggml's, lower-case)
  f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0, q8_1, q2_k, q3_k, q4_k, q5_k, q6_k, q8_k,
  iq2_xxs, iq2_xs, iq3_xxs, iq1_s, iq4_nl, iq3_s, iq2_s, iq4_xs, i8, i16, i32, i64, f64, iq1_m, bf16,
  tq1_0, tq2_0, mxfp4, nvfp4, q1_0, q2_0,
  // safetensors / pytorch dtypes that ggml does not have
  boolean, f4, f6_e2m3, f6_e3m2, u8, f8_e5m2, f8_e4m3, f8_e8m0, f8_e4m3fnuz, f8_e5m2fnuz, u16, u32, u64, c64, c128,
  // composite quantized types: packed U32 weight + companion scales (+ biases); bits/group from QuantInfo
  mlx_affine, mlx_mxfp4, mlx_nvfp4, mlx_mxfp8, ollama_int4, ollama_int8, ollama_nvfp4, ollama_mxfp4, ollama_mxfp8,
  count_
};

enum class TypeKind : uint8_t {
  floating,    // plain IEEE / bfloat / minifloat elements
  integer,     // plain integers
  boolean,
  complex,
  block_quant, // self-contained quantized blocks (ggml)
  composite,   // weight + separate scales/biases tensors (MLX, Ollama)
};

struct TypeInfo {
  TypeId id;
  std::string_view name;      // akview's name: "q4_k", "bf16", "mlx.affine"
  int16_t ggml_id;            // ggml_type code, -1 if none
  std::string_view st_name;   // SafeTensors dtype string ("BF16"), empty if none
  uint32_t block_elems;       // elements per block (1 for plain types; 0 for composite: from QuantInfo)
  uint32_t block_bytes;       // bytes per block (0 for composite)
  TypeKind kind;
};

const TypeInfo& type_info(TypeId id);
std::span<const TypeInfo> all_types();

inline constexpr int kGgmlTypeCount = 43;   // GGML_TYPE_COUNT: any code >= 43 is rejected
// ggml id -> type; nullopt for removed ids (4, 5, 31-33, 36-38) and ids out of range.
std::optional<TypeId> type_from_ggml(int64_t ggml_id);
// true for ids that once existed and were removed (for a clearer error message).
bool ggml_id_removed(int64_t ggml_id);
std::optional<TypeId> type_from_st_dtype(std::string_view dtype);
std::optional<TypeId> type_from_name(std::string_view name);

// Bits per weight of a plain or block type (composite: 0; ask the QuantInfo).
double type_bits_per_weight(TypeId id);

}  // namespace akview
