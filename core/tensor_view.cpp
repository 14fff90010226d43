// make_tensor_view: a tensor's bytes as rows, with every span checked against its file.
#include "core/tensor_view.hpp"

#include <fmt/format.h>

#include "core/checked.hpp"

namespace akview {
namespace {

Error view_error(const Model& model, const Tensor& t, ErrorCode code, std::string message) {
  const std::string& file = t.file < model.files.size() ? model.files[t.file].path : model.path;
  return make_error(code, file, t.offset, fmt::format("tensor '{}': {}", t.name, message));
}

Result<std::span<const uint8_t>> companion_bytes(const Model& model, uint32_t index) {
  if (index == kNone) return std::span<const uint8_t>{};
  if (index >= model.tensors.size())
    return make_error(ErrorCode::not_found, model.path, kNoOffset, "companion tensor index out of range");
  const Tensor& c = model.tensors[index];
  auto bytes = model.data(c);
  if (bytes.size() != c.nbytes) return view_error(model, c, ErrorCode::out_of_bounds, "data lies outside its file");
  return bytes;
}

}   // namespace

Result<TensorView> make_tensor_view(const Model& model, const Tensor& t) {
  TensorView v;
  v.type = t.type;
  auto shape = model.shape(t);
  v.n_cols = shape.empty() ? 1 : shape.back();
  uint64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= static_cast<uint64_t>(shape[i]);
  v.n_rows = static_cast<int64_t>(rows);
  v.data = model.data(t);
  if (v.data.size() != t.nbytes) return view_error(model, t, ErrorCode::out_of_bounds, "data lies outside its file");
  if (t.file < model.files.size()) v.source_id = model.files[t.file].map.id();

  const TypeInfo& info = type_info(t.type);
  if (info.kind != TypeKind::composite) {
    if (v.n_cols % info.block_elems != 0)
      return view_error(
          model, t, ErrorCode::bad_shape,
          fmt::format("row of {} elements is not a multiple of the {}-element block", v.n_cols, info.block_elems));
    v.row_bytes = static_cast<uint64_t>(v.n_cols) / info.block_elems * info.block_bytes;
    auto need = checked_mul(v.row_bytes, rows);
    if (!need || *need != t.nbytes)
      return view_error(model, t, ErrorCode::size_mismatch, "byte size disagrees with shape x type");
    return v;
  }

  if (t.quant >= model.quants.size())
    return view_error(model, t, ErrorCode::schema, "composite tensor without quantization info");
  const QuantInfo& q = model.quants[t.quant];
  v.bits = q.bits;
  v.group_size = q.group_size;
  if (v.bits == 0 || v.group_size == 0 || v.n_cols % v.group_size != 0)
    return view_error(model, t, ErrorCode::bad_shape, "row length is not a multiple of the group size");
  v.row_bytes = static_cast<uint64_t>(v.n_cols) * v.bits / 8;
  if (rows != 0 && v.data.size() / rows != v.row_bytes)
    return view_error(model, t, ErrorCode::size_mismatch, "packed weight size disagrees with bits x shape");
  auto scales = companion_bytes(model, q.scales);
  if (!scales) return scales.error();
  auto biases = companion_bytes(model, q.biases);
  if (!biases) return biases.error();
  auto global = companion_bytes(model, q.global_scale);
  if (!global) return global.error();
  v.scales = *scales;
  v.biases = *biases;
  v.global_scale = *global;
  if (q.scales != kNone) v.scales_type = model.tensors[q.scales].type;
  if (q.biases != kNone) v.biases_type = model.tensors[q.biases].type;
  const uint64_t groups = rows * static_cast<uint64_t>(v.n_cols / v.group_size);
  const uint64_t scale_bytes = type_info(v.scales_type).block_bytes;
  if (v.scales.size() != groups * scale_bytes)
    return view_error(model, t, ErrorCode::size_mismatch, "scales do not hold one value per group");
  if (!v.biases.empty() && v.biases.size() != groups * type_info(v.biases_type).block_bytes)
    return view_error(model, t, ErrorCode::size_mismatch, "biases do not hold one value per group");
  return v;
}

}   // namespace akview
