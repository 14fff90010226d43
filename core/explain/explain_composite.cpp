// Step-throughs of the composite types (MLX affine / mxfp4 / nvfp4 / mxfp8, Ollama int4 / int8 /
// nvfp4 / mxfp4 / mxfp8): the group's packed bits (LSB-first stream of the row), its codes, its scale
// (and bias) from the companion tensors, a global scale where present, and the formula. Float
// operations as in core/decode/composite.hpp. FORMATS.md §3.2-3.4, §4.5.
#include <fmt/format.h>

#include "core/decode/composite.hpp"
#include "core/decode/float_formats.hpp"
#include "core/explain/block_steps.hpp"
#include "core/fault_guard.hpp"

namespace akview::explain {
namespace {

using decode::composite::kFp4Lut;

bool is_affine(TypeId t) { return t == TypeId::mlx_affine || t == TypeId::ollama_int4 || t == TypeId::ollama_int8; }
bool e8m0_scales(TypeId t) {
  return t == TypeId::mlx_mxfp4 || t == TypeId::mlx_mxfp8 || t == TypeId::ollama_mxfp4 || t == TypeId::ollama_mxfp8;
}
bool fp8_codes(TypeId t) { return t == TypeId::mlx_mxfp8 || t == TypeId::ollama_mxfp8; }
bool is_mlx(TypeId t) {
  return t == TypeId::mlx_affine || t == TypeId::mlx_mxfp4 || t == TypeId::mlx_nvfp4 || t == TypeId::mlx_mxfp8;
}

void add(GroupExplanation& e, std::string label, std::string formula, std::vector<double> values = {}) {
  e.steps.push_back({std::move(label), std::move(formula), std::move(values)});
}

// One per-group parameter of an affine tensor (f16 / bf16 / f32), copied out of its span.
Result<float> affine_param_step(GroupExplanation& e, std::string_view name, TypeId type, std::span<const uint8_t> span,
                                uint64_t origin, size_t index) {
  const size_t n = decode::composite::affine_param_bytes(type);
  uint8_t bytes[4] = {};
  AKV_TRY(copy_mapped(span.subspan(index * n, n), bytes));
  const float v = decode::composite::load_affine_param(type, bytes, 0);
  add(e, fmt::format("{} ({})", name, type_info(type).name),
      fmt::format("{}[{}] @{:#x}: bytes {} -> {}", name, index, origin + index * n, hex_bytes(bytes, n), num(v)), {v});
  return v;
}

}   // namespace

Status explain_composite(const TensorView& v, const SpanOrigins& origins, GroupExplanation& e) {
  const uint32_t gs = v.group_size, bits = v.bits;
  const size_t n_groups = static_cast<size_t>(v.n_cols) / gs;
  const size_t g = static_cast<size_t>(e.col) / gs;
  const size_t group_bytes = static_cast<size_t>(gs) * bits / 8;
  const size_t in_data = static_cast<size_t>(e.row) * v.row_bytes + g * group_bytes;
  e.group_col = static_cast<int64_t>(g * gs);
  e.group_n = gs;
  e.bytes.resize(group_bytes);
  e.bytes_offset = origins.data + in_data;
  AKV_TRY(copy_mapped(v.data.subspan(in_data, group_bytes), e.bytes.data()));
  const int j = static_cast<int>(e.col - e.group_col);
  const size_t param_index = static_cast<size_t>(e.row) * n_groups + g;

  // The packed bits: one little-endian bit stream per row; element k of the group at bits [k*bits, (k+1)*bits).
  std::string packing =
      fmt::format("{} codes of {} bits, least significant bit first: element k = bits [{}k, {}k+{}) of these bytes", gs,
                  bits, bits, bits, bits);
  if (fp8_codes(v.type)) packing = fmt::format("{} E4M3 codes, one byte each (element k = byte k)", gs);
  else if (!is_affine(v.type))
    packing = fmt::format("{} E2M1 codes, two per byte: element 2k = low nibble of byte k, 2k+1 = high", gs);
  add(e, "packed weight",
      fmt::format("bytes {} @{:#x} (row {}, group {}): {}", hex_bytes(e.bytes.data(), group_bytes), e.bytes_offset,
                  e.row, g, packing));
  if (group_bytes % 4 == 0 && in_data % 4 == 0) {
    std::vector<double> words;
    std::string text;
    for (size_t w = 0; w < group_bytes / 4; ++w) {
      const uint32_t word = fp::load_u32(e.bytes.data() + 4 * w);
      words.push_back(word);
      if (w < 8) text += fmt::format("{}0x{:08x}", w ? " " : "", word);
    }
    if (group_bytes / 4 > 8) text += " …";
    add(e, "as U32 words",
        fmt::format("{} (the uint32 tensor's words {}..{} of row {})", text, g * group_bytes / 4,
                    (g + 1) * group_bytes / 4 - 1, e.row),
        std::move(words));
  }
  std::vector<int> q(gs);
  for (uint32_t k = 0; k < gs; ++k) {
    const size_t bit = static_cast<size_t>(k) * bits;
    uint32_t two = e.bytes[bit / 8];
    if (bit / 8 + 1 < group_bytes) two |= static_cast<uint32_t>(e.bytes[bit / 8 + 1]) << 8;
    q[k] = static_cast<int>((two >> (bit % 8)) & ((1u << bits) - 1));
  }
  const size_t jb = static_cast<size_t>(j) * bits;
  add(e, fmt::format("codes ({}-bit)", bits),
      fmt::format("column {}: bits [{}, {}) = byte {} from bit {} -> {}", e.col, jb, jb + bits, jb / 8, jb % 8,
                  q[static_cast<size_t>(j)]),
      std::vector<double>(q.begin(), q.end()));

  std::vector<float>& y = e.values;
  y.assign(gs, 0.0f);
  if (is_affine(v.type)) {
    auto s = affine_param_step(e, "scales", v.scales_type, v.scales, origins.scales, param_index);
    if (!s) return s.error();
    auto b = affine_param_step(e, "biases", v.biases_type, v.biases, origins.biases, param_index);
    if (!b) return b.error();
    for (uint32_t k = 0; k < gs; ++k) y[k] = *s * static_cast<float>(q[k]) + *b;
    add(e, "formula",
        fmt::format("y = scale * q + bias; column {}: {} * {} + {} = {}", e.col, num(*s), q[static_cast<size_t>(j)],
                    num(*b), num(y[static_cast<size_t>(j)])));
  } else {
    uint8_t sb = 0;
    AKV_TRY(copy_mapped(v.scales.subspan(param_index, 1), &sb));
    const float s = e8m0_scales(v.type) ? fp::e8m0_to_f32(sb) : fp::e4m3_mlx_to_f32(sb);
    add(e, e8m0_scales(v.type) ? "scale (E8M0)" : "scale (E4M3)",
        e8m0_scales(v.type)
            ? fmt::format("scales[{}] @{:#x} = 0x{:02x} = {}: 2^({} - 127) = {}", param_index,
                          origins.scales + param_index, sb, sb, sb, num(s))
            : fmt::format("scales[{}] @{:#x} = 0x{:02x}: sign {} exponent {} mantissa {} (bias 7) -> {}", param_index,
                          origins.scales + param_index, sb, sb >> 7, (sb >> 3) & 0xF, sb & 7, num(s)),
        {static_cast<double>(sb), s});
    std::vector<double> elems;
    for (uint32_t k = 0; k < gs; ++k) {
      const float x = fp8_codes(v.type) ? fp::e4m3_mlx_to_f32(static_cast<uint8_t>(q[k])) : kFp4Lut[q[k]];
      elems.push_back(x);
      y[k] = x * s;
    }
    const double asked = elems[static_cast<size_t>(j)];
    add(e, fp8_codes(v.type) ? "E4M3 values" : "E2M1 values",
        fp8_codes(v.type) ? "E4M3(code): sign, 4-bit exponent (bias 7), 3-bit mantissa"
                          : "E2M1(code) = {0, .5, 1, 1.5, 2, 3, 4, 6, -0, ..., -6}",
        std::move(elems));
    add(e, "formula",
        fmt::format("y = value * scale; column {}: {} * {} = {}", e.col, num(asked), num(s),
                    num(y[static_cast<size_t>(j)])));
    if (!v.global_scale.empty()) {
      const size_t at = v.global_scale.size() == 4 ? 0 : 4 * static_cast<size_t>(e.row);
      uint8_t gb[4];
      AKV_TRY(copy_mapped(v.global_scale.subspan(at, 4), gb));
      float gscale = fp::load_f32(gb);
      const float stored = gscale;
      if (is_mlx(v.type)) gscale = gscale / (448.0f * 6.0f);
      for (uint32_t k = 0; k < gs; ++k) y[k] = y[k] * gscale;
      add(e, "global scale (f32)",
          is_mlx(v.type) ? fmt::format("@{:#x} = {}; MLX divides it by 448 * 6: {}; y = y * {}",
                                       origins.global_scale + at, num(stored), num(gscale), num(gscale))
                         : fmt::format("@{:#x} = {}, multiplied in as stored: y = y * {}", origins.global_scale + at,
                                       num(stored), num(gscale)),
          {stored, gscale});
    }
  }
  return {};
}

}   // namespace akview::explain
