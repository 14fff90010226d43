// Sharded SafeTensors checkpoints through model.safetensors.index.json (FORMATS.md §1.7).
#pragma once

#include <string>
#include <string_view>

#include "core/formats/format.hpp"

namespace akview {

// True for a path naming an index file (`*.safetensors.index.json`).
bool is_safetensors_index_name(std::string_view path);
// Opens the index at `index_path` and every shard it names, and checks that they agree.
Result<Model> open_safetensors_index(const std::string& index_path, const OpenOptions& options);

}   // namespace akview
