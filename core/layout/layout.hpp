// `akview layout`: every file of an opened model as annotated regions (region.hpp), for every
// container akview opens: SafeTensors, GGUF (and split parts), shard indexes and other JSON files
// (config.json, Ollama manifests), PyTorch zip and legacy checkpoints with their pickles as opcodes.
// The walkers reuse what the parsers read (tensor offsets, metadata, zip directory) and walk the
// header bytes themselves where the parser keeps no offsets; they only run on a model that opened,
// and they stream: nothing grows with the file beyond one list of tensor spans.
#pragma once

#include <cstdint>
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

}  // namespace akview
