// `akview dump PATH TENSOR [--rows A:B] [--out FILE.npy|FILE.f32]`: dequantized values in numpy
// order, to the report (printed) or streamed to a real .npy / raw little-endian f32 file.
#include <fmt/format.h>

#include "core/decode/decode.hpp"
#include "core/decode/npy_writer.hpp"
#include "core/quote.hpp"
#include "ui/batch/commands.hpp"

namespace akview {

Result<DumpReport> make_dump(const Model& model, const DumpQuery& query) {
  auto index = find_tensor(model, query.tensor);
  if (!index) return index.error();
  const Tensor& t = model.tensors[*index];
  if (!can_decode(t.type) || (t.flags & kTensorUnsupported))
    return make_error(
        ErrorCode::unsupported, model.files[t.file].path, t.offset,
        fmt::format("tensor {}: values of type {} cannot be decoded", quote_name(t.name), type_info(t.type).name));
  auto [n_rows, n_cols] = tensor_rows_cols(model, t);
  auto range = parse_row_range(query.rows, n_rows);
  if (!range) return range.error();
  DumpReport r;
  r.name = t.name;
  r.type = type_info(t.type).name;
  auto shape = model.shape(t);
  r.shape.assign(shape.begin(), shape.end());
  r.row_begin = range->first;
  r.row_end = range->second;
  r.n_cols = n_cols;
  r.caveat = decode_caveat(t.type);
  const uint32_t i = *index;
  RowSource rows = [&model, i](int64_t r0, int64_t r1, float* out) {
    return decode_tensor_rows(model, i, r0, r1, out);
  };
  const uint64_t elems = static_cast<uint64_t>(r.row_end - r.row_begin) * static_cast<uint64_t>(n_cols);
  if (!query.out.empty()) {
    DumpOptions options;
    options.row_begin = r.row_begin;
    options.row_end = r.row_end;
    const bool npy = query.out.size() >= 4 && query.out.compare(query.out.size() - 4, 4, ".npy") == 0;
    Status s = npy ? write_npy(query.out, n_rows, n_cols, rows, shape, options)
                   : write_raw_f32(query.out, n_rows, n_cols, rows, options);
    if (!s) return std::move(s).error();
    r.out_path = query.out;
    r.bytes_written = elems * sizeof(float);
    return r;
  }
  if (elems > query.max_print_elems)
    return make_error(
        ErrorCode::usage, "", kNoOffset,
        fmt::format("{} values are too many to print; narrow with --rows or write them with --out FILE.npy", elems));
  r.values.resize(elems);
  if (elems) AKV_TRY(rows(r.row_begin, r.row_end, r.values.data()));
  return r;
}

}   // namespace akview
