// `akview groups PATH TENSOR [--rows A:B]`: the quantization groups / blocks of a row range,
// computed lazily for those rows only.
#include <algorithm>

#include <fmt/format.h>

#include "core/quote.hpp"
#include "core/tensor_view.hpp"
#include "ui/batch/commands.hpp"

namespace akview {

Result<GroupsStream> groups_stream(const Model& model, const GroupsQuery& query) {
  auto index = find_tensor(model, query.tensor);
  if (!index) return index.error();
  const Tensor& t = model.tensors[*index];
  if (!has_groups(t.type))
    return make_error(
        ErrorCode::unsupported, model.files[t.file].path, t.offset,
        fmt::format("tensor {} of type {} is not quantized in groups", quote_name(t.name), type_info(t.type).name));
  auto view = make_tensor_view(model, t);
  if (!view) return view.error();
  constexpr int64_t kAllRowsUpTo = 64, kDefaultRows = 16;
  std::string rows = query.rows;
  if (rows.empty() && view->n_rows > kAllRowsUpTo) rows = fmt::format("0:{}", kDefaultRows);
  auto range = parse_row_range(rows, view->n_rows);
  if (!range) return range.error();
  GroupsStream r;
  r.report.name = t.name;
  r.report.type = type_info(t.type).name;
  r.report.bits = view->bits;
  r.report.group_size = view->group_size;
  r.report.row_begin = range->first;
  r.report.row_end = range->second;
  r.report.n_rows = view->n_rows;
  r.groups = [view = *view, begin = range->first, end = range->second](const RowSink<QuantGroup>& sink) -> Status {
    constexpr int64_t kRowsPerStep = 64;   // groups listed a few rows at a time
    for (int64_t r0 = begin; r0 < end; r0 += kRowsPerStep) {
      auto groups = list_groups(view, r0, std::min(end, r0 + kRowsPerStep));
      if (!groups) return std::move(groups).error();
      for (const auto& g : *groups) sink(g);
    }
    return Status();
  };
  return r;
}

Result<GroupsReport> make_groups_report(const Model& model, const GroupsQuery& query) {
  auto stream = groups_stream(model, query);
  if (!stream) return std::move(stream).error();
  auto groups = collect_rows(stream->groups);
  if (!groups) return std::move(groups).error();
  stream->report.groups = std::move(*groups);
  return std::move(stream->report);
}

}   // namespace akview
