// GGUF v2/v3 (FORMATS.md §2.1-2.6), single files and split sets (§2.5).
#pragma once

#include <vector>

#include "core/formats/format.hpp"

namespace akview {

bool sniff_gguf(const Probe& probe);
bool sniff_gguf_dir(const Probe& probe);
// A .gguf file; a part of a split set (-0000i-of-0000N.gguf) opens the whole set.
Result<Model> open_gguf(const Probe& probe, const OpenOptions& options);
Result<Model> open_gguf_dir(const Probe& probe, const OpenOptions& options);

// Parses one GGUF file into `model` (appending a SourceFile, metadata and tensors).
// Used by the single-file, split and Ollama-blob openers. Returns the file index.
Result<uint32_t> add_gguf_file(Model& model, const std::string& path, const std::string& role);

// Decodes the elements of a GGUF array value (nested arrays come back as MetaType::array values).
// At most `max_elems` elements are returned (the rest can be summarised by the caller).
Result<std::vector<MetaValue>> read_gguf_array(const Model& model, const MetaEntry& entry, const MetaValue& array,
                                               uint64_t max_elems);
// Decodes elements [first, first + max_elems) of a GGUF array value. The elements before `first`
// are skipped without being materialised, their lengths validated and bounds-checked as they go
// (string elements have no fixed size, so skipping walks them). Past the end: an empty vector.
// For pages of a tokenizer array: a 250k-string vocabulary is never decoded whole.
Result<std::vector<MetaValue>> read_gguf_array_range(const Model& model, const MetaEntry& entry, const MetaValue& array,
                                                     uint64_t first, uint64_t max_elems);

}   // namespace akview
