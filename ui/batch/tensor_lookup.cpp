// Finding a tensor by native or canonical name, and reading "A:B" row ranges.
#include <charconv>

#include <fmt/format.h>

#include "core/names/name_map.hpp"
#include "core/quote.hpp"
#include "ui/batch/commands.hpp"

namespace akview {

TensorFinder::TensorFinder(const Model& model) : model_(model) {}
TensorFinder::~TensorFinder() = default;

const NameMap& TensorFinder::name_map() {
  if (!map_) map_ = std::make_unique<NameMap>(build_name_map(model_));
  return *map_;
}

Result<uint32_t> TensorFinder::find(std::string_view name) {
  if (const Tensor* t = model_.find(name)) return static_cast<uint32_t>(t - model_.tensors.data());
  const NameMap& map = name_map();
  if (uint32_t e = map.find(name); e != kNone) return map.entries[e].tensor;
  return make_error(
      ErrorCode::not_found, model_.path, kNoOffset,
      fmt::format("no tensor named {} (native or canonical); `akview tensors` lists them", quote_name(name)));
}

Result<uint32_t> find_tensor(const Model& model, std::string_view name) { return TensorFinder(model).find(name); }

Result<std::pair<int64_t, int64_t>> parse_row_range(std::string_view text, int64_t n_rows) {
  auto bad = [&](std::string why) {
    return make_error(ErrorCode::usage, "", kNoOffset, fmt::format("--rows '{}': {}", text, why));
  };
  auto parse = [](std::string_view s, int64_t& v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size() && v >= 0;
  };
  if (text.empty()) return std::pair<int64_t, int64_t>{0, n_rows};
  int64_t a = 0, b = n_rows;
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    if (!parse(text, a)) return bad("expected A:B, A: or :B with non-negative integers");
    b = a + 1;
  } else {
    std::string_view sa = text.substr(0, colon), sb = text.substr(colon + 1);
    if ((!sa.empty() && !parse(sa, a)) || (!sb.empty() && !parse(sb, b)))
      return bad("expected A:B, A: or :B with non-negative integers");
  }
  if (a > b || b > n_rows) return bad(fmt::format("outside the tensor's rows [0, {})", n_rows));
  return std::pair{a, b};
}

std::pair<int64_t, int64_t> tensor_rows_cols(const Model& model, const Tensor& t) {
  auto shape = model.shape(t);
  int64_t cols = shape.empty() ? 1 : shape.back();
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
  return {rows, cols};
}

}   // namespace akview
