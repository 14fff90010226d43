// Builds a Model's name map through the compiled rule table (name_rules.hpp).
#include "core/names/name_map.hpp"

#include <algorithm>
#include <functional>

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

std::string_view NameMap::keep(std::string_view text) {
  constexpr size_t kBlock = size_t{1} << 20;
  if (block_used_ + text.size() > block_size_) {
    block_size_ = std::max(kBlock, text.size());
    blocks_.push_back(std::make_unique<char[]>(block_size_));
    block_used_ = 0;
  }
  char* at = blocks_.back().get() + block_used_;
  std::copy(text.begin(), text.end(), at);
  block_used_ += text.size();
  return {at, text.size()};
}

void NameMap::add(NameMapEntry entry, std::string_view canonical) {
  if (entry.mapped) entry.canonical = keep(canonical);
  entries.push_back(entry);
}

void NameMap::finish_index() {
  size_t n = 2;
  while (n < 2 * entries.size()) n *= 2;
  slots_.assign(n, 0);
  for (uint32_t e = 0; e < entries.size(); ++e) {
    if (!entries[e].mapped) continue;
    size_t i = std::hash<std::string_view>{}(entries[e].canonical) & (n - 1);
    while (slots_[i] != 0) {
      if (entries[slots_[i] - 1].canonical == entries[e].canonical) break;   // the first of equal names wins
      i = (i + 1) & (n - 1);
    }
    if (slots_[i] == 0) slots_[i] = e + 1;
  }
}

uint32_t NameMap::find(std::string_view canonical) const {
  if (slots_.empty()) return kNone;
  const size_t mask = slots_.size() - 1;
  for (size_t i = std::hash<std::string_view>{}(canonical) & mask; slots_[i] != 0; i = (i + 1) & mask)
    if (entries[slots_[i] - 1].canonical == canonical) return slots_[i] - 1;
  return kNone;
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
    std::string canonical;
    if (auto c = map_tensor_name(t, map.arch)) {
      e.mapped = true;
      canonical = std::move(c->name);
      e.role = c->role;
      e.note = c->note;
      e.rule = c->rule;
      e.layer = c->layer;
    } else {
      map.unmapped.push_back(i);
    }
    map.add(e, canonical);
  }
  map.finish_index();
  return map;
}

}  // namespace akview
