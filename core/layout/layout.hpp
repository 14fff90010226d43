// `akview layout`: every file of an opened model as annotated regions (region.hpp), for every
// container akview opens: SafeTensors, GGUF (and split parts), shard indexes and other JSON files
// (config.json, Ollama manifests), PyTorch zip and legacy checkpoints with their pickles as opcodes.
// The walkers reuse what the parsers read (tensor offsets, metadata, zip directory) and walk the
// header bytes themselves where the parser keeps no offsets; they only run on a model that opened,
// and they stream: nothing grows with the file beyond one list of tensor spans.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/layout/region.hpp"
#include "core/model.hpp"
#include "core/result.hpp"

namespace akview {

// What a file of the model is, told by its content.
enum class LayoutFormat : uint8_t { gguf, safetensors, json, pytorch_zip, pytorch_legacy, opaque };
std::string_view layout_format_name(LayoutFormat format);
LayoutFormat detect_layout_format(const Model& model, uint32_t file_index);

// Emits the regions of `model.files[file_index]` in file order, parents before children. Fails
// (file, offset, rule) when the bytes do not hold what the parser read, e.g. a file rewritten
// since it was opened.
Status walk_layout(const Model& model, uint32_t file_index, const RegionSink& sink);

// A file that does not open (`open_error` says why), laid out as far as it makes sense: the regions
// its header holds up to the first failure (GGUF; other files have none), the failure as a region of
// its own (kind `failure`, the message as its value), and the bytes after it as one `gap` of
// unexplained bytes. A byte inspector is needed most on a file that does not open. Returns the
// failure: `open_error`, or the walk's own error where it stopped at an earlier byte.
Error walk_unopened_layout(std::span<const uint8_t> bytes, std::string_view path, const Error& open_error,
                           const RegionSink& sink);

}   // namespace akview
