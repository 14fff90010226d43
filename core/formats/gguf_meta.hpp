// GGUF metadata values (FORMATS.md §2.3): the value-type table and a reader for one value,
// shared by the header parser (gguf.cpp) and the on-demand array decoder (read_gguf_array).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/byte_reader.hpp"
#include "core/model.hpp"
#include "core/result.hpp"

namespace akview {

inline constexpr uint32_t kGgufValueTypeCount = 13;   // gguf_type 0..12
// Arrays of arrays are legal in the spec (ggml refuses them); nesting beyond this is refused so a
// hostile file cannot drive the recursion deep.
inline constexpr int kGgufMaxArrayDepth = 8;

struct GgufValueType {
  MetaType type;
  uint8_t fixed_bytes;   // 0 for STRING and ARRAY
  uint8_t min_bytes;     // the fewest bytes one value can occupy (for count checks)
  bool is_signed;
  bool is_float;
};
// Row for a gguf_type code, or nullptr when the code is not 0..12.
const GgufValueType* gguf_value_type(uint64_t code);

// Where notes about a value go (invalid UTF-8, bool bytes other than 0/1, nested arrays);
// `notes` may be null (on-demand decoding reports nothing).
struct GgufValueContext {
  std::vector<Note>* notes = nullptr;
  std::string_view what;   // "metadata key 'x'", for messages
};

// Reads one value of gguf type `type` at the reader's position into `out`. Strings are views into
// the reader's bytes; arrays are walked (never materialised) and kept as a byte range.
// `depth` is the nesting level of the value being read (0 for a key's own value).
Status read_gguf_value(ByteReader& reader, MetaType type, int depth, const GgufValueContext& ctx, MetaValue& out);

// The value of an integer-typed entry of any width/signedness (split.no may be u16, i32, u64 ...);
// nullopt for non-integers and for u64 values above INT64_MAX.
std::optional<int64_t> meta_integer(const MetaValue& value);

bool is_valid_utf8(std::string_view text);

}   // namespace akview
