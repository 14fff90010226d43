// walk_layout: a table of containers (detect by content, walk), and the helpers the walkers share.
#include "core/layout/layout.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "core/fault_guard.hpp"
#include "core/formats/format.hpp"
#include "core/layout/layout_walkers.hpp"

namespace akview {
namespace {

bool starts_with(std::span<const uint8_t> b, std::string_view magic) {
  return b.size() >= magic.size() && std::memcmp(b.data(), magic.data(), magic.size()) == 0;
}

bool looks_json(std::span<const uint8_t> b) {
  for (uint8_t c : b) {
    if (c == '{' || c == '[') return true;
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return false;
  }
  return false;
}

Status walk_opaque(const Model& model, uint32_t file_index, RegionWriter& writer) {
  const SourceFile& f = model.files[file_index];
  if (f.map.size() > 0)
    writer.emit(0, 0, f.map.size(), RegionKind::text, f.role,
                fmt::format("{} bytes akview does not lay out", f.map.size()));
  return {};
}

// A walker and the format-table entry whose verdict on a file's bytes selects it. The PyTorch walkers
// read the storages their opener parsed, so they take only a file of a model opened as that format.
struct LayoutRow {
  LayoutFormat format;
  std::string_view name;
  std::string_view sniffed_as;   // FormatEntry::name; "" for opaque, the fallback (json is one too)
  bool needs_own_model;          // only in a model whose Model::format is `sniffed_as`
  Status (*walk)(const Model&, uint32_t, RegionWriter&);
};
constexpr std::array kLayouts = {
    LayoutRow{LayoutFormat::gguf, "gguf", "gguf", false, layout::walk_gguf},
    LayoutRow{LayoutFormat::safetensors, "safetensors", "safetensors", false, layout::walk_safetensors},
    LayoutRow{LayoutFormat::json, "json", "ollama-manifest", false, layout::walk_json_file},
    LayoutRow{LayoutFormat::pytorch_zip, "pytorch-zip", "pytorch-zip", true, layout::walk_pytorch_zip},
    LayoutRow{LayoutFormat::pytorch_legacy, "pytorch-legacy", "pytorch-legacy", true, layout::walk_pytorch_legacy},
    LayoutRow{LayoutFormat::opaque, "opaque", "", false, walk_opaque},
};

constexpr bool layouts_in_order() {
  for (size_t i = 0; i < kLayouts.size(); ++i)
    if (static_cast<size_t>(kLayouts[i].format) != i) return false;
  return kLayouts.size() == static_cast<size_t>(LayoutFormat::opaque) + 1;
}
static_assert(layouts_in_order(), "one LayoutRow per LayoutFormat, in enum order");

}   // namespace

std::string_view layout_format_name(LayoutFormat format) { return kLayouts[static_cast<size_t>(format)].name; }

LayoutFormat detect_layout_format(const Model& model, uint32_t file_index) {
  // The format table's verdict on the bytes alone (the probe carries no name, so no extension decides).
  const auto bytes = model.files[file_index].map.bytes();
  if (const FormatEntry* format = detect_format(probe_bytes(bytes)))
    for (const LayoutRow& row : kLayouts)
      if (row.sniffed_as == format->name && (!row.needs_own_model || model.format == format->name)) return row.format;
  // Shard indexes, config.json and other JSON the model carries; anything else is shown whole.
  return looks_json(bytes) ? LayoutFormat::json : LayoutFormat::opaque;
}

Status walk_layout(const Model& model, uint32_t file_index, const RegionSink& sink) {
  // A file cut short since it was opened is an error naming it, not a SIGBUS (core/fault_guard.hpp).
  AKV_TRY(check_mapped_range(model.files[file_index].map.bytes()));
  RegionWriter writer(sink);
  return kLayouts[static_cast<size_t>(detect_layout_format(model, file_index))].walk(model, file_index, writer);
}

Error walk_unopened_layout(std::span<const uint8_t> bytes, std::string_view path, const Error& open_error,
                           const RegionSink& sink) {
  RegionWriter writer(sink);
  const uint64_t size = bytes.size();
  const uint64_t failure_at = open_error.offset == kNoOffset ? kNoOffset : std::min<uint64_t>(open_error.offset, size);
  uint64_t at = 0;
  Error error = open_error;
  if (starts_with(bytes, "GGUF")) {
    auto [stop, walk_error] = layout::walk_gguf_prefix(bytes, path, failure_at, writer);
    at = stop;
    // Opening's message names the failure, unless the walk stopped at an earlier byte than it.
    if (walk_error && !walk_error->message.empty() && open_error.offset != kNoOffset &&
        walk_error->offset < open_error.offset)
      error = *walk_error;
  } else if (failure_at != kNoOffset && failure_at > 0) {
    // No walker reads this file without opening it: the bytes before the failure, unexplained.
    writer.emit(0, 0, failure_at, RegionKind::gap, "bytes before the failure", fmt::format("{} bytes", failure_at));
    at = failure_at;
  }
  // The failure: the item that could not be read, from its start to just past the offset named.
  const uint64_t named = error.offset == kNoOffset ? at : std::max(error.offset, at);
  const uint64_t failure_end = std::min(size, std::max(named + 1, at + 1));
  if (at < size) writer.emit(0, at, failure_end - at, RegionKind::failure, "cannot be read", error.message);
  else writer.emit(0, size, 0, RegionKind::failure, "cannot be read", error.message);
  if (failure_end < size)
    writer.emit(0, failure_end, size - failure_end, RegionKind::gap, "unexplained bytes",
                fmt::format("{} bytes after the failure", size - failure_end));
  return error;
}

namespace layout {

Region describe_tensor(const Model& model, uint32_t tensor_index) {
  const Tensor& t = model.tensors[tensor_index];
  Region r;
  r.kind = (t.flags & kTensorCompanion) ? RegionKind::companion : RegionKind::tensor;
  r.label = std::string(t.name);
  const auto shape = model.shape(t);
  r.value = fmt::format("{} [{}] {} bytes", type_info(t.type).name, fmt::join(shape, ", "), t.nbytes);
  return r;
}

std::vector<Span> tensor_spans(const Model& model, uint32_t file_index) {
  std::vector<Span> spans;
  for (uint32_t i = 0; i < model.tensors.size(); ++i) {
    const Tensor& t = model.tensors[i];
    if (t.file == file_index) spans.push_back(Span{t.offset, t.nbytes, i});
  }
  return spans;
}

std::string shorten(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<uint8_t>(text[cut]) & 0xC0) == 0x80) --cut;   // not inside a UTF-8 sequence
  return std::string(text.substr(0, cut)) + "...";
}

}   // namespace layout
}   // namespace akview
