// `akview tensors`: the tensor table, filtered (regex, inverse) and sorted by a column.
#include <algorithm>
#include <array>
#include <functional>
#include <regex>

#include <fmt/format.h>

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
      {"file", [](const TensorRow& a, const TensorRow& b) { return std::tie(a.file, a.offset) < std::tie(b.file, b.offset); }},
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
  std::vector<TensorRow> rows;
  rows.reserve(model.tensors.size());
  for (const auto& t : model.tensors) {
    if (!query.companions && (t.flags & kTensorCompanion)) continue;
    if (re) {
      bool hit = std::regex_search(t.name.begin(), t.name.end(), *re);
      if (hit == query.invert) continue;
    }
    rows.push_back(make_tensor_row(model, t));
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const TensorRow& a, const TensorRow& b) {
    return query.descending ? column->less(b, a) : column->less(a, b);
  });
  return rows;
}

}  // namespace akview
