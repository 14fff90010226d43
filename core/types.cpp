// Lookups in the type table (its rows are in types.hpp).
#include "core/types.hpp"

#include <array>

namespace akview {
namespace {

constexpr const auto& kTypes = kTypeTable;

static_assert(kTypeTable.size() == static_cast<size_t>(TypeId::count_), "one row per TypeId");

constexpr bool type_rows_in_order() {
  for (size_t i = 0; i < kTypeTable.size(); ++i)
    if (static_cast<size_t>(kTypeTable[i].id) != i) return false;
  return true;
}
static_assert(type_rows_in_order(), "kTypeTable rows must follow the TypeId order");

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

}   // namespace

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

}   // namespace akview
