// explain_element: checks the view and the element, then hands the group to its type's explainer
// (one table row per ggml block type; composite and plain dtypes have one form each).
#include "core/explain/explain.hpp"

#include <array>

#include <fmt/format.h>

#include "core/decode/decode.hpp"
#include "core/decode/group_cols.hpp"
#include "core/explain/block_steps.hpp"
#include "core/fault_guard.hpp"

namespace akview {
namespace {

using namespace explain;

struct BlockRow {
  TypeId type;
  BlockExplainer explain;
};

using T = TypeId;
constexpr std::array kBlockExplainers = {
    BlockRow{T::q4_0, explain_q4_0},       BlockRow{T::q4_1, explain_q4_1},     BlockRow{T::q5_0, explain_q5_0},
    BlockRow{T::q5_1, explain_q5_1},       BlockRow{T::q8_0, explain_q8_0},     BlockRow{T::q8_1, explain_q8_1},
    BlockRow{T::q2_k, explain_q2_k},       BlockRow{T::q3_k, explain_q3_k},     BlockRow{T::q4_k, explain_q4_k},
    BlockRow{T::q5_k, explain_q5_k},       BlockRow{T::q6_k, explain_q6_k},     BlockRow{T::q8_k, explain_q8_k},
    BlockRow{T::iq2_xxs, explain_iq2_xxs}, BlockRow{T::iq2_xs, explain_iq2_xs}, BlockRow{T::iq3_xxs, explain_iq3_xxs},
    BlockRow{T::iq1_s, explain_iq1_s},     BlockRow{T::iq4_nl, explain_iq4_nl}, BlockRow{T::iq3_s, explain_iq3_s},
    BlockRow{T::iq2_s, explain_iq2_s},     BlockRow{T::iq4_xs, explain_iq4_xs}, BlockRow{T::iq1_m, explain_iq1_m},
    BlockRow{T::tq1_0, explain_tq1_0},     BlockRow{T::tq2_0, explain_tq2_0},   BlockRow{T::mxfp4, explain_mxfp4},
    BlockRow{T::nvfp4, explain_nvfp4},     BlockRow{T::q1_0, explain_q1_0},     BlockRow{T::q2_0, explain_q2_0},
};

// Every block-quant type of the type table has one explainer, and no other type has one.
constexpr bool has_block_explainer(TypeKind kind) { return kind == TypeKind::block_quant; }
static_assert(covers_types_of_kind(kBlockExplainers, has_block_explainer),
              "one BlockRow per block_quant type of kTypeTable (core/types.hpp)");

BlockExplainer find_block_explainer(TypeId type) {
  for (const auto& r : kBlockExplainers)
    if (r.type == type) return r.explain;
  return nullptr;
}

std::string bits_per_weight_text(const TensorView& v) {
  const TypeInfo& info = type_info(v.type);
  if (info.kind == TypeKind::composite) {
    const uint32_t scale_bits = 8 * type_info(v.scales_type).block_bytes;
    const uint32_t bias_bits = v.biases.empty() ? 0 : 8 * type_info(v.biases_type).block_bytes;
    const double bpw = v.bits + static_cast<double>(scale_bits + bias_bits) / v.group_size;
    return bias_bits ? fmt::format("{} bits per weight: {}-bit codes + a {}-bit scale and a {}-bit bias per {} weights",
                                   num(bpw), v.bits, scale_bits, bias_bits, v.group_size)
                     : fmt::format("{} bits per weight: {}-bit codes + an {}-bit scale per {} weights", num(bpw),
                                   v.bits, scale_bits, v.group_size);
  }
  const double bpw = 8.0 * info.block_bytes / info.block_elems;
  if (info.block_elems == 1) return fmt::format("{} bits per weight", num(bpw));
  return fmt::format("{} bits per weight: {} bytes per {} weights", num(bpw), info.block_bytes, info.block_elems);
}

Status explain_block(const TensorView& v, const SpanOrigins& origins, GroupExplanation& e) {
  const TypeInfo& info = type_info(v.type);
  const uint32_t gcols = group_cols(v);
  const size_t block = static_cast<size_t>(e.col) / info.block_elems;
  const size_t in_data = static_cast<size_t>(e.row) * v.row_bytes + block * info.block_bytes;
  e.group_col = e.col / gcols * gcols;
  e.group_n = gcols;
  e.bytes.resize(info.block_bytes);
  e.bytes_offset = origins.data + in_data;
  AKV_TRY(copy_mapped(v.data.subspan(in_data, info.block_bytes), e.bytes.data()));
  const int g = static_cast<int>((static_cast<size_t>(e.col) % info.block_elems) / gcols);
  BlockSteps steps(e, e.bytes.data(), e.bytes_offset, g, static_cast<int>(e.col - e.group_col));
  steps.add(
      fmt::format("block {} of row {}", block, e.row),
      fmt::format("{} bytes @{:#x}; the group is {} {} of {} elements (columns {}..{})", info.block_bytes,
                  e.bytes_offset, gcols == info.block_elems ? "the whole block," : "sub-block",
                  gcols == info.block_elems ? "" : std::to_string(g), gcols, e.group_col, e.group_col + gcols - 1));
  e.values.assign(gcols, 0.0f);
  find_block_explainer(v.type)(steps, e.values.data());
  return {};
}

}   // namespace

Result<GroupExplanation> explain_element(const TensorView& view, int64_t row, int64_t col, const SpanOrigins& origins) {
  AKV_TRY(validate_view(view));
  auto outside = [](std::string_view what, int64_t v, int64_t n) {
    return make_error(
        ErrorCode::out_of_bounds, "", kNoOffset,
        fmt::format("{} {} is outside the tensor's {}s [0, {})", what, v, what == "row" ? "row" : "column", n));
  };
  if (row < 0 || row >= view.n_rows) return outside("row", row, view.n_rows);
  if (col < 0 || col >= view.n_cols) return outside("column", col, view.n_cols);
  GroupExplanation e;
  e.row = row;
  e.col = col;
  e.family = &quant_family(view.type);
  e.bits_per_weight = bits_per_weight_text(view);
  const TypeInfo& info = type_info(view.type);
  Status s = info.kind == TypeKind::composite     ? explain_composite(view, origins, e)
             : info.kind == TypeKind::block_quant ? explain_block(view, origins, e)
                                                  : explain_plain(view, origins, e);
  if (!s) return std::move(s).error();
  return e;
}

}   // namespace akview
