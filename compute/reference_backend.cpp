// The reference backend: the truth every other backend is measured against. Rows are decoded by
// core's scalar decoders (decode_rows) a tile at a time and accumulated in double.
#include <algorithm>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "compute/backends.hpp"
#include "compute/reference.hpp"
#include "core/decode/decode.hpp"

namespace akview::compute {

Status reference_matvec(const TensorView& view, const float* x, double* y, double* abs_wx) {
  return reference_matvec_rows(view, 0, view.n_rows, x, y, abs_wx);
}

Status reference_matvec_rows(const TensorView& view, int64_t row_begin, int64_t row_end, const float* x, double* y,
                             double* abs_wx) {
  AKV_TRY(validate_view(view));
  if (row_begin < 0 || row_end < row_begin || row_end > view.n_rows)
    return make_error(ErrorCode::out_of_bounds, "", kNoOffset,
                      fmt::format("rows [{}, {}) are outside the tensor's [0, {})", row_begin, row_end, view.n_rows));
  const int64_t cols = view.n_cols;
  const int64_t tile_rows = std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(1, cols));
  std::vector<float> tile(static_cast<size_t>(std::min(tile_rows, std::max<int64_t>(row_end - row_begin, 1)) * cols));
  for (int64_t r0 = row_begin; r0 < row_end; r0 += tile_rows) {
    const int64_t r1 = std::min(row_end, r0 + tile_rows);
    AKV_TRY(decode_rows(view, r0, r1, tile.data()));
    for (int64_t r = r0; r < r1; ++r) {
      const float* w = tile.data() + (r - r0) * cols;
      double acc = 0, abs_acc = 0;
      for (int64_t j = 0; j < cols; ++j) {
        const double p = static_cast<double>(w[j]) * static_cast<double>(x[j]);
        acc += p;
        abs_acc += p < 0 ? -p : p;
      }
      y[r - row_begin] = acc;
      if (abs_wx) abs_wx[r - row_begin] = abs_acc;
    }
  }
  return {};
}

namespace {

class ReferenceBackend final : public Backend {
 public:
  std::string_view name() const override { return "reference"; }
  Availability availability() const override { return {true, ""}; }
  bool supports(const TensorView& view) const override { return can_decode(view.type); }
  Status matvec(const TensorView& view, const float* x, float* y) override {
    std::vector<double> yd(static_cast<size_t>(std::max<int64_t>(view.n_rows, 0)));
    AKV_TRY(reference_matvec(view, x, yd.data()));
    std::copy(yd.begin(), yd.end(), y);
    return {};
  }
};

}   // namespace

Backend& reference_backend() {
  static ReferenceBackend b;
  return b;
}

}   // namespace akview::compute
