// Composite tensor assembly and checks (FORMATS.md §3.1 modes, §3.3 shapes, §4.5 Ollama blobs).
#include "core/formats/composite.hpp"

#include <array>

#include <fmt/format.h>

namespace akview {
namespace {

// Mode rules per composite type: allowed bits and group sizes, whether biases are required, and
// whether scales are raw bytes (E8M0 / E4M3) rather than floats.
struct ModeRow {
  TypeId type;
  uint16_t bits_mask;     // bit b set: b bits allowed
  uint16_t groups_mask;   // bit k set: group size 16 << k allowed (16, 32, 64, 128)
  bool biases;
  bool byte_scales;
};
constexpr uint16_t kAffineBits = (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 8);
constexpr std::array kModes = {
    ModeRow{TypeId::mlx_affine, kAffineBits, 0b1110, true, false},
    ModeRow{TypeId::mlx_mxfp4, 1 << 4, 0b0010, false, true},
    ModeRow{TypeId::mlx_nvfp4, 1 << 4, 0b0001, false, true},
    ModeRow{TypeId::mlx_mxfp8, 1 << 8, 0b0010, false, true},
    // Ollama's types run MLX's modes; older int4 blobs used group 32, so affine groups stay open
    ModeRow{TypeId::ollama_int4, 1 << 4, 0b1110, true, false},
    ModeRow{TypeId::ollama_int8, 1 << 8, 0b1110, true, false},
    ModeRow{TypeId::ollama_nvfp4, 1 << 4, 0b0001, false, true},
    ModeRow{TypeId::ollama_mxfp4, 1 << 4, 0b0010, false, true},
    ModeRow{TypeId::ollama_mxfp8, 1 << 8, 0b0010, false, true},
};

const ModeRow* mode_of(TypeId t) {
  for (const auto& m : kModes)
    if (m.type == t) return &m;
  return nullptr;
}

bool group_allowed(const ModeRow& m, uint32_t gs) {
  for (uint32_t k = 0; k < 4; ++k)
    if ((m.groups_mask >> k & 1) && gs == (16u << k)) return true;
  return false;
}

// Why a spec does not make a composite: an unsupported error at the weight (the model itself when the
// weight index is out of range).
Error refusal(const Model& model, uint32_t weight, std::string why) {
  if (weight >= model.tensors.size()) return make_error(ErrorCode::unsupported, model.path, kNoOffset, std::move(why));
  const Tensor& w = model.tensors[weight];
  const std::string& file = w.file < model.files.size() ? model.files[w.file].path : model.path;
  return make_error(ErrorCode::unsupported, file, w.offset, std::move(why));
}

}   // namespace

Status make_composite(Model& model, const CompositeSpec& s) {
  auto refuse = [&](std::string why) { return refusal(model, s.weight, std::move(why)); };
  const ModeRow* mode = mode_of(s.type);
  if (!mode) return refuse("not a composite type");
  if (s.weight >= model.tensors.size() || s.scales >= model.tensors.size()) return refuse("scales tensor missing");
  if (s.bits > 15 || !(mode->bits_mask >> s.bits & 1))
    return refuse(fmt::format("{} bits are not allowed for {}", s.bits, type_info(s.type).name));
  if (!group_allowed(*mode, s.group_size))
    return refuse(fmt::format("group size {} is not allowed for {}", s.group_size, type_info(s.type).name));
  if (mode->biases && s.biases == kNone) return refuse("affine quantization without a biases tensor");
  if (!mode->biases && s.biases != kNone)
    return refuse(fmt::format("{} has no biases, but a biases tensor is present", type_info(s.type).name));
  const Tensor& w = model.tensors[s.weight];
  const Tensor& sc = model.tensors[s.scales];
  if (w.type != TypeId::u32) return refuse(fmt::format("packed weight is {}, not u32", type_info(w.type).name));
  if (mode->byte_scales ? sc.type != TypeId::u8
                        : !(sc.type == TypeId::f16 || sc.type == TypeId::bf16 || sc.type == TypeId::f32))
    return refuse(fmt::format("scales of type {} do not fit {}", type_info(sc.type).name, type_info(s.type).name));
  auto ws = model.shape(w);
  auto ss = model.shape(sc);
  if (ws.empty() || ws.size() != ss.size()) return refuse("weight and scales have different ranks");
  for (size_t i = 0; i + 1 < ws.size(); ++i)
    if (ws[i] != ss[i])
      return refuse(fmt::format("weight and scales disagree in dimension {} ({} vs {})", i, ws[i], ss[i]));
  const uint64_t cols = static_cast<uint64_t>(ws.back()) * 32;
  if (cols % s.bits != 0) return refuse("packed row length is not a whole number of elements");
  const int64_t logical_cols = static_cast<int64_t>(cols / s.bits);
  if (logical_cols != ss.back() * static_cast<int64_t>(s.group_size))
    return refuse(
        fmt::format("weight holds {} columns but scales cover {} x {}", logical_cols, ss.back(), s.group_size));
  if (s.biases != kNone) {
    const Tensor& b = model.tensors[s.biases];
    auto bs = model.shape(b);
    if (!std::equal(bs.begin(), bs.end(), ss.begin(), ss.end())) return refuse("biases are not shaped like scales");
    if (b.type != sc.type) return refuse("biases and scales have different types");
  }
  if (s.global_scale != kNone && model.tensors[s.global_scale].type != TypeId::f32)
    return refuse("global scale is not f32");

  std::vector<int64_t> shape(ws.begin(), ws.end());
  shape.back() = logical_cols;
  Tensor& logical = model.tensors[s.weight];
  logical.dims_at = static_cast<uint32_t>(model.dims.size());
  model.dims.insert(model.dims.end(), shape.begin(), shape.end());
  logical.type = s.type;
  QuantInfo q;
  q.bits = s.bits;
  q.group_size = s.group_size;
  q.scales = s.scales;
  q.biases = s.biases;
  q.global_scale = s.global_scale;
  logical.quant = static_cast<uint32_t>(model.quants.size());
  model.quants.push_back(q);
  for (uint32_t c : {s.scales, s.biases, s.global_scale})
    if (c != kNone) model.tensors[c].flags |= kTensorCompanion;
  return {};
}

void mark_unsupported(Model& model, uint32_t index, const std::string& why) {
  Tensor& t = model.tensors[index];
  t.flags |= kTensorUnsupported;
  const std::string file = t.file < model.files.size() ? model.files[t.file].path : model.path;
  model.notes.push_back(
      Note{ErrorCode::unsupported, file, t.offset, fmt::format("tensor '{}': {}", t.name, why), false});
}

void order_companions(Model& model) {
  const uint32_t n = static_cast<uint32_t>(model.tensors.size());
  std::vector<uint32_t> order;
  order.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const Tensor& t = model.tensors[i];
    if (t.flags & kTensorCompanion) continue;
    order.push_back(i);
    if (t.quant != kNone && t.quant < model.quants.size()) {
      const QuantInfo& q = model.quants[t.quant];
      for (uint32_t c : {q.scales, q.biases, q.global_scale})
        if (c != kNone) order.push_back(c);
    }
  }
  // Companions whose owner is gone (should not happen) keep their place at the end.
  std::vector<uint32_t> new_index(n, kNone);
  for (uint32_t k = 0; k < order.size(); ++k) new_index[order[k]] = k;
  for (uint32_t i = 0; i < n; ++i)
    if (new_index[i] == kNone) {
      new_index[i] = static_cast<uint32_t>(order.size());
      order.push_back(i);
    }
  std::vector<Tensor> tensors;
  tensors.reserve(n);
  for (uint32_t i : order) tensors.push_back(model.tensors[i]);
  model.tensors = std::move(tensors);
  model.drop_index();   // built for the old order (safetensors' duplicate check)
  for (auto& q : model.quants)
    for (uint32_t* c : {&q.scales, &q.biases, &q.global_scale})
      if (*c != kNone) *c = new_index[*c];
}

}   // namespace akview
