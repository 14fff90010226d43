// The storage-type table: one row per type akview knows, across GGUF (ggml ids 0-42), SafeTensors
// dtypes, PyTorch dtypes and the composite quantized types of MLX and Ollama.
// FORMATS.md §1.4 (safetensors dtypes) and §2.6 (ggml_type codes, block sizes and type sizes).
// A new type is a TypeId and a row here; the compiler then names each table that needs a row for it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace akview {

enum class TypeId : uint8_t {
  // ggml types (names are ggml's, lower-case)
  f32,
  f16,
  q4_0,
  q4_1,
  q5_0,
  q5_1,
  q8_0,
  q8_1,
  q2_k,
  q3_k,
  q4_k,
  q5_k,
  q6_k,
  q8_k,
  iq2_xxs,
  iq2_xs,
  iq3_xxs,
  iq1_s,
  iq4_nl,
  iq3_s,
  iq2_s,
  iq4_xs,
  i8,
  i16,
  i32,
  i64,
  f64,
  iq1_m,
  bf16,
  tq1_0,
  tq2_0,
  mxfp4,
  nvfp4,
  q1_0,
  q2_0,
  // safetensors / pytorch dtypes that ggml does not have
  boolean,
  f4,
  f6_e2m3,
  f6_e3m2,
  u8,
  f8_e5m2,
  f8_e4m3,
  f8_e8m0,
  f8_e4m3fnuz,
  f8_e5m2fnuz,
  u16,
  u32,
  u64,
  c64,
  c128,
  // composite quantized types: packed U32 weight + companion scales (+ biases); bits/group from QuantInfo
  mlx_affine,
  mlx_mxfp4,
  mlx_nvfp4,
  mlx_mxfp8,
  ollama_int4,
  ollama_int8,
  ollama_nvfp4,
  ollama_mxfp4,
  ollama_mxfp8,
  count_
};

enum class TypeKind : uint8_t {
  floating,   // plain IEEE / bfloat / minifloat elements
  integer,    // plain integers
  boolean,
  complex,
  block_quant,   // self-contained quantized blocks (ggml)
  composite,     // weight + separate scales/biases tensors (MLX, Ollama)
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

// The rows, one per TypeId in enum order (types.cpp checks both). Block sizes and bytes from ggml's
// type_traits / ggml-common.h (FORMATS.md §2.6); safetensors bit sizes from Dtype::bitsize (§1.4).
// They are visible at compile time so that every per-type table elsewhere (decoders, group walkers,
// explainers, block fields, element formatters, families) can static_assert that it covers exactly the
// types it must: a new row here fails to compile until each of those tables has its row.
inline constexpr std::array kTypeTable = {
    TypeInfo{TypeId::f32, "f32", 0, "F32", 1, 4, TypeKind::floating},
    TypeInfo{TypeId::f16, "f16", 1, "F16", 1, 2, TypeKind::floating},
    TypeInfo{TypeId::q4_0, "q4_0", 2, "", 32, 18, TypeKind::block_quant},
    TypeInfo{TypeId::q4_1, "q4_1", 3, "", 32, 20, TypeKind::block_quant},
    TypeInfo{TypeId::q5_0, "q5_0", 6, "", 32, 22, TypeKind::block_quant},
    TypeInfo{TypeId::q5_1, "q5_1", 7, "", 32, 24, TypeKind::block_quant},
    TypeInfo{TypeId::q8_0, "q8_0", 8, "", 32, 34, TypeKind::block_quant},
    TypeInfo{TypeId::q8_1, "q8_1", 9, "", 32, 36, TypeKind::block_quant},
    TypeInfo{TypeId::q2_k, "q2_k", 10, "", 256, 84, TypeKind::block_quant},
    TypeInfo{TypeId::q3_k, "q3_k", 11, "", 256, 110, TypeKind::block_quant},
    TypeInfo{TypeId::q4_k, "q4_k", 12, "", 256, 144, TypeKind::block_quant},
    TypeInfo{TypeId::q5_k, "q5_k", 13, "", 256, 176, TypeKind::block_quant},
    TypeInfo{TypeId::q6_k, "q6_k", 14, "", 256, 210, TypeKind::block_quant},
    TypeInfo{TypeId::q8_k, "q8_k", 15, "", 256, 292, TypeKind::block_quant},
    TypeInfo{TypeId::iq2_xxs, "iq2_xxs", 16, "", 256, 66, TypeKind::block_quant},
    TypeInfo{TypeId::iq2_xs, "iq2_xs", 17, "", 256, 74, TypeKind::block_quant},
    TypeInfo{TypeId::iq3_xxs, "iq3_xxs", 18, "", 256, 98, TypeKind::block_quant},
    TypeInfo{TypeId::iq1_s, "iq1_s", 19, "", 256, 50, TypeKind::block_quant},
    TypeInfo{TypeId::iq4_nl, "iq4_nl", 20, "", 32, 18, TypeKind::block_quant},
    TypeInfo{TypeId::iq3_s, "iq3_s", 21, "", 256, 110, TypeKind::block_quant},
    TypeInfo{TypeId::iq2_s, "iq2_s", 22, "", 256, 82, TypeKind::block_quant},
    TypeInfo{TypeId::iq4_xs, "iq4_xs", 23, "", 256, 136, TypeKind::block_quant},
    TypeInfo{TypeId::i8, "i8", 24, "I8", 1, 1, TypeKind::integer},
    TypeInfo{TypeId::i16, "i16", 25, "I16", 1, 2, TypeKind::integer},
    TypeInfo{TypeId::i32, "i32", 26, "I32", 1, 4, TypeKind::integer},
    TypeInfo{TypeId::i64, "i64", 27, "I64", 1, 8, TypeKind::integer},
    TypeInfo{TypeId::f64, "f64", 28, "F64", 1, 8, TypeKind::floating},
    TypeInfo{TypeId::iq1_m, "iq1_m", 29, "", 256, 56, TypeKind::block_quant},
    TypeInfo{TypeId::bf16, "bf16", 30, "BF16", 1, 2, TypeKind::floating},
    TypeInfo{TypeId::tq1_0, "tq1_0", 34, "", 256, 54, TypeKind::block_quant},
    TypeInfo{TypeId::tq2_0, "tq2_0", 35, "", 256, 66, TypeKind::block_quant},
    TypeInfo{TypeId::mxfp4, "mxfp4", 39, "", 32, 17, TypeKind::block_quant},
    TypeInfo{TypeId::nvfp4, "nvfp4", 40, "", 64, 36, TypeKind::block_quant},
    TypeInfo{TypeId::q1_0, "q1_0", 41, "", 128, 18, TypeKind::block_quant},
    TypeInfo{TypeId::q2_0, "q2_0", 42, "", 64, 18, TypeKind::block_quant},
    TypeInfo{TypeId::boolean, "bool", -1, "BOOL", 1, 1, TypeKind::boolean},
    TypeInfo{TypeId::f4, "f4", -1, "F4", 2, 1, TypeKind::floating},
    TypeInfo{TypeId::f6_e2m3, "f6_e2m3", -1, "F6_E2M3", 4, 3, TypeKind::floating},
    TypeInfo{TypeId::f6_e3m2, "f6_e3m2", -1, "F6_E3M2", 4, 3, TypeKind::floating},
    TypeInfo{TypeId::u8, "u8", -1, "U8", 1, 1, TypeKind::integer},
    TypeInfo{TypeId::f8_e5m2, "f8_e5m2", -1, "F8_E5M2", 1, 1, TypeKind::floating},
    TypeInfo{TypeId::f8_e4m3, "f8_e4m3", -1, "F8_E4M3", 1, 1, TypeKind::floating},
    TypeInfo{TypeId::f8_e8m0, "f8_e8m0", -1, "F8_E8M0", 1, 1, TypeKind::floating},
    TypeInfo{TypeId::f8_e4m3fnuz, "f8_e4m3fnuz", -1, "F8_E4M3FNUZ", 1, 1, TypeKind::floating},
    TypeInfo{TypeId::f8_e5m2fnuz, "f8_e5m2fnuz", -1, "F8_E5M2FNUZ", 1, 1, TypeKind::floating},
    TypeInfo{TypeId::u16, "u16", -1, "U16", 1, 2, TypeKind::integer},
    TypeInfo{TypeId::u32, "u32", -1, "U32", 1, 4, TypeKind::integer},
    TypeInfo{TypeId::u64, "u64", -1, "U64", 1, 8, TypeKind::integer},
    TypeInfo{TypeId::c64, "c64", -1, "C64", 1, 8, TypeKind::complex},
    TypeInfo{TypeId::c128, "c128", -1, "", 1, 16, TypeKind::complex},
    TypeInfo{TypeId::mlx_affine, "mlx.affine", -1, "", 0, 0, TypeKind::composite},
    TypeInfo{TypeId::mlx_mxfp4, "mlx.mxfp4", -1, "", 0, 0, TypeKind::composite},
    TypeInfo{TypeId::mlx_nvfp4, "mlx.nvfp4", -1, "", 0, 0, TypeKind::composite},
    TypeInfo{TypeId::mlx_mxfp8, "mlx.mxfp8", -1, "", 0, 0, TypeKind::composite},
    TypeInfo{TypeId::ollama_int4, "ollama.int4", -1, "", 0, 0, TypeKind::composite},
    TypeInfo{TypeId::ollama_int8, "ollama.int8", -1, "", 0, 0, TypeKind::composite},
    TypeInfo{TypeId::ollama_nvfp4, "ollama.nvfp4", -1, "", 0, 0, TypeKind::composite},
    TypeInfo{TypeId::ollama_mxfp4, "ollama.mxfp4", -1, "", 0, 0, TypeKind::composite},
    TypeInfo{TypeId::ollama_mxfp8, "ollama.mxfp8", -1, "", 0, 0, TypeKind::composite},
};

// True when `rows` (each with a `type` member) names every type whose kind `wanted` accepts exactly once,
// and no other type.
template <typename Rows, typename Wanted>
constexpr bool covers_types_of_kind(const Rows& rows, Wanted wanted) {
  for (const TypeInfo& t : kTypeTable) {
    int found = 0;
    for (const auto& row : rows) found += row.type == t.id ? 1 : 0;
    if (found != (wanted(t.kind) ? 1 : 0)) return false;
  }
  return true;
}

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

}   // namespace akview
