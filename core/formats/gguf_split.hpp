// Split (sharded) GGUF sets, FORMATS.md §2.5: `<base>-%05d-of-%05d.gguf`, 1-based part numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/formats/format.hpp"

namespace akview {

struct GgufSplitName {
  std::string dir;     // directory prefix including the trailing '/', or empty
  std::string base;    // file name before "-0000i-of-0000N.gguf"
  uint32_t part = 0;   // 1-based
  uint32_t count = 0;
};

// Recognises a split-set file name; nullopt for any other name.
std::optional<GgufSplitName> parse_gguf_split_name(std::string_view path);
// The path of part `part` (1-based) of the set.
std::string gguf_split_path(const GgufSplitName& name, uint32_t part);
// Opens every part of the set and checks split.no / split.count / split.tensors.count.
Result<Model> open_gguf_split(const GgufSplitName& name, const OpenOptions& options);

}   // namespace akview
