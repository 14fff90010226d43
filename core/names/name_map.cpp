// Builds a Model's name map through the compiled rule table (name_rules.hpp).
#include "core/names/name_map.hpp"

#include "core/names/model_config.hpp"
#include "core/names/name_rules.hpp"

namespace akview {

std::string name_map_arch(const Model& model) {
  auto config = extract_config(model);
  return config ? config->arch : std::string();
}

std::optional<CanonicalName> map_tensor_name(const Tensor& t, std::string_view arch) {
  if (t.flags & kTensorCompanion) return std::nullopt;
  return name_matcher().match(t.name, arch);
}

NameMap build_name_map(const Model& model, std::string_view arch) {
  NameMap map;
  map.arch = arch.empty() ? name_map_arch(model) : std::string(arch);
  map.entries.reserve(model.tensors.size());
  for (uint32_t i = 0; i < model.tensors.size(); ++i) {
    const Tensor& t = model.tensors[i];
    if (t.flags & kTensorCompanion) continue;
    NameMapEntry e;
    e.tensor = i;
    if (auto c = map_tensor_name(t, map.arch)) {
      e.mapped = true;
      e.canonical = std::move(c->name);
      e.role = c->role;
      e.note = c->note;
      e.rule = c->rule;
      e.layer = c->layer;
      map.by_canonical.emplace(e.canonical, static_cast<uint32_t>(map.entries.size()));
    } else {
      map.unmapped.push_back(i);
    }
    map.entries.push_back(std::move(e));
  }
  return map;
}

}  // namespace akview
