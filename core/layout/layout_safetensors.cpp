// SafeTensors layout (FORMATS.md §1.1): the u64 length prefix, the JSON header (one region per
// tensor entry and for __metadata__, then the padding spaces), and the data section with each
// tensor's bytes at the offsets the parser read. Any byte of the data section no tensor claims is
// a gap region (the format forbids them; a lenient open may have let one through).
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/layout/layout_walkers.hpp"

namespace akview::layout {
namespace {

// For each companion tensor, "scales of X" / "biases of X" / "global scale of X" (empty otherwise).
std::vector<std::string> companion_owners(const Model& model) {
  std::vector<std::string> owners;
  for (const Tensor& t : model.tensors) {
    if (t.quant == kNone) continue;
    if (owners.empty()) owners.resize(model.tensors.size());
    const QuantInfo& q = model.quants[t.quant];
    auto name = [&](uint32_t index, std::string_view role) {
      if (index < owners.size()) owners[index] = fmt::format("{} of {}", role, t.name);
    };
    name(q.scales, "scales");
    name(q.biases, "biases");
    name(q.global_scale, "global scale");
  }
  return owners;
}

}   // namespace

Status walk_safetensors(const Model& model, uint32_t file_index, RegionWriter& w) {
  const SourceFile& f = model.files[file_index];
  const auto bytes = f.map.bytes();
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);   // detect_layout_format checked 8 + n <= size
  const uint64_t data_start = 8 + n;
  w.emit(0, 0, 8, RegionKind::length, "header length", fmt::format("{}", n));
  w.emit(0, 8, n, RegionKind::json, "JSON header", fmt::format("{} bytes", n));
  AKV_TRY(walk_json_members(bytes, f.path, 8, data_start, 1, 1, w));
  if (bytes.size() > data_start && !w.stopped()) {
    w.emit(0, data_start, bytes.size() - data_start, RegionKind::data, "data section",
           fmt::format("{} bytes", bytes.size() - data_start));
    const auto owners = companion_owners(model);
    SpanCallbacks cb;
    cb.describe = [&](uint32_t id) {
      Region r = describe_tensor(model, id);
      if (id < owners.size() && !owners[id].empty()) r.value += ", " + owners[id];
      return r;
    };
    emit_spans(w, 1, data_start, bytes.size(), tensor_spans(model, file_index), cb);
  }
  return {};
}

}   // namespace akview::layout
