// SafeTensors: single files (FORMATS.md §1.1-1.6) and sharded checkpoints through
// model.safetensors.index.json (§1.7).
#pragma once

#include "core/formats/format.hpp"

namespace akview {

bool sniff_safetensors(const Probe& probe);
bool sniff_safetensors_dir(const Probe& probe);
Result<Model> open_safetensors(const Probe& probe, const OpenOptions& options);
// A directory with model.safetensors.index.json (sharded) or model.safetensors, or an index file itself.
Result<Model> open_safetensors_dir(const Probe& probe, const OpenOptions& options);

// Parses one safetensors file into `model` (appending a SourceFile and its tensors).
// Used by the single-file, sharded, MLX and Ollama-blob openers. Returns the file index.
Result<uint32_t> add_safetensors_file(Model& model, const std::string& path, const std::string& role);

}  // namespace akview
