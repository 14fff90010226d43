// `akview map PATH`: native -> canonical -> role for every tensor, and the extracted config with
// the key each value came from.
#include "core/names/name_map.hpp"
#include "ui/batch/commands.hpp"

namespace akview {

MapReport make_map_report(const Model& model) {
  MapReport r;
  r.path = model.path;
  NameMap map = build_name_map(model);
  r.arch = map.arch;
  for (const auto& e : map.entries) {
    MapRow row;
    row.native = model.tensors[e.tensor].name;
    if (e.mapped) row.canonical = e.canonical;
    row.role = e.role;
    row.note = e.note;
    row.layer = e.layer;
    r.rows.push_back(std::move(row));
  }
  r.unmapped = map.unmapped.size();
  auto config = extract_config(model);
  if (config) r.config = std::move(*config);
  return r;
}

}  // namespace akview
