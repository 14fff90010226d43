// The Header pane's model (PRODUCT.md "The terminal UI" pane 2): the metadata of a Model as a tree
// of nodes in display order — one section per source (the tokenizer summary first for GGUF, then
// each source file's keys, config.json, the Ollama manifest), keys, nested JSON objects and arrays —
// and the raw text of each source. GGUF array elements are no nodes: the pane reads the ones on
// screen (read_gguf_array_range), so a 250k-token vocabulary costs one node.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.hpp"
#include "ui/tui/theme.hpp"

namespace akview::tui {

enum class HeaderNodeKind : uint8_t {
  section,   // one source: "gguf · model (m.gguf)", "tokenizer", "config.json"
  entry,     // a Model::meta entry (GGUF arrays unfold into element rows read on demand)
  json,      // a member or element of a JSON value (config.json, the manifest, JSON metadata)
  summary,   // a line of the tokenizer summary
};

struct HeaderNode {
  HeaderNodeKind kind = HeaderNodeKind::entry;
  uint8_t depth = 0;
  bool folded = false;
  uint32_t parent = kNone;
  uint32_t end = 0;        // one past the last descendant (nodes are in pre-order)
  uint32_t meta = kNone;   // Model::meta index of an entry
  std::string key;         // JSON members carry their dotted path ("rope_scaling.factor")
  std::string type;        // "UINT32", "ARRAY[STRING]", "object", "token" (tokenizer)
  std::string value;       // display text ("[151936]" for a folded array)
  Role value_role = Role::normal;
  uint64_t elements = 0;   // a GGUF array's element count (its rows when unfolded)

  bool gguf_array() const { return elements > 0; }
  bool foldable(uint32_t self) const { return end > self + 1 || gguf_array(); }
};

// One line of the raw view: a line of a source's text, a title, or a GGUF key (formatted on draw).
struct RawLine {
  std::string_view text;   // the line as it is in the file (no newline), or the title
  uint32_t meta = kNone;   // GGUF: "0x00000018  key TYPE value" from this Model::meta entry
  bool title = false;
};

struct HeaderTree {
  std::vector<HeaderNode> nodes;
  std::deque<std::string> owned;   // text the model does not hold (a folder's config.json, titles)
  std::string config_text;         // <dir>/config.json when no SourceFile holds it (empty otherwise)
  std::string config_path;
};

// The tree of `model`'s metadata (reads <dir>/config.json, at most 16 MiB, when the model is a folder
// whose config is in no SourceFile). Decodes at most a dozen array elements (the tokenizer summary).
HeaderTree build_header_tree(const Model& model);
// The raw lines of every source, in file order (text sources are split at '\n', never copied).
std::vector<RawLine> build_raw_lines(const Model& model, HeaderTree& tree);

// Display text and role of one scalar metadata value (strings as they are: the canvas escapes).
std::string meta_value_text(const MetaValue& v);
Role meta_value_role(const MetaValue& v);
// "UINT32", "ARRAY[STRING]", "ARRAY[ARRAY[…]]" (an array of arrays, whatever their elements).
std::string meta_type_label(const MetaValue& v);

}   // namespace akview::tui
