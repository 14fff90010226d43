// `akview groups PATH TENSOR [--rows A:B]`: the quantization groups / blocks of a row range,
// computed lazily for those rows only.
#include <fmt/format.h>

#include "core/quote.hpp"
#include "core/tensor_view.hpp"
#include "ui/batch/commands.hpp"

namespace akview {

Result<GroupsReport> make_groups_report(const Model& model, const GroupsQuery& query) {
  auto index = find_tensor(model, query.tensor);
  if (!index) return index.error();
  const Tensor& t = model.tensors[*index];
  if (!has_groups(t.type))
    return make_error(ErrorCode::unsupported, model.files[t.file].path, t.offset,
                      fmt::format("tensor {} of type {} is not quantized in groups", quote_name(t.name), type_info(t.type).name));
  auto view = make_tensor_view(model, t);
  if (!view) return view.error();
  constexpr int64_t kAllRowsUpTo = 64, kDefaultRows = 16;
  std::string rows = query.rows;
  if (rows.empty() && view->n_rows > kAllRowsUpTo) rows = fmt::format("0:{}", kDefaultRows);
  auto range = parse_row_range(rows, view->n_rows);
  if (!range) return range.error();
  auto groups = list_groups(*view, range->first, range->second);
  if (!groups) return groups.error();
  GroupsReport r;
  r.name = t.name;
  r.type = type_info(t.type).name;
  r.bits = view->bits;
  r.group_size = view->group_size;
  r.row_begin = range->first;
  r.row_end = range->second;
  r.n_rows = view->n_rows;
  r.groups = std::move(*groups);
  return r;
}

}  // namespace akview
