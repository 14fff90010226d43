// `akview explain PATH TENSOR ROW COL`: the group holding one element, dequantized step by step
// (core/explain), with the steps' offsets made absolute in the files that hold each span.
#include <fmt/format.h>

#include "core/decode/decode.hpp"
#include "core/quote.hpp"
#include "core/tensor_view.hpp"
#include "ui/batch/commands.hpp"
#include "ui/batch/explain_report.hpp"

namespace akview {

Result<ExplainReport> make_explain_report(const Model& model, const ExplainQuery& query) {
  auto index = find_tensor(model, query.tensor);
  if (!index) return index.error();
  const Tensor& t = model.tensors[*index];
  const std::string& file = model.files[t.file].path;
  if (!can_decode(t.type) || (t.flags & kTensorUnsupported))
    return make_error(
        ErrorCode::unsupported, file, t.offset,
        fmt::format("tensor {}: values of type {} cannot be decoded", quote_name(t.name), type_info(t.type).name));
  if (t.flags & kTensorNonContiguous)
    return make_error(
        ErrorCode::unsupported, file, t.offset,
        fmt::format("tensor {} is a strided view of a shared storage; explain the tensor that owns the storage",
                    quote_name(t.name)));
  auto view = make_tensor_view(model, t);
  if (!view) return view.error();
  SpanOrigins origins;
  origins.data = t.offset;
  if (t.quant != kNone) {
    const QuantInfo& q = model.quants[t.quant];
    if (q.scales != kNone) origins.scales = model.tensors[q.scales].offset;
    if (q.biases != kNone) origins.biases = model.tensors[q.biases].offset;
    if (q.global_scale != kNone) origins.global_scale = model.tensors[q.global_scale].offset;
  }
  auto e = explain_element(*view, query.row, query.col, origins);
  if (!e) {
    Error err = std::move(e).error();
    if (err.file.empty()) err.file = file;
    if (err.code == ErrorCode::out_of_bounds)
      err.message = fmt::format("tensor {} ({} x {}): {}", quote_name(t.name), view->n_rows, view->n_cols, err.message);
    return err;
  }
  ExplainReport r;
  r.name = t.name;
  r.type = type_info(t.type).name;
  r.file = file;
  r.explanation = std::move(*e);
  return r;
}

}   // namespace akview
