// Sharded SafeTensors checkpoints through model.safetensors.index.json (FORMATS.md §1.7).
#pragma once

#include <string>
#include <string_view>

#include "core/formats/format.hpp"

namespace akview {

// True for a path naming an index file (`*.safetensors.index.json`).
bool is_safetensors_index_name(std::string_view path);
// True for a file name written as one shard of a set: NAME-00001-of-00004.safetensors.
bool is_safetensors_shard_name(std::string_view name);
// Opens the index at `index_path` and every shard it names, and checks that they agree. The headers
// are parsed on `threads` threads (<= 0: the machine's, at most 8); the model, its notes and its
// error are the same for any number.
Result<Model> open_safetensors_index(const std::string& index_path, const OpenOptions& options, int threads = 0);

}   // namespace akview
