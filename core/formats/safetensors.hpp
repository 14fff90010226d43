// SafeTensors in the format table: a single file (FORMATS.md §1.1-1.6), a sharded checkpoint through
// model.safetensors.index.json (§1.7), or a folder holding either. The openers here call down to the
// index opener (safetensors_index.hpp) and the one-file parser (safetensors_file.hpp), never back up.
#pragma once

#include "core/formats/format.hpp"
#include "core/formats/safetensors_file.hpp"

namespace akview {

bool sniff_safetensors(const Probe& probe);
bool sniff_safetensors_dir(const Probe& probe);
Result<Model> open_safetensors(const Probe& probe, const OpenOptions& options);
// A directory with model.safetensors.index.json (sharded) or model.safetensors, or an index file itself.
Result<Model> open_safetensors_dir(const Probe& probe, const OpenOptions& options);

}   // namespace akview
