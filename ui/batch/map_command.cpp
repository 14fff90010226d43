// `akview map PATH`: native -> canonical -> role for every tensor, and the extracted config with
// the key each value came from.
#include "core/names/model_config.hpp"
#include "core/names/name_map.hpp"
#include "ui/batch/commands.hpp"

namespace akview {

MapReport make_map_report(const Model& model) {
  MapReport r;
  r.path = model.path;
  if (auto config = extract_config(model)) r.config = std::move(*config);
  r.arch = r.config.arch;   // build_name_map's architecture (name_map_arch)
  r.rows = [&model, arch = r.arch](const RowSink<MapRow>& sink) {
    MapRow row;
    for (const Tensor& t : model.tensors) {
      if (t.flags & kTensorCompanion) continue;
      auto c = map_tensor_name(t, arch);
      row.native.assign(t.name);
      if (c) row.canonical = std::move(c->name);
      else row.canonical = std::nullopt;
      row.role = c ? c->role : std::string_view();
      row.note = c ? c->note : std::string_view();
      row.layer = c ? c->layer : -1;
      sink(row);
    }
    return Status();
  };
  return r;
}

}   // namespace akview
