// Builds a Model's name map through the compiled rule table (name_rules.hpp).
#include "core/names/name_map.hpp"

#include "core/names/model_config.hpp"
#include "core/names/name_rules.hpp"

namespace akview {

NameMap build_name_map(const Model& model, std::string_view arch) {
  NameMap map;
  if (arch.empty()) {
    auto config = extract_config(model);
    if (config) map.arch = config->arch;
  } else {
    map.arch = std::string(arch);
  }
  const NameMatcher& matcher = name_matcher();
  map.entries.reserve(model.tensors.size());
  for (uint32_t i = 0; i < model.tensors.size(); ++i) {
    const Tensor& t = model.tensors[i];
    if (t.flags & kTensorCompanion) continue;
    NameMapEntry e;
    e.tensor = i;
    if (auto c = matcher.match(t.name, map.arch)) {
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
