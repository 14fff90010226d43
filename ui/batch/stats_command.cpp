// `akview stats PATH [TENSOR...]`: value statistics and histograms, streamed per tensor.
#include <fmt/format.h>

#include "core/decode/decode.hpp"
#include "core/tensor_view.hpp"
#include "ui/batch/commands.hpp"

namespace akview {
namespace {

StatsRow stats_for(const Model& model, uint32_t index, const StatsOptions& options) {
  const Tensor& t = model.tensors[index];
  StatsRow row;
  row.name = t.name;
  row.type = type_info(t.type).name;
  auto shape = model.shape(t);
  row.shape.assign(shape.begin(), shape.end());
  row.caveat = decode_caveat(t.type);
  if (!can_decode(t.type) || (t.flags & (kTensorUnsupported | kTensorNonContiguous))) {
    row.problem = (t.flags & kTensorNonContiguous) ? "non-contiguous view (stats of its storage tensor cover it)"
                                                    : fmt::format("values of type {} cannot be decoded", row.type);
    return row;
  }
  auto view = make_tensor_view(model, t);
  if (!view) {
    row.problem = view.error().to_string();
    return row;
  }
  auto stats = compute_stats(*view, options);
  if (!stats) row.problem = stats.error().to_string();
  else row.stats = std::move(*stats);
  return row;
}

}  // namespace

Result<std::vector<StatsRow>> make_stats_rows(const Model& model, const std::vector<std::string>& names,
                                              const StatsOptions& options) {
  std::vector<StatsRow> rows;
  if (names.empty()) {
    for (uint32_t i = 0; i < model.tensors.size(); ++i)
      if (!(model.tensors[i].flags & kTensorCompanion)) rows.push_back(stats_for(model, i, options));
    return rows;
  }
  TensorFinder finder(model);
  for (const auto& name : names) {
    auto index = finder.find(name);
    if (!index) return index.error();
    rows.push_back(stats_for(model, *index, options));
  }
  return rows;
}

}  // namespace akview
