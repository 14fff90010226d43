// The region-kind names (one row per RegionKind).
#include "core/layout/region.hpp"

#include <array>

namespace akview {
namespace {

struct KindRow {
  RegionKind kind;
  std::string_view name;
};
constexpr std::array kRegionKinds = {
    KindRow{RegionKind::header, "header"},
    KindRow{RegionKind::magic, "magic"},
    KindRow{RegionKind::version, "version"},
    KindRow{RegionKind::count, "count"},
    KindRow{RegionKind::length, "length"},
    KindRow{RegionKind::json, "json"},
    KindRow{RegionKind::json_syntax, "json_syntax"},
    KindRow{RegionKind::entry, "entry"},
    KindRow{RegionKind::metadata, "metadata"},
    KindRow{RegionKind::kv, "kv"},
    KindRow{RegionKind::key, "key"},
    KindRow{RegionKind::value_type, "value_type"},
    KindRow{RegionKind::value, "value"},
    KindRow{RegionKind::array, "array"},
    KindRow{RegionKind::elements, "elements"},
    KindRow{RegionKind::tensor_infos, "tensor_infos"},
    KindRow{RegionKind::tensor_info, "tensor_info"},
    KindRow{RegionKind::name, "name"},
    KindRow{RegionKind::dims, "dims"},
    KindRow{RegionKind::type, "type"},
    KindRow{RegionKind::offset, "offset"},
    KindRow{RegionKind::padding, "padding"},
    KindRow{RegionKind::data, "data"},
    KindRow{RegionKind::tensor, "tensor"},
    KindRow{RegionKind::companion, "companion"},
    KindRow{RegionKind::storage, "storage"},
    KindRow{RegionKind::record, "record"},
    KindRow{RegionKind::record_data, "record_data"},
    KindRow{RegionKind::central_directory, "central_directory"},
    KindRow{RegionKind::directory_entry, "directory_entry"},
    KindRow{RegionKind::end_record, "end_record"},
    KindRow{RegionKind::pickle, "pickle"},
    KindRow{RegionKind::opcode, "opcode"},
    KindRow{RegionKind::text, "text"},
    KindRow{RegionKind::gap, "gap"},
    KindRow{RegionKind::overlap, "overlap"},
    KindRow{RegionKind::shared, "shared"},
    KindRow{RegionKind::failure, "failure"},
};
static_assert(kRegionKinds.size() == static_cast<size_t>(RegionKind::count_), "one row per RegionKind");

constexpr bool kinds_in_order() {
  for (size_t i = 0; i < kRegionKinds.size(); ++i)
    if (static_cast<size_t>(kRegionKinds[i].kind) != i) return false;
  return true;
}
static_assert(kinds_in_order(), "kRegionKinds rows follow the RegionKind order");

}   // namespace

std::string_view region_kind_name(RegionKind kind) { return kRegionKinds[static_cast<size_t>(kind)].name; }

}   // namespace akview
