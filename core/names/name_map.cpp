// Builds a Model's name map through the compiled rule table (name_rules.hpp).
#include "core/names/name_map.hpp"

#include <algorithm>
#include <climits>
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

NameMapEntry NameMapEntries::operator[](size_t i) const {
  const Row& r = rows_[i];
  NameMapEntry e;
  e.tensor = r.tensor;
  e.layer = r.layer;
  if (r.rule == kUnmapped) return e;
  e.mapped = true;
  e.rule = r.rule & ~kHasNote;
  const NameRule& rule = name_rules()[e.rule];
  e.role = rule.role;
  if (r.rule & kHasNote) e.note = rule.note;
  e.canonical = canonical(i);
  return e;
}

std::string_view NameMapEntries::canonical(size_t i) const {
  const Row& r = rows_[i];
  return r.rule == kUnmapped ? std::string_view() : std::string_view(blocks_[r.block].get() + r.at, r.size);
}

void NameMap::add(const NameMapEntry& entry) {
  NameMapEntries::Row row{entry.tensor, NameMapEntries::kUnmapped, static_cast<int32_t>(entry.layer), 0, 0, 0};
  if (entry.mapped) {
    row.rule = entry.rule | (entry.note.empty() ? 0 : NameMapEntries::kHasNote);
    constexpr size_t kBlock = size_t{1} << 20;
    const std::string_view text = entry.canonical;
    if (entries.blocks_.empty() || block_used_ + text.size() > block_size_) {
      block_size_ = std::max(kBlock, text.size());
      entries.blocks_.push_back(std::make_unique<char[]>(block_size_));
      block_used_ = 0;
    }
    std::copy(text.begin(), text.end(), entries.blocks_.back().get() + block_used_);
    row.block = static_cast<uint32_t>(entries.blocks_.size() - 1);
    row.at = static_cast<uint32_t>(block_used_);
    row.size = static_cast<uint32_t>(text.size());
    block_used_ += text.size();
  }
  entries.rows_.push_back(row);
}

void NameMap::finish_index() {
  size_t n = 2;
  while (n < 2 * entries.size()) n *= 2;
  slots_.assign(n, 0);
  for (uint32_t e = 0; e < entries.size(); ++e) {
    if (!entries.mapped(e)) continue;
    const std::string_view name = entries.canonical(e);
    size_t i = std::hash<std::string_view>{}(name) & (n - 1);
    while (slots_[i] != 0) {
      if (entries.canonical(slots_[i] - 1) == name) break;   // the first of equal names wins
      i = (i + 1) & (n - 1);
    }
    if (slots_[i] == 0) slots_[i] = e + 1;
  }
}

uint32_t NameMap::find(std::string_view canonical) const {
  if (slots_.empty()) return kNone;
  const size_t mask = slots_.size() - 1;
  for (size_t i = std::hash<std::string_view>{}(canonical)&mask; slots_[i] != 0; i = (i + 1) & mask)
    if (entries.canonical(slots_[i] - 1) == canonical) return slots_[i] - 1;
  return kNone;
}

NameMap build_name_map(const Model& model, std::string_view arch) {
  NameMap map;
  map.arch = arch.empty() ? name_map_arch(model) : std::string(arch);
  map.reserve(model.tensors.size());
  for (uint32_t i = 0; i < model.tensors.size(); ++i) {
    const Tensor& t = model.tensors[i];
    if (t.flags & kTensorCompanion) continue;
    NameMapEntry e;
    e.tensor = i;
    auto c = map_tensor_name(t, map.arch);
    // A layer number past 32 bits is no real model's: such a name stays unmapped (rows keep 32 bits).
    if (c && (c->layer > INT32_MAX || c->layer < INT32_MIN)) c.reset();
    if (c) {
      e.mapped = true;
      e.canonical = c->name;
      e.role = c->role;
      e.note = c->note;
      e.rule = c->rule;
      e.layer = c->layer;
    } else {
      map.unmapped.push_back(i);
    }
    map.add(e);
  }
  map.finish_index();
  return map;
}

}   // namespace akview
