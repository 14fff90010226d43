// Model diff through the name maps (core/names/name_map.hpp) and the reference decoders.
#include "core/diff.hpp"

#include <cmath>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "core/decode/decode.hpp"
#include "core/formats/pytorch.hpp"
#include "core/names/name_map.hpp"
#include "core/tensor_view.hpp"

namespace akview {
namespace {

struct RowShape {
  int64_t rows = 1, cols = 1;
};
RowShape row_shape(const Model& m, const Tensor& t) {
  RowShape r;
  auto s = m.shape(t);
  if (s.empty()) return r;
  r.cols = s.back();
  for (size_t i = 0; i + 1 < s.size(); ++i) r.rows *= s[i];
  return r;
}

bool same_shape(const Model& a, const Tensor& ta, const Model& b, const Tensor& tb) {
  auto sa = a.shape(ta), sb = b.shape(tb);
  return std::equal(sa.begin(), sa.end(), sb.begin(), sb.end());
}

}  // namespace

Status decode_tensor_rows(const Model& model, uint32_t index, int64_t row_begin, int64_t row_end, float* out) {
  if (index >= model.tensors.size()) return make_error(ErrorCode::not_found, model.path, kNoOffset, "tensor index out of range");
  const Tensor& t = model.tensors[index];
  if (t.flags & kTensorUnsupported)
    return make_error(ErrorCode::unsupported, model.path, t.offset, fmt::format("tensor '{}' is marked unsupported", t.name));
  if (!(t.flags & kTensorNonContiguous)) {
    auto view = make_tensor_view(model, t);
    if (!view) return std::move(view).error();
    return decode_rows(*view, row_begin, row_end, out);
  }
  // A strided PyTorch view: gather its elements into row-major order, then decode that buffer.
  auto bytes = torch_tensor_bytes(model, index);
  if (!bytes) return std::move(bytes).error();
  RowShape rs = row_shape(model, t);
  TensorView view;
  view.type = t.type;
  view.n_rows = rs.rows;
  view.n_cols = rs.cols;
  view.data = *bytes;
  view.row_bytes = static_cast<uint64_t>(rs.cols) * type_info(t.type).block_bytes;
  return decode_rows(view, row_begin, row_end, out);
}

Result<ValueError> compare_values(const Model& a, uint32_t ia, const Model& b, uint32_t ib, const DiffOptions& options) {
  const RowDecoder& decode = options.decode ? options.decode : RowDecoder(decode_tensor_rows);
  const RowShape sa = row_shape(a, a.tensors[ia]), sb = row_shape(b, b.tensors[ib]);
  if (sa.rows != sb.rows || sa.cols != sb.cols)
    return make_error(ErrorCode::bad_shape, a.path, kNoOffset, "the two tensors have different shapes");
  ValueError e;
  if (sa.rows == 0 || sa.cols == 0) return e;
  const int64_t rows_per_chunk = std::max<int64_t>(1, static_cast<int64_t>(options.chunk_elems) / sa.cols);
  std::vector<float> va, vb;
  double sum_sq = 0, ref_sq = 0, a_sq = 0, dot = 0, max_abs = 0;
  for (int64_t r = 0; r < sa.rows; r += rows_per_chunk) {
    if (options.cancel && options.cancel->load())
      return make_error(ErrorCode::io, a.path, kNoOffset, "cancelled");
    const int64_t end = std::min(sa.rows, r + rows_per_chunk);
    const size_t n = static_cast<size_t>((end - r) * sa.cols);
    va.resize(n);
    vb.resize(n);
    AKV_TRY(decode(a, ia, r, end, va.data()));
    AKV_TRY(decode(b, ib, r, end, vb.data()));
    for (size_t k = 0; k < n; ++k) {
      const double x = va[k], y = vb[k], d = x - y;
      max_abs = std::max(max_abs, std::fabs(d));
      sum_sq += d * d;
      ref_sq += y * y;
      a_sq += x * x;
      dot += x * y;
    }
  }
  e.elements = static_cast<uint64_t>(sa.rows) * static_cast<uint64_t>(sa.cols);
  const double count = static_cast<double>(e.elements);
  e.max_abs = max_abs;
  e.rmse = std::sqrt(sum_sq / count);
  const double ref_rms = std::sqrt(ref_sq / count);
  e.rel_rmse = ref_rms > 0 ? e.rmse / ref_rms : 0;
  e.cosine = (a_sq > 0 && ref_sq > 0) ? dot / std::sqrt(a_sq * ref_sq) : (a_sq == ref_sq ? 1.0 : 0.0);
  return e;
}

DiffReport diff_models(const Model& a, const Model& b, const DiffOptions& options) {
  DiffReport report;
  const NameMap ma = build_name_map(a), mb = build_name_map(b);
  // B's keys: canonical names, and native names of its unmapped tensors.
  std::unordered_map<std::string, uint32_t> b_canonical, b_native;
  for (const auto& e : mb.entries) {
    if (e.mapped) b_canonical.emplace(e.canonical, e.tensor);
    else b_native.emplace(std::string(b.tensors[e.tensor].name), e.tensor);
  }
  std::vector<bool> b_used(b.tensors.size(), false);
  for (const auto& e : ma.entries) {
    TensorDiff d;
    d.a = e.tensor;
    d.canonical = e.mapped;
    d.key = e.mapped ? e.canonical : std::string(a.tensors[e.tensor].name);
    d.note = e.note;
    auto& table = e.mapped ? b_canonical : b_native;
    if (auto it = table.find(d.key); it != table.end()) {
      d.b = it->second;
      b_used[d.b] = true;
      if (d.note.empty())
        for (const auto& be : mb.entries)
          if (be.tensor == d.b) d.note = be.note;
    }
    report.rows.push_back(std::move(d));
  }
  for (const auto& e : mb.entries) {
    if (b_used[e.tensor]) continue;
    TensorDiff d;
    d.b = e.tensor;
    d.canonical = e.mapped;
    d.key = e.mapped ? e.canonical : std::string(b.tensors[e.tensor].name);
    report.rows.push_back(std::move(d));
  }
  size_t pairs = 0, done = 0;
  for (const auto& d : report.rows) pairs += d.a != kNone && d.b != kNone;
  for (auto& d : report.rows) {
    if (d.a == kNone) {
      ++report.only_b;
      continue;
    }
    if (d.b == kNone) {
      ++report.only_a;
      continue;
    }
    const Tensor& ta = a.tensors[d.a];
    const Tensor& tb = b.tensors[d.b];
    d.shape_differs = !same_shape(a, ta, b, tb);
    d.type_differs = ta.type != tb.type;
    report.shape_changes += d.shape_differs;
    report.type_changes += d.type_differs;
    if (options.values) {
      if (options.cancel && options.cancel->load()) {
        report.cancelled = true;
        break;
      }
      if (d.shape_differs) {
        d.value_problem = "shapes differ";
      } else {
        auto err = compare_values(a, d.a, b, d.b, options);
        if (err) {
          d.has_values = true;
          d.error = *err;
        } else {
          d.value_problem = err.error().to_string();
        }
      }
      ++done;
      if (options.progress && pairs) options.progress(static_cast<double>(done) / static_cast<double>(pairs));
    }
  }
  return report;
}

}  // namespace akview
