// .npy v1.0 / raw f32 writers over decode_rows (NumPy's format spec: magic "\x93NUMPY", version 1.0,
// u16 LE header length, a Python dict literal padded with spaces to a 64-byte boundary, ending '\n').
#include "core/decode/npy_writer.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "core/decode/decode.hpp"

namespace akview {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

Status write_rows(const std::string& path, int64_t n_cols_signed, const RowSource& rows, const std::string& header,
                  int64_t r0, int64_t r1, const DumpOptions& opt) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "wb"));
  if (!f) return make_error(ErrorCode::io, path, kNoOffset, fmt::format("cannot create: {}", std::strerror(errno)));
  if (!header.empty() && std::fwrite(header.data(), 1, header.size(), f.get()) != header.size())
    return make_error(ErrorCode::io, path, kNoOffset, "write failed");
  const size_t n_cols = static_cast<size_t>(n_cols_signed);
  const int64_t rows_per_block =
      n_cols == 0 ? 1 : std::max<int64_t>(1, static_cast<int64_t>((size_t{1} << 20) / n_cols));
  std::vector<float> buf(static_cast<size_t>(std::min(rows_per_block, std::max<int64_t>(r1 - r0, 1))) * n_cols);
  for (int64_t r = r0; r < r1; r += rows_per_block) {
    if (opt.cancel && opt.cancel->load()) return make_error(ErrorCode::io, path, kNoOffset, "cancelled");
    const int64_t e = std::min(r1, r + rows_per_block);
    AKV_TRY(rows(r, e, buf.data()));
    const size_t n = static_cast<size_t>(e - r) * n_cols;
    static_assert(std::endian::native == std::endian::little, "the writers emit the host's float32 bytes");
    if (n != 0 && std::fwrite(buf.data(), sizeof(float), n, f.get()) != n)
      return make_error(ErrorCode::io, path, kNoOffset, "write failed");
    if (opt.progress && r1 > r0) opt.progress(static_cast<double>(e - r0) / static_cast<double>(r1 - r0));
  }
  if (std::fflush(f.get()) != 0) return make_error(ErrorCode::io, path, kNoOffset, "write failed");
  return {};
}

Result<std::pair<int64_t, int64_t>> dump_range(int64_t n_rows, const DumpOptions& o) {
  const int64_t r1 = o.row_end < 0 ? n_rows : o.row_end;
  if (o.row_begin < 0 || r1 < o.row_begin || r1 > n_rows)
    return make_error(ErrorCode::out_of_bounds, "", kNoOffset,
                      fmt::format("row range [{}, {}) is outside [0, {})", o.row_begin, r1, n_rows));
  return std::pair{o.row_begin, r1};
}

}   // namespace

std::string npy_header_f32(std::span<const int64_t> shape) {
  std::string dims;
  for (int64_t d : shape) dims += fmt::format("{}, ", d);
  if (shape.size() > 1) dims.resize(dims.size() - 2);   // "(a, b)"; a 1-d shape keeps "(a, )"-> fixed below
  if (shape.size() == 1) dims = fmt::format("{},", shape[0]);
  std::string dict = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}", dims);
  const size_t unpadded = 10 + dict.size() + 1;   // magic(6) + version(2) + len(2) + dict + '\n'
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(dict.size() & 0xFF));
  out.push_back(static_cast<char>(dict.size() >> 8));
  return out + dict;
}

static RowSource view_rows(const TensorView& v) {
  return [&v](int64_t r0, int64_t r1, float* out) { return decode_rows(v, r0, r1, out); };
}

Status write_npy(const std::string& path, int64_t n_rows, int64_t n_cols, const RowSource& rows,
                 std::span<const int64_t> shape, const DumpOptions& o) {
  auto range = dump_range(n_rows, o);
  if (!range) return range.error();
  auto [r0, r1] = *range;
  std::vector<int64_t> dims(shape.begin(), shape.end());
  uint64_t product = 1;
  for (int64_t d : dims) product *= static_cast<uint64_t>(d);
  const bool whole = r0 == 0 && r1 == n_rows;
  if (dims.empty() || !whole || product != static_cast<uint64_t>(r1 - r0) * static_cast<uint64_t>(n_cols))
    dims = {r1 - r0, n_cols};
  return write_rows(path, n_cols, rows, npy_header_f32(dims), r0, r1, o);
}

Status write_raw_f32(const std::string& path, int64_t n_rows, int64_t n_cols, const RowSource& rows,
                     const DumpOptions& o) {
  auto range = dump_range(n_rows, o);
  if (!range) return range.error();
  return write_rows(path, n_cols, rows, {}, range->first, range->second, o);
}

Status write_npy(const std::string& path, const TensorView& v, std::span<const int64_t> shape, const DumpOptions& o) {
  AKV_TRY(validate_view(v));
  return write_npy(path, v.n_rows, v.n_cols, view_rows(v), shape, o);
}

Status write_raw_f32(const std::string& path, const TensorView& v, const DumpOptions& o) {
  AKV_TRY(validate_view(v));
  return write_raw_f32(path, v.n_rows, v.n_cols, view_rows(v), o);
}

}   // namespace akview
