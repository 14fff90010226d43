// `akview tensors`: the tensor table, filtered (regex, inverse) and sorted by a column.
#include <algorithm>
#include <array>
#include <functional>
#include <regex>

#include <fmt/format.h>

#include "core/names/name_map.hpp"
#include "ui/batch/commands.hpp"

namespace akview {
namespace {

using RowLess = std::function<bool(const TensorRow&, const TensorRow&)>;

struct SortColumn {
  std::string_view name;
  RowLess less;
};

const std::array<SortColumn, 8>& sort_columns() {
  static const std::array<SortColumn, 8> kColumns = {{
      {"file", nullptr},   // the model's order, kept as is (make_tensor_rows)
      {"name", [](const TensorRow& a, const TensorRow& b) { return natural_less(a.name, b.name); }},
      {"type", [](const TensorRow& a, const TensorRow& b) { return a.type < b.type; }},
      {"shape", [](const TensorRow& a, const TensorRow& b) { return a.shape < b.shape; }},
      {"params", [](const TensorRow& a, const TensorRow& b) { return a.parameters < b.parameters; }},
      {"bytes", [](const TensorRow& a, const TensorRow& b) { return a.nbytes < b.nbytes; }},
      {"offset", [](const TensorRow& a, const TensorRow& b) { return a.offset < b.offset; }},
      {"bpw", [](const TensorRow& a, const TensorRow& b) { return a.bits_per_weight < b.bits_per_weight; }},
  }};
  return kColumns;
}

}  // namespace

TensorRow make_tensor_row(const Model& model, const Tensor& t) {
  TensorRow row;
  row.name = t.name;
  const TypeInfo& info = type_info(t.type);
  row.type = info.name;
  auto shape = model.shape(t);
  row.shape.assign(shape.begin(), shape.end());
  row.parameters = model.n_elements(t);
  row.nbytes = t.nbytes;
  if (t.quant < model.quants.size()) {
    const QuantInfo& q = model.quants[t.quant];
    row.bits = q.bits;
    row.group_size = q.group_size;
    uint64_t all_bytes = t.nbytes;   // the logical tensor's weight plus its companions
    for (uint32_t c : {q.scales, q.biases, q.global_scale})
      if (c < model.tensors.size()) all_bytes += model.tensors[c].nbytes;
    row.bits_per_weight = row.parameters ? 8.0 * all_bytes / row.parameters : 0.0;
  } else {
    row.bits_per_weight = type_bits_per_weight(t.type);
  }
  row.file = t.file < model.files.size() ? model.files[t.file].path : std::string();
  row.offset = t.offset;
  row.companion = t.flags & kTensorCompanion;
  row.unsupported = t.flags & kTensorUnsupported;
  return row;
}

Result<std::vector<TensorRow>> make_tensor_rows(const Model& model, const TensorQuery& query) {
  const SortColumn* column = nullptr;
  for (const auto& c : sort_columns())
    if (c.name == query.sort) column = &c;
  if (!column) {
    std::string names;
    for (const auto& c : sort_columns()) names += fmt::format("{}{}", names.empty() ? "" : ", ", c.name);
    return make_error(ErrorCode::usage, "", kNoOffset, fmt::format("unknown sort column '{}' (use one of: {})", query.sort, names));
  }
  std::optional<std::regex> re;
  if (!query.filter.empty()) {
    try {
      re.emplace(query.filter, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return make_error(ErrorCode::usage, "", kNoOffset, fmt::format("bad --filter regex '{}': {}", query.filter, e.what()));
    }
  }
  NameMap map = build_name_map(model);
  std::vector<const std::string*> canonical(model.tensors.size(), nullptr);
  for (const auto& e : map.entries)
    if (e.mapped) canonical[e.tensor] = &e.canonical;
  std::vector<TensorRow> rows;
  std::vector<uint32_t> tensor_of;   // rows[k] shows model.tensors[tensor_of[k]]
  rows.reserve(model.tensors.size());
  tensor_of.reserve(model.tensors.size());
  for (uint32_t i = 0; i < model.tensors.size(); ++i) {
    const Tensor& t = model.tensors[i];
    if (!query.companions && (t.flags & kTensorCompanion)) continue;
    if (re) {
      bool hit = std::regex_search(t.name.begin(), t.name.end(), *re) ||
                 (canonical[i] && std::regex_search(*canonical[i], *re));
      if (hit == query.invert) continue;
    }
    rows.push_back(make_tensor_row(model, t));
    tensor_of.push_back(i);
    if (canonical[i]) rows.back().canonical = *canonical[i];
  }

  // The model's order puts each scale/bias companion right after its logical tensor
  // (order_companions); a sort moves a logical tensor together with the companions beneath it. A
  // companion whose logical tensor was filtered out is a group of its own.
  auto owns = [&](uint32_t owner, uint32_t c) {
    const Tensor& t = model.tensors[owner];
    if ((t.flags & kTensorCompanion) || t.quant >= model.quants.size()) return false;
    const QuantInfo& q = model.quants[t.quant];
    return c == q.scales || c == q.biases || c == q.global_scale;
  };
  struct Group {
    size_t begin, end;   // rows[begin, end): the leading row and its companions
  };
  std::vector<Group> groups;
  for (size_t k = 0; k < rows.size(); ++k) {
    if (!groups.empty() && rows[k].companion && owns(tensor_of[groups.back().begin], tensor_of[k]))
      groups.back().end = k + 1;
    else
      groups.push_back({k, k + 1});
  }
  if (column->name == "file") {
    // Storage order is the model's order (each companion beneath its tensor): no re-sort.
    if (query.descending) std::reverse(groups.begin(), groups.end());
  } else {
    std::stable_sort(groups.begin(), groups.end(), [&](const Group& a, const Group& b) {
      const TensorRow &ra = rows[a.begin], &rb = rows[b.begin];
      return query.descending ? column->less(rb, ra) : column->less(ra, rb);
    });
  }
  std::vector<TensorRow> sorted;
  sorted.reserve(rows.size());
  for (const Group& g : groups)
    for (size_t k = g.begin; k < g.end; ++k) sorted.push_back(std::move(rows[k]));
  return sorted;
}

}  // namespace akview
