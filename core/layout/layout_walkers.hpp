// The per-container walkers behind walk_layout (layout.cpp dispatches through a table of them).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/layout/region_writer.hpp"
#include "core/model.hpp"
#include "core/result.hpp"

namespace akview::layout {

Status walk_gguf(const Model& model, uint32_t file_index, RegionWriter& writer);
// A GGUF file that did not open: its header's regions up to the first item that cannot be read or
// that holds `failure_at` (kNoOffset: none known). Returns where that item starts, with the walk's own
// error when it could not read it (an empty Error when it read but holds `failure_at`), or the end of
// the tensor infos and nullopt when every item reads.
std::pair<uint64_t, std::optional<Error>> walk_gguf_prefix(std::span<const uint8_t> bytes, std::string_view path,
                                                           uint64_t failure_at, RegionWriter& writer);
Status walk_safetensors(const Model& model, uint32_t file_index, RegionWriter& writer);
Status walk_json_file(const Model& model, uint32_t file_index, RegionWriter& writer);
Status walk_pytorch_zip(const Model& model, uint32_t file_index, RegionWriter& writer);
Status walk_pytorch_legacy(const Model& model, uint32_t file_index, RegionWriter& writer);

// The members of the JSON object or array in bytes [begin, end) of `file` (absolute offsets):
// one `entry` region per member (the key through the end of its value; `metadata` for
// __metadata__), `json_syntax` for braces, commas and whitespace, and each container member's own
// members below it while `levels` > 1. The region for [begin, end) itself is the caller's.
Status walk_json_members(std::span<const uint8_t> file, std::string_view path, uint64_t begin, uint64_t end,
                         uint8_t depth, int levels, RegionWriter& writer);

// One tensor's data region: kind tensor/companion, its name, and "type [shape] N bytes".
Region describe_tensor(const Model& model, uint32_t tensor_index);
// The tensor spans of one file (index = tensor index).
std::vector<Span> tensor_spans(const Model& model, uint32_t file_index);

// A pickle program starting at `begin` (absolute): its end just past STOP, or an error.
Result<uint64_t> pickle_end(std::span<const uint8_t> file, std::string_view path, uint64_t begin, uint64_t limit);
// One `opcode` region per opcode of the pickle in [begin, end), its argument as the value.
Status walk_pickle_opcodes(std::span<const uint8_t> file, std::string_view path, uint64_t begin, uint64_t end,
                           uint8_t depth, RegionWriter& writer);

// A little-endian unsigned integer of `n` <= 8 bytes at `at` (the caller checked the bounds).
inline uint64_t load_le(std::span<const uint8_t> b, uint64_t at, int n) {
  uint64_t v = 0;
  for (int i = n; i-- > 0;) v = (v << 8) | b[at + i];
  return v;
}

// Text shortened for a region value: control bytes kept (the printers escape them), at most
// `max_bytes` bytes, never cutting a UTF-8 sequence, "..." when shortened.
std::string shorten(std::string_view text, size_t max_bytes = 96);

}   // namespace akview::layout
