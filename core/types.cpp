// The type table rows. Block sizes and bytes from ggml's type_traits / ggml-common.h
// (FORMATS.md §2.6); safetensors bit sizes from Dtype::bitsize (FORMATS.md §1.4).
#include "core/types.hpp"

#include <array>

namespace akview {
namespace {

using K = TypeKind;
constexpr std::array kTypes = {
    TypeInfo{TypeId::f32, "f32", 0, "F32", 1, 4, K::floating},
    TypeInfo{TypeId::f16, "f16", 1, "F16", 1, 2, K::floating},
    TypeInfo{TypeId::q4_0, "q4_0", 2, "", 32, 18, K::block_quant},
    TypeInfo{TypeId::q4_1, "q4_1", 3, "", 32, 20, K::block_quant},
    TypeInfo{TypeId::q5_0, "q5_0", 6, "", 32, 22, K::block_quant},
    TypeInfo{TypeId::q5_1, "q5_1", 7, "", 32, 24, K::block_quant},
    TypeInfo{TypeId::q8_0, "q8_0", 8, "", 32, 34, K::block_quant},
    TypeInfo{TypeId::q8_1, "q8_1", 9, "", 32, 36, K::block_quant},
    TypeInfo{TypeId::q2_k, "q2_k", 10, "", 256, 84, K::block_quant},
    TypeInfo{TypeId::q3_k, "q3_k", 11, "", 256, 110, K::block_quant},
    TypeInfo{TypeId::q4_k, "q4_k", 12, "", 256, 144, K::block_quant},
    TypeInfo{TypeId::q5_k, "q5_k", 13, "", 256, 176, K::block_quant},
    TypeInfo{TypeId::q6_k, "q6_k", 14, "", 256, 210, K::block_quant},
    TypeInfo{TypeId::q8_k, "q8_k", 15, "", 256, 292, K::block_quant},
    TypeInfo{TypeId::iq2_xxs, "iq2_xxs", 16, "", 256, 66, K::block_quant},
    TypeInfo{TypeId::iq2_xs, "iq2_xs", 17, "", 256, 74, K::block_quant},
    TypeInfo{TypeId::iq3_xxs, "iq3_xxs", 18, "", 256, 98, K::block_quant},
    TypeInfo{TypeId::iq1_s, "iq1_s", 19, "", 256, 50, K::block_quant},
    TypeInfo{TypeId::iq4_nl, "iq4_nl", 20, "", 32, 18, K::block_quant},
    TypeInfo{TypeId::iq3_s, "iq3_s", 21, "", 256, 110, K::block_quant},
    TypeInfo{TypeId::iq2_s, "iq2_s", 22, "", 256, 82, K::block_quant},
    TypeInfo{TypeId::iq4_xs, "iq4_xs", 23, "", 256, 136, K::block_quant},
    TypeInfo{TypeId::i8, "i8", 24, "I8", 1, 1, K::integer},
    TypeInfo{TypeId::i16, "i16", 25, "I16", 1, 2, K::integer},
    TypeInfo{TypeId::i32, "i32", 26, "I32", 1, 4, K::integer},
    TypeInfo{TypeId::i64, "i64", 27, "I64", 1, 8, K::integer},
    TypeInfo{TypeId::f64, "f64", 28, "F64", 1, 8, K::floating},
    TypeInfo{TypeId::iq1_m, "iq1_m", 29, "", 256, 56, K::block_quant},
    TypeInfo{TypeId::bf16, "bf16", 30, "BF16", 1, 2, K::floating},
    TypeInfo{TypeId::tq1_0, "tq1_0", 34, "", 256, 54, K::block_quant},
    TypeInfo{TypeId::tq2_0, "tq2_0", 35, "", 256, 66, K::block_quant},
    TypeInfo{TypeId::mxfp4, "mxfp4", 39, "", 32, 17, K::block_quant},
    TypeInfo{TypeId::nvfp4, "nvfp4", 40, "", 64, 36, K::block_quant},
    TypeInfo{TypeId::q1_0, "q1_0", 41, "", 128, 18, K::block_quant},
    TypeInfo{TypeId::q2_0, "q2_0", 42, "", 64, 18, K::block_quant},
    TypeInfo{TypeId::boolean, "bool", -1, "BOOL", 1, 1, K::boolean},
    TypeInfo{TypeId::f4, "f4", -1, "F4", 2, 1, K::floating},
    TypeInfo{TypeId::f6_e2m3, "f6_e2m3", -1, "F6_E2M3", 4, 3, K::floating},
    TypeInfo{TypeId::f6_e3m2, "f6_e3m2", -1, "F6_E3M2", 4, 3, K::floating},
    TypeInfo{TypeId::u8, "u8", -1, "U8", 1, 1, K::integer},
    TypeInfo{TypeId::f8_e5m2, "f8_e5m2", -1, "F8_E5M2", 1, 1, K::floating},
    TypeInfo{TypeId::f8_e4m3, "f8_e4m3", -1, "F8_E4M3", 1, 1, K::floating},
    TypeInfo{TypeId::f8_e8m0, "f8_e8m0", -1, "F8_E8M0", 1, 1, K::floating},
    TypeInfo{TypeId::f8_e4m3fnuz, "f8_e4m3fnuz", -1, "F8_E4M3FNUZ", 1, 1, K::floating},
    TypeInfo{TypeId::f8_e5m2fnuz, "f8_e5m2fnuz", -1, "F8_E5M2FNUZ", 1, 1, K::floating},
    TypeInfo{TypeId::u16, "u16", -1, "U16", 1, 2, K::integer},
    TypeInfo{TypeId::u32, "u32", -1, "U32", 1, 4, K::integer},
    TypeInfo{TypeId::u64, "u64", -1, "U64", 1, 8, K::integer},
    TypeInfo{TypeId::c64, "c64", -1, "C64", 1, 8, K::complex},
    TypeInfo{TypeId::c128, "c128", -1, "", 1, 16, K::complex},
    TypeInfo{TypeId::mlx_affine, "mlx.affine", -1, "", 0, 0, K::composite},
    TypeInfo{TypeId::mlx_mxfp4, "mlx.mxfp4", -1, "", 0, 0, K::composite},
    TypeInfo{TypeId::mlx_nvfp4, "mlx.nvfp4", -1, "", 0, 0, K::composite},
    TypeInfo{TypeId::mlx_mxfp8, "mlx.mxfp8", -1, "", 0, 0, K::composite},
    TypeInfo{TypeId::ollama_int4, "ollama.int4", -1, "", 0, 0, K::composite},
    TypeInfo{TypeId::ollama_int8, "ollama.int8", -1, "", 0, 0, K::composite},
    TypeInfo{TypeId::ollama_nvfp4, "ollama.nvfp4", -1, "", 0, 0, K::composite},
    TypeInfo{TypeId::ollama_mxfp4, "ollama.mxfp4", -1, "", 0, 0, K::composite},
    TypeInfo{TypeId::ollama_mxfp8, "ollama.mxfp8", -1, "", 0, 0, K::composite},
};
static_assert(kTypes.size() == static_cast<size_t>(TypeId::count_), "one row per TypeId");

constexpr bool rows_in_order() {
  for (size_t i = 0; i < kTypes.size(); ++i)
    if (static_cast<size_t>(kTypes[i].id) != i) return false;
  return true;
}
static_assert(rows_in_order(), "kTypes rows must follow the TypeId order");

// ggml ids that were removed from the format ("support has been removed from gguf files").
constexpr std::array kRemovedGgmlIds = {4, 5, 31, 32, 33, 36, 37, 38};

constexpr std::array<int16_t, kGgmlTypeCount> make_ggml_lookup() {
  std::array<int16_t, kGgmlTypeCount> lookup{};
  for (auto& v : lookup) v = -1;
  for (const auto& t : kTypes)
    if (t.ggml_id >= 0) lookup[t.ggml_id] = static_cast<int16_t>(t.id);
  return lookup;
}
constexpr auto kGgmlLookup = make_ggml_lookup();

constexpr bool ggml_table_complete() {
  for (int id = 0; id < kGgmlTypeCount; ++id) {
    bool removed = false;
    for (int r : kRemovedGgmlIds) removed |= (r == id);
    if ((kGgmlLookup[id] < 0) != removed) return false;
  }
  return true;
}
static_assert(ggml_table_complete(), "every ggml id 0..42 is either a row or listed as removed");

}  // namespace

const TypeInfo& type_info(TypeId id) { return kTypes[static_cast<size_t>(id)]; }
std::span<const TypeInfo> all_types() { return kTypes; }

std::optional<TypeId> type_from_ggml(int64_t ggml_id) {
  if (ggml_id < 0 || ggml_id >= kGgmlTypeCount || kGgmlLookup[ggml_id] < 0) return std::nullopt;
  return static_cast<TypeId>(kGgmlLookup[ggml_id]);
}

bool ggml_id_removed(int64_t ggml_id) {
  for (int r : kRemovedGgmlIds)
    if (r == ggml_id) return true;
  return false;
}

std::optional<TypeId> type_from_st_dtype(std::string_view dtype) {
  for (const auto& t : kTypes)
    if (!t.st_name.empty() && t.st_name == dtype) return t.id;
  return std::nullopt;
}

std::optional<TypeId> type_from_name(std::string_view name) {
  for (const auto& t : kTypes)
    if (t.name == name) return t.id;
  return std::nullopt;
}

double type_bits_per_weight(TypeId id) {
  const auto& t = type_info(id);
  if (t.block_elems == 0) return 0.0;
  return 8.0 * t.block_bytes / t.block_elems;
}

}  // namespace akview
