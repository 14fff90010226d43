// `akview stats PATH [TENSOR...]`: value statistics and histograms, streamed per tensor.
#include <fmt/format.h>

#include "core/decode/decode.hpp"
#include "core/tensor_view.hpp"
#include "ui/batch/commands.hpp"

namespace akview {
namespace {

// A tensor that cannot be decoded is a row with a problem; a file that changed under the model
// (ErrorCode::truncated, core/fault_guard.hpp) fails the whole command: every later read would too.
Result<StatsRow> stats_for(const Model& model, uint32_t index, const StatsOptions& options) {
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
  if (!stats && stats.error().code == ErrorCode::truncated) return std::move(stats).error();
  if (!stats) row.problem = stats.error().to_string();
  else row.stats = std::move(*stats);
  return row;
}

}   // namespace

Result<RowStream<StatsRow>> stats_row_source(const Model& model, const std::vector<std::string>& names,
                                             const StatsOptions& options) {
  std::vector<uint32_t> picked;   // every name is resolved before the first row is made
  if (names.empty()) {
    for (uint32_t i = 0; i < model.tensors.size(); ++i)
      if (!(model.tensors[i].flags & kTensorCompanion)) picked.push_back(i);
  } else {
    TensorFinder finder(model);
    for (const auto& name : names) {
      auto index = finder.find(name);
      if (!index) return index.error();
      picked.push_back(*index);
    }
  }
  return RowStream<StatsRow>([&model, picked = std::move(picked), options](const RowSink<StatsRow>& sink) -> Status {
    for (uint32_t i : picked) {
      auto row = stats_for(model, i, options);
      if (!row) return std::move(row).error();
      sink(*row);
    }
    return Status();
  });
}

Result<std::vector<StatsRow>> make_stats_rows(const Model& model, const std::vector<std::string>& names,
                                              const StatsOptions& options) {
  auto source = stats_row_source(model, names, options);
  if (!source) return std::move(source).error();
  return collect_rows(*source);
}

}   // namespace akview
