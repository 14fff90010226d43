// `akview tensors`: the tensor table, filtered (regex, inverse) and sorted by a column. Rows are
// made one at a time from the Model (a million-tensor listing holds one index per shown tensor when
// sorted, nothing when listed in the file's order); canonical names are mapped as each row is made.
#include <algorithm>
#include <array>
#include <memory>
#include <regex>

#include <fmt/format.h>

#include "core/names/name_map.hpp"
#include "ui/batch/commands.hpp"

namespace akview {
namespace {

using TensorLess = bool (*)(const Model&, const Tensor&, const Tensor&);

struct SortColumn {
  std::string_view name;
  TensorLess less;   // nullptr: the model's order
};

double bits_per_weight(const Model& model, const Tensor& t) {
  if (t.quant >= model.quants.size()) return type_bits_per_weight(t.type);
  const QuantInfo& q = model.quants[t.quant];
  uint64_t all_bytes = t.nbytes;   // the logical tensor's weight plus its companions
  for (uint32_t c : {q.scales, q.biases, q.global_scale})
    if (c < model.tensors.size()) all_bytes += model.tensors[c].nbytes;
  const uint64_t n = model.n_elements(t);
  return n ? 8.0 * all_bytes / n : 0.0;
}

const std::array<SortColumn, 8>& sort_columns() {
  static const std::array<SortColumn, 8> kColumns = {{
      {"file", nullptr},
      {"name", [](const Model&, const Tensor& a, const Tensor& b) { return natural_less(a.name, b.name); }},
      {"type",
       [](const Model&, const Tensor& a, const Tensor& b) { return type_info(a.type).name < type_info(b.type).name; }},
      {"shape",
       [](const Model& m, const Tensor& a, const Tensor& b) {
         auto sa = m.shape(a), sb = m.shape(b);
         return std::lexicographical_compare(sa.begin(), sa.end(), sb.begin(), sb.end());
       }},
      {"params", [](const Model& m, const Tensor& a, const Tensor& b) { return m.n_elements(a) < m.n_elements(b); }},
      {"bytes", [](const Model&, const Tensor& a, const Tensor& b) { return a.nbytes < b.nbytes; }},
      {"offset", [](const Model&, const Tensor& a, const Tensor& b) { return a.offset < b.offset; }},
      {"bpw",
       [](const Model& m, const Tensor& a, const Tensor& b) { return bits_per_weight(m, a) < bits_per_weight(m, b); }},
  }};
  return kColumns;
}

// What a query shows: the filter, and the order when it is not the model's own.
struct TensorPlan {
  const Model* model = nullptr;
  std::string arch;   // for canonical names (build_name_map's)
  std::optional<std::regex> re;
  bool invert = false;
  bool companions = true;
  bool in_model_order = true;    // rows straight from model.tensors
  std::vector<uint32_t> order;   // otherwise: the tensors shown, in output order

  // The tensor's canonical name when the query shows it (nullopt in `shown` when it does not).
  bool shows(const Tensor& t, std::optional<CanonicalName>& canonical) const {
    if (!companions && (t.flags & kTensorCompanion)) return false;
    canonical = map_tensor_name(t, arch);
    if (!re) return true;
    const bool hit =
        std::regex_search(t.name.begin(), t.name.end(), *re) || (canonical && std::regex_search(canonical->name, *re));
    return hit != invert;
  }
};

// The model's order puts each scale/bias companion right after its logical tensor
// (order_companions); a sort moves a logical tensor together with the companions beneath it. A
// companion whose logical tensor was filtered out is a group of its own.
std::vector<uint32_t> sorted_order(const TensorPlan& plan, std::vector<uint32_t> shown, const SortColumn& column,
                                   bool descending) {
  const Model& model = *plan.model;
  auto owns = [&](uint32_t owner, uint32_t c) {
    const Tensor& t = model.tensors[owner];
    if ((t.flags & kTensorCompanion) || t.quant >= model.quants.size()) return false;
    const QuantInfo& q = model.quants[t.quant];
    return c == q.scales || c == q.biases || c == q.global_scale;
  };
  struct Group {
    size_t begin, end;   // shown[begin, end): the leading tensor and its companions
  };
  std::vector<Group> groups;
  for (size_t k = 0; k < shown.size(); ++k) {
    if (!groups.empty() && (model.tensors[shown[k]].flags & kTensorCompanion) &&
        owns(shown[groups.back().begin], shown[k]))
      groups.back().end = k + 1;
    else groups.push_back({k, k + 1});
  }
  if (!column.less) {
    if (descending) std::reverse(groups.begin(), groups.end());   // storage order, reversed by group
  } else {
    std::stable_sort(groups.begin(), groups.end(), [&](const Group& a, const Group& b) {
      const Tensor &ta = model.tensors[shown[a.begin]], &tb = model.tensors[shown[b.begin]];
      return descending ? column.less(model, tb, ta) : column.less(model, ta, tb);
    });
  }
  std::vector<uint32_t> order;
  order.reserve(shown.size());
  for (const Group& g : groups)
    for (size_t k = g.begin; k < g.end; ++k) order.push_back(shown[k]);
  return order;
}

// One tensor's row, written into `row` (whose strings keep their capacity).
void fill_tensor_row(const Model& model, const Tensor& t, TensorRow& row) {
  row.name.assign(t.name);
  row.canonical.reset();
  row.type.assign(type_info(t.type).name);
  auto shape = model.shape(t);
  row.shape.assign(shape.begin(), shape.end());
  row.parameters = model.n_elements(t);
  row.nbytes = t.nbytes;
  const bool composite = t.quant < model.quants.size();
  row.bits = composite ? model.quants[t.quant].bits : 0;
  row.group_size = composite ? model.quants[t.quant].group_size : 0;
  row.bits_per_weight = bits_per_weight(model, t);
  if (t.file < model.files.size()) row.file.assign(model.files[t.file].path);
  else row.file.clear();
  row.offset = t.offset;
  row.companion = t.flags & kTensorCompanion;
  row.unsupported = t.flags & kTensorUnsupported;
}

}   // namespace

TensorRow make_tensor_row(const Model& model, const Tensor& t) {
  TensorRow row;
  fill_tensor_row(model, t, row);
  return row;
}

Result<RangedRows<TensorRow>> tensor_row_source(const Model& model, const TensorQuery& query) {
  const SortColumn* column = nullptr;
  for (const auto& c : sort_columns())
    if (c.name == query.sort) column = &c;
  if (!column) {
    std::string names;
    for (const auto& c : sort_columns()) names += fmt::format("{}{}", names.empty() ? "" : ", ", c.name);
    return make_error(ErrorCode::usage, "", kNoOffset,
                      fmt::format("unknown sort column '{}' (use one of: {})", query.sort, names));
  }
  auto plan = std::make_shared<TensorPlan>();
  plan->model = &model;
  plan->invert = query.invert;
  plan->companions = query.companions;
  if (!query.filter.empty()) {
    try {
      plan->re.emplace(query.filter, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return make_error(ErrorCode::usage, "", kNoOffset,
                        fmt::format("bad --filter regex '{}': {}", query.filter, e.what()));
    }
  }
  plan->arch = name_map_arch(model);
  plan->in_model_order = !column->less && !query.descending;
  if (!plan->in_model_order) {
    std::vector<uint32_t> shown;
    std::optional<CanonicalName> canonical;
    for (uint32_t i = 0; i < model.tensors.size(); ++i)
      if (plan->shows(model.tensors[i], canonical)) shown.push_back(i);
    plan->order = sorted_order(*plan, std::move(shown), *column, query.descending);
  }
  RangedRows<TensorRow> out;
  out.positions = plan->in_model_order ? model.tensors.size() : plan->order.size();
  // Positions are tensors (model order, filtered as they come) or entries of the sorted order. Each
  // call keeps its own row, so two ranges may be made at once (the plan and the model are read only).
  out.range = [plan = std::shared_ptr<const TensorPlan>(std::move(plan))](size_t begin, size_t end,
                                                                          const RowSink<TensorRow>& sink) {
    const Model& model = *plan->model;
    TensorRow row;   // reused: its strings keep their capacity from row to row
    std::optional<CanonicalName> canonical;
    auto emit = [&](const Tensor& t) {
      fill_tensor_row(model, t, row);
      if (canonical) row.canonical = std::move(canonical->name);
      sink(row);
    };
    for (size_t k = begin; k < end; ++k) {
      if (plan->in_model_order) {
        const Tensor& t = model.tensors[k];
        if (plan->shows(t, canonical)) emit(t);
      } else {
        const Tensor& t = model.tensors[plan->order[k]];
        canonical = map_tensor_name(t, plan->arch);
        emit(t);
      }
    }
    return Status();
  };
  return out;
}

Result<std::vector<TensorRow>> make_tensor_rows(const Model& model, const TensorQuery& query) {
  auto source = tensor_row_source(model, query);
  if (!source) return std::move(source).error();
  return collect_rows(source->stream());
}

}   // namespace akview
