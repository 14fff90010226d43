// `akview diff A B`: tensor by tensor through canonical names: missing on either side, shape and
// type changes, and the value error of A against B (B is the reference).
#include "ui/batch/commands.hpp"

namespace akview {
namespace {

void describe(const Model& m, uint32_t index, std::optional<std::string>& name, std::optional<std::string>& type,
              std::optional<std::vector<int64_t>>& shape) {
  if (index == kNone) return;
  const Tensor& t = m.tensors[index];
  name = std::string(t.name);
  type = std::string(type_info(t.type).name);
  auto s = m.shape(t);
  shape = std::vector<int64_t>(s.begin(), s.end());
}

}  // namespace

DiffTableReport make_diff_report(const Model& a, const Model& b, const DiffOptions& options) {
  DiffReport d = diff_models(a, b, options);
  DiffTableReport r;
  r.path_a = a.path;
  r.path_b = b.path;
  r.only_a = d.only_a;
  r.only_b = d.only_b;
  r.shape_changes = d.shape_changes;
  r.type_changes = d.type_changes;
  r.cancelled = d.cancelled;
  for (const auto& row : d.rows) {
    DiffRow out;
    out.key = row.key;
    out.canonical = row.canonical;
    describe(a, row.a, out.name_a, out.type_a, out.shape_a);
    describe(b, row.b, out.name_b, out.type_b, out.shape_b);
    out.shape_differs = row.shape_differs;
    out.type_differs = row.type_differs;
    out.note = row.note;
    if (row.has_values) out.error = row.error;
    out.value_problem = row.value_problem;
    r.rows.push_back(std::move(out));
  }
  return r;
}

}  // namespace akview
