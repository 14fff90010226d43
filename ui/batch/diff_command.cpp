// `akview diff A B`: tensor by tensor through canonical names: missing on either side, shape and
// type changes, and the value error of A against B (B is the reference).
#include "ui/batch/commands.hpp"

namespace akview {
namespace {

// One side of a pair; an expert's slice of a stacked MoE tensor is named "name[E]" with the slice's shape.
void describe(const Model& m, uint32_t index, int64_t expert, std::optional<std::string>& name,
              std::optional<std::string>& type, std::optional<std::vector<int64_t>>& shape) {
  if (index == kNone) return;
  const Tensor& t = m.tensors[index];
  name = std::string(t.name) + (expert >= 0 ? "[" + std::to_string(expert) + "]" : "");
  type = std::string(type_info(t.type).name);
  auto s = m.shape(t);
  shape = std::vector<int64_t>(s.begin() + (expert >= 0 && !s.empty() ? 1 : 0), s.end());
}

DiffRow make_diff_row(const Model& a, const Model& b, const TensorDiff& row) {
  DiffRow out;
  out.key = row.key;
  out.canonical = row.canonical;
  describe(a, row.a, row.a_expert, out.name_a, out.type_a, out.shape_a);
  describe(b, row.b, row.b_expert, out.name_b, out.type_b, out.shape_b);
  out.shape_differs = row.shape_differs;
  out.type_differs = row.type_differs;
  out.note = row.note;
  if (row.has_values) out.error = row.error;
  out.value_problem = row.value_problem;
  return out;
}

// The diff's rows as a source: each pair compared (values too when `options` asks) as it is printed.
RowStream<DiffRow> diff_rows(const Model& a, const Model& b, const DiffOptions& options) {
  return [&a, &b, options](const RowSink<DiffRow>& sink) {
    diff_models(a, b, options, [&](const TensorDiff& d) { sink(make_diff_row(a, b, d)); });
    return Status();
  };
}

}   // namespace

DiffTableReport make_diff_report(const Model& a, const Model& b, const DiffOptions& options) {
  DiffTableReport r;
  r.path_a = a.path;
  r.path_b = b.path;
  DiffOptions structure;   // names, shapes and types: no values, no progress
  structure.decode = options.decode;
  r.pairs = diff_rows(a, b, structure);
  r.rows = diff_rows(a, b, options);
  return r;
}

}   // namespace akview
