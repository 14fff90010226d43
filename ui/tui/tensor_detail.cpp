// The tensor detail (Enter in the Tensors pane): every field of one tensor as label/value lines.
#include <algorithm>

#include <fmt/format.h>

#include "core/decode/decode.hpp"
#include "core/tensor_view.hpp"
#include "ui/batch/commands.hpp"
#include "ui/text/format.hpp"
#include "ui/tui/tensors_pane.hpp"

namespace akview::tui {
namespace {

constexpr int kFirstValues = 16;
constexpr int64_t kMaxPreviewCols = int64_t{1} << 22;   // decode row 0 only when it is at most 16 MiB of f32

std::string shape_text(const Model& m, const Tensor& t) {
  auto s = m.shape(t);
  return format_shape(std::vector<int64_t>(s.begin(), s.end()));
}

std::string type_text(const Model& m, const Tensor& t) {
  const TypeInfo& info = type_info(t.type);
  if (t.quant < m.quants.size()) {
    const QuantInfo& q = m.quants[t.quant];
    return fmt::format("{} ({}-bit, groups of {})", info.name, q.bits, q.group_size);
  }
  if (info.kind == TypeKind::block_quant)
    return fmt::format("{} (blocks of {} elements in {} bytes)", info.name, info.block_elems, info.block_bytes);
  return std::string(info.name);
}

}   // namespace

std::vector<DetailLine> tensor_detail_lines(const ModelSession& session, uint32_t tensor) {
  const Model& m = session.model;
  const Tensor& t = m.tensors[tensor];
  std::vector<DetailLine> out;
  auto add = [&](std::string label, std::string value, Role role = Role::normal) {
    out.push_back({std::move(label), std::move(value), role});
  };
  add("name", std::string(t.name), Role::key);
  if (const auto e = session.entry(tensor)) {
    if (e->mapped) {
      add("canonical", std::string(e->canonical), Role::key);
      add("role", std::string(e->role));
      if (!e->note.empty()) add("note", std::string(e->note), Role::warn);
    } else {
      add("canonical", "unmapped (no name rule matches)", Role::warn);
    }
  } else if (t.flags & kTensorCompanion) {
    add("canonical", "companion (scales/biases of a quantized tensor)", Role::muted);
  } else if (!session.names) {
    add("canonical", "building the name map…", Role::muted);
  }
  TensorRow row = make_tensor_row(m, t);
  add("type", type_text(m, t), type_info(t.type).kind == TypeKind::floating ? Role::type_float : Role::type_quant);
  add("shape", shape_text(m, t) + "  (outermost first)");
  add("parameters", fmt::format("{} ({})", row.parameters, format_count(row.parameters)));
  add("bytes", fmt::format("{} ({})", t.nbytes, format_bytes(t.nbytes)));
  add("bits/weight",
      fmt::format("{:.4g}{}", row.bits_per_weight, t.quant < m.quants.size() ? " (with scales and biases)" : ""));
  if (t.file < m.files.size()) add("file", fmt::format("{}  ({})", m.files[t.file].path, m.files[t.file].role));
  add("offset",
      fmt::format("{} .. {}  ({} bytes)", format_offset(t.offset), format_offset(t.offset + t.nbytes), t.nbytes));
  if (t.quant < m.quants.size()) {
    const QuantInfo& q = m.quants[t.quant];
    const std::pair<const char*, uint32_t> companions[] = {
        {"scales", q.scales}, {"biases", q.biases}, {"global scale", q.global_scale}};
    for (const auto& [what, c] : companions) {
      if (c >= m.tensors.size()) continue;
      const Tensor& ct = m.tensors[c];
      add(what, fmt::format("{}  {} {}  {} @ {}", ct.name, type_info(ct.type).name, shape_text(m, ct),
                            format_bytes(ct.nbytes), format_offset(ct.offset)));
    }
  }
  if (const ValueSummary* v = session.value(tensor)) {
    if (v->state == ValueSummary::State::done)
      add("values", fmt::format("min {:.6g}  max {:.6g}  std {:.6g}", v->min, v->max, v->std), Role::number);
    else add("values", "statistics failed", Role::warn);
  }
  if (!can_decode(t.type)) {
    add("decoding",
        fmt::format("values of type {} cannot be decoded by akview; the tensor is listed only", type_info(t.type).name),
        Role::warn);
    return out;
  }
  if (t.flags & kTensorUnsupported) {
    // The reason the open gave (a note "tensor 'NAME': why" at the tensor's offset).
    const std::string prefix = fmt::format("tensor '{}': ", t.name);
    std::string why = "marked unsupported when the model was opened";
    for (const Note& n : m.notes)
      if (n.offset == t.offset && n.message.starts_with(prefix)) why = n.message.substr(prefix.size());
    add("decoding", "cannot be decoded: " + why, Role::warn);
    return out;
  }
  auto view = make_tensor_view(m, t);
  if (!view) {
    add("decoding", view.error().to_string(), Role::error);
    return out;
  }
  if (view->n_cols > kMaxPreviewCols) {
    add("row 0", fmt::format("{} values per row: not previewed here (use `akview dump`)", view->n_cols), Role::muted);
  } else if (view->n_rows > 0 && view->n_cols > 0) {
    // Row 0 only (bounded: one row), the first values of it.
    std::vector<float> first(static_cast<size_t>(view->n_cols));
    if (Status s = decode_rows(*view, 0, 1, first.data()); !s) {
      add("decoding", s.error().to_string(), Role::error);
    } else {
      std::string values;
      const int n = static_cast<int>(std::min<int64_t>(kFirstValues, view->n_cols));
      for (int k = 0; k < n; ++k) values += fmt::format("{}{:.5g}", k ? " " : "", first[static_cast<size_t>(k)]);
      add("row 0", values + (view->n_cols > n ? " …" : ""), Role::number);
    }
  }
  if (auto caveat = decode_caveat(t.type); !caveat.empty()) add("caveat", std::string(caveat), Role::warn);
  return out;
}

}   // namespace akview::tui
