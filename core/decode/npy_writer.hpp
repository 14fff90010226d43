// Dump a decoded tensor as a NumPy .npy file (format v1.0, '<f4', C order, shape in numpy order)
// or as raw little-endian float32, streamed in row blocks (memory bounded).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "core/result.hpp"
#include "core/tensor_view.hpp"

namespace akview {

// The complete .npy v1.0 header (magic, version, length, dict, padding, '\n'); a multiple of 64 bytes.
std::string npy_header_f32(std::span<const int64_t> shape);

struct DumpOptions {
  int64_t row_begin = 0;
  int64_t row_end = -1;   // -1: all rows
  std::function<void(double)> progress;
  const std::atomic<bool>* cancel = nullptr;
};

// `shape`: numpy-order shape to record (its product must equal the rows dumped x n_cols); empty:
// [rows, n_cols]. A dumped row sub-range is recorded as [rows, n_cols].
Status write_npy(const std::string& path, const TensorView& view, std::span<const int64_t> shape = {},
                 const DumpOptions& options = {});
Status write_raw_f32(const std::string& path, const TensorView& view, const DumpOptions& options = {});

// The same over any source of decoded rows (e.g. PyTorch strided views gathered row by row):
// `rows(r0, r1, out)` fills (r1 - r0) * n_cols floats.
using RowSource = std::function<Status(int64_t row_begin, int64_t row_end, float* out)>;
Status write_npy(const std::string& path, int64_t n_rows, int64_t n_cols, const RowSource& rows,
                 std::span<const int64_t> shape = {}, const DumpOptions& options = {});
Status write_raw_f32(const std::string& path, int64_t n_rows, int64_t n_cols, const RowSource& rows,
                     const DumpOptions& options = {});

}   // namespace akview
