// decode_rows: validates the view and the range, then dispatches once to the type's row decoder
// (decode_table.cpp). Validation is complete, so the decoders themselves never bounds-check; a file
// that shrinks under the mapping is caught by core/fault_guard.hpp around the dispatch.
#include "core/decode/decode.hpp"

#include <fmt/format.h>

#include "core/checked.hpp"
#include "core/decode/decode_table.hpp"
#include "core/fault_guard.hpp"

namespace akview {
namespace {

Error view_error(ErrorCode code, const TensorView& v, std::string message) {
  return make_error(code, "", kNoOffset, fmt::format("{} tensor: {}", type_info(v.type).name, message));
}

bool is_affine_param_type(TypeId t) { return t == TypeId::f16 || t == TypeId::bf16 || t == TypeId::f32; }

Status validate_composite(const TensorView& v, const decode::CompositeRule& rule, uint64_t rows) {
  if (v.bits >= 16 || !(rule.bits_mask & (1u << v.bits)))
    return view_error(ErrorCode::unsupported, v, fmt::format("{} bits per element is not supported", v.bits));
  if (v.group_size == 0 || v.group_size % 8 != 0 || (rule.group_size != 0 && v.group_size != rule.group_size))
    return view_error(ErrorCode::bad_shape, v, fmt::format("group size {} is not supported", v.group_size));
  const uint64_t cols = static_cast<uint64_t>(v.n_cols);
  if (cols % v.group_size != 0)
    return view_error(ErrorCode::bad_shape, v,
                      fmt::format("row of {} elements is not a multiple of the group size {}", cols, v.group_size));
  const auto row_bits = checked_mul(cols, v.bits);
  if (!row_bits || v.row_bytes != *row_bits / 8)
    return view_error(ErrorCode::size_mismatch, v, "packed row bytes disagree with bits x columns");
  const uint64_t groups = rows * (cols / v.group_size);   // rows * cols fits: checked by the caller
  if (rule.affine) {
    if (!is_affine_param_type(v.scales_type) || !is_affine_param_type(v.biases_type))
      return view_error(ErrorCode::unsupported, v, "affine scales and biases must be f16, bf16 or f32");
    const uint64_t scale_bytes = groups * type_info(v.scales_type).block_bytes;
    const uint64_t bias_bytes = groups * type_info(v.biases_type).block_bytes;
    if (v.scales.size() < scale_bytes)
      return view_error(ErrorCode::size_mismatch, v, "scales do not hold one value per group");
    if (v.biases.size() < bias_bytes)
      return view_error(ErrorCode::size_mismatch, v, "biases do not hold one value per group");
  } else {
    if (type_info(v.scales_type).block_bytes != 1 || type_info(v.scales_type).block_elems != 1)
      return view_error(ErrorCode::unsupported, v, "fp-mode scales must be one byte each");
    if (v.scales.size() < groups)
      return view_error(ErrorCode::size_mismatch, v, "scales do not hold one byte per group");
  }
  if (!v.global_scale.empty() && v.global_scale.size() != 4 && v.global_scale.size() != 4 * rows)
    return view_error(ErrorCode::size_mismatch, v, "global scale is neither one f32 nor one f32 per row");
  return {};
}

}   // namespace

bool can_decode(TypeId type) {
  if (static_cast<size_t>(type) >= static_cast<size_t>(TypeId::count_)) return false;
  return decode::decoder_row(type).decode != nullptr;
}

std::string_view decode_caveat(TypeId type) {
  if (static_cast<size_t>(type) >= static_cast<size_t>(TypeId::count_)) return {};
  return decode::decoder_row(type).caveat;
}

Status validate_view(const TensorView& v) {
  if (!can_decode(v.type)) return view_error(ErrorCode::unsupported, v, "values of this type cannot be decoded");
  if (v.n_rows < 0 || v.n_cols < 0) return view_error(ErrorCode::bad_shape, v, "negative dimension");
  const uint64_t rows = static_cast<uint64_t>(v.n_rows), cols = static_cast<uint64_t>(v.n_cols);
  if (!checked_mul(rows, cols) || !checked_mul(rows * cols, 4))
    return view_error(ErrorCode::overflow, v, "element count overflows");
  const TypeInfo& info = type_info(v.type);
  if (info.kind == TypeKind::composite) {
    AKV_TRY(validate_composite(v, decode::decoder_row(v.type).composite, rows));
  } else {
    if (cols % info.block_elems != 0)
      return view_error(
          ErrorCode::bad_shape, v,
          fmt::format("row of {} elements is not a multiple of the {}-element block", cols, info.block_elems));
    if (v.row_bytes != cols / info.block_elems * info.block_bytes)
      return view_error(ErrorCode::size_mismatch, v, "row bytes disagree with columns x type");
  }
  const auto need = checked_mul(rows, v.row_bytes);
  if (!need) return view_error(ErrorCode::overflow, v, "byte size overflows");
  if (v.data.size() < *need)
    return view_error(ErrorCode::out_of_bounds, v,
                      fmt::format("data holds {} bytes, {} rows need {}", v.data.size(), rows, *need));
  return {};
}

Status decode_rows(const TensorView& view, int64_t row_begin, int64_t row_end, float* out) {
  AKV_TRY(validate_view(view));
  if (row_begin < 0 || row_end < row_begin || row_end > view.n_rows)
    return view_error(ErrorCode::out_of_bounds, view,
                      fmt::format("row range [{}, {}) is outside [0, {})", row_begin, row_end, view.n_rows));
  if (row_end == row_begin || view.n_cols == 0) return {};
  if (out == nullptr) return view_error(ErrorCode::usage, view, "no output buffer");
  // The file may have shrunk since it was opened: check its size, then decode under the SIGBUS
  // guard (the decoders only read the view and write `out`, so the guard may jump out of them).
  AKV_TRY(check_view_mapped(view));
  const auto decode = decode::decoder_row(view.type).decode;
  return guard_reads([&] { decode(view, row_begin, row_end, out); });
}

}   // namespace akview
