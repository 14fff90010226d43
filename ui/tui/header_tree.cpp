// The Header pane's tree and raw lines (header_tree.hpp).
#include "ui/tui/header_tree.hpp"

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/formats/gguf.hpp"
#include "core/formats/gguf_meta.hpp"

namespace akview::tui {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMaxTextBytes = 16 << 20;   // text sources shown (configs, manifests, templates)
constexpr size_t kMaxJsonNodes = 200000;       // past this a JSON value is summarised, not unfolded
constexpr int kMaxJsonDepth = 32;
constexpr uint64_t kFoldAbove = 8;   // JSON objects/arrays with more children start folded
constexpr int kSampleTokens = 5;

// The special tokens the tokenizer summary names (llama.cpp's keys; "seperator" is GGUF's spelling).
struct SpecialToken {
  std::string_view label;
  std::string_view key;
};
constexpr std::array kSpecialTokens = {
    SpecialToken{"bos", "tokenizer.ggml.bos_token_id"},       SpecialToken{"eos", "tokenizer.ggml.eos_token_id"},
    SpecialToken{"unk", "tokenizer.ggml.unknown_token_id"},   SpecialToken{"pad", "tokenizer.ggml.padding_token_id"},
    SpecialToken{"sep", "tokenizer.ggml.seperator_token_id"}, SpecialToken{"eot", "tokenizer.ggml.eot_token_id"},
    SpecialToken{"eom", "tokenizer.ggml.eom_token_id"},       SpecialToken{"cls", "tokenizer.ggml.cls_token_id"},
    SpecialToken{"mask", "tokenizer.ggml.mask_token_id"},
};

std::string_view as_text(std::span<const uint8_t> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

uint32_t add(HeaderTree& t, HeaderNode n) {
  const auto index = static_cast<uint32_t>(t.nodes.size());
  n.end = index + 1;
  t.nodes.push_back(std::move(n));
  return index;
}

// Closes a node opened with add(): its subtree is everything added since.
void close(HeaderTree& t, uint32_t index) {
  t.nodes[index].end = static_cast<uint32_t>(t.nodes.size());
  const uint64_t children = t.nodes[index].end - index - 1;
  if (t.nodes[index].kind == HeaderNodeKind::json && children > kFoldAbove) t.nodes[index].folded = true;
}

uint32_t add_section(HeaderTree& t, std::string label) {
  HeaderNode n;
  n.kind = HeaderNodeKind::section;
  n.key = std::move(label);
  return add(t, std::move(n));
}

// JSON kinds are named as GGUF value types are (and as `akview meta` names them): in capitals.
void describe_json(const nlohmann::ordered_json& j, HeaderNode& n) {
  using V = nlohmann::ordered_json::value_t;
  switch (j.type()) {   // one display per JSON kind
    case V::object:
      n.type = "OBJECT";
      n.value = fmt::format("{{{}}}", j.size());
      n.value_role = Role::muted;
      break;
    case V::array:
      n.type = "ARRAY";
      n.value = fmt::format("[{}]", j.size());
      n.value_role = Role::muted;
      break;
    case V::string:
      n.type = "STRING";
      n.value = j.get<std::string>();
      n.value_role = Role::string;
      break;
    case V::boolean:
      n.type = "BOOL";
      n.value = j.dump();
      n.value_role = Role::type_other;
      break;
    case V::null:
      n.type = "NULL";
      n.value = "null";
      n.value_role = Role::muted;
      break;
    default:
      n.type = "NUMBER";
      n.value = j.dump();
      n.value_role = Role::number;
      break;
  }
}

// The members (or elements) of `j` as children of the node at `parent`, keys dotted from `prefix`.
void add_json_children(HeaderTree& t, uint32_t parent, const std::string& prefix, const nlohmann::ordered_json& j,
                       int depth) {
  if (!j.is_object() && !j.is_array()) return;
  size_t i = 0;
  for (auto it = j.begin(); it != j.end(); ++it, ++i) {
    if (t.nodes.size() >= kMaxJsonNodes || depth > kMaxJsonDepth) {
      HeaderNode more;
      more.kind = HeaderNodeKind::summary;
      more.depth = static_cast<uint8_t>(std::min(depth, 255));
      more.parent = parent;
      more.key = "…";
      more.value = fmt::format("{} more not shown (see the raw view)", j.size() - i);
      more.value_role = Role::muted;
      add(t, std::move(more));
      return;
    }
    HeaderNode n;
    n.kind = HeaderNodeKind::json;
    n.depth = static_cast<uint8_t>(std::min(depth, 255));
    n.parent = parent;
    n.key = j.is_object() ? (prefix.empty() ? it.key() : prefix + "." + it.key()) : fmt::format("{}[{}]", prefix, i);
    describe_json(*it, n);
    const uint32_t index = add(t, std::move(n));
    const std::string key = t.nodes[index].key;   // a copy: the recursion grows t.nodes
    add_json_children(t, index, key, *it, depth + 1);
    close(t, index);
  }
}

// A section holding a JSON document (config.json, the manifest); unparsable text is shown as one row.
void add_json_section(HeaderTree& t, std::string label, std::string_view text) {
  const uint32_t section = add_section(t, std::move(label));
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) {
    HeaderNode n;
    n.kind = HeaderNodeKind::summary;
    n.depth = 1;
    n.parent = section;
    n.key = "(not JSON)";
    n.value = std::string(text.substr(0, 4096));
    n.value_role = Role::warn;
    add(t, std::move(n));
  } else {
    add_json_children(t, section, "", j, 1);
  }
  close(t, section);
}

HeaderNode summary_row(uint32_t parent, std::string key, std::string type, std::string value, Role role) {
  HeaderNode n;
  n.kind = HeaderNodeKind::summary;
  n.depth = 1;
  n.parent = parent;
  n.key = std::move(key);
  n.type = std::move(type);
  n.value = std::move(value);
  n.value_role = role;
  return n;
}

// The text of token `id` (one element read; the ones before it skipped).
std::string token_text(const Model& model, const MetaEntry* tokens, int64_t id, Role& role) {
  role = Role::string;
  if (!tokens || tokens->value.type != MetaType::array || tokens->value.elem_type != MetaType::string) {
    role = Role::muted;
    return "(no tokenizer.ggml.tokens)";
  }
  if (id < 0 || static_cast<uint64_t>(id) >= tokens->value.count) {
    role = Role::warn;
    return "(outside the vocabulary)";
  }
  auto one = read_gguf_array_range(model, *tokens, tokens->value, static_cast<uint64_t>(id), 1);
  if (!one || one->empty()) {
    role = Role::error;
    return one ? "(unreadable)" : one.error().message;
  }
  return std::string((*one)[0].str);
}

void add_tokenizer_section(HeaderTree& t, const Model& model) {
  const MetaEntry* tok_model = model.find_meta("tokenizer.ggml.model");
  const MetaEntry* tokens = model.find_meta("tokenizer.ggml.tokens");
  if (!tok_model && !tokens) return;
  const uint32_t section = add_section(t, "tokenizer");
  for (std::string_view key : {"tokenizer.ggml.model", "tokenizer.ggml.pre"})
    if (const MetaEntry* e = model.find_meta(key); e && e->value.type == MetaType::string)
      add(t, summary_row(section, std::string(key.substr(15)), "", std::string(e->value.str), Role::string));
  if (tokens && tokens->value.type == MetaType::array)
    add(t, summary_row(section, "vocabulary", "", fmt::format("{} tokens", tokens->value.count), Role::number));
  if (const MetaEntry* merges = model.find_meta("tokenizer.ggml.merges");
      merges && merges->value.type == MetaType::array)
    add(t, summary_row(section, "merges", "", fmt::format("{}", merges->value.count), Role::number));
  for (const SpecialToken& s : kSpecialTokens) {
    const MetaEntry* e = model.find_meta(s.key);
    if (!e) continue;
    auto id = meta_integer(e->value);
    if (!id) continue;
    Role role;
    std::string text = token_text(model, tokens, *id, role);
    // The id goes with the label, so narrow panes (no type column) still show it.
    add(t, summary_row(section, fmt::format("{} id {}", s.label, *id), "TOKEN", std::move(text), role));
  }
  if (tokens && tokens->value.type == MetaType::array && tokens->value.count > 0) {
    const uint64_t n = tokens->value.count;
    // The first few and the last: what the vocabulary looks like at both ends.
    std::vector<uint64_t> ids;
    for (uint64_t k = 0; k + 1 < kSampleTokens && k < n; ++k) ids.push_back(k);
    if (n > ids.size()) ids.push_back(n - 1);
    for (uint64_t id : ids) {
      Role role;
      std::string text = token_text(model, tokens, static_cast<int64_t>(id), role);
      add(t, summary_row(section, fmt::format("token {}", id), "", std::move(text), role));
    }
  }
  close(t, section);
}

std::string read_small_file(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) > kMaxTextBytes) return {};
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

bool is_gguf(std::span<const uint8_t> b) { return b.size() >= 4 && std::memcmp(b.data(), "GGUF", 4) == 0; }

// The JSON header of a SafeTensors file ([8, 8 + N)), empty when the file is not one.
std::string_view safetensors_header(const SourceFile& f) {
  auto b = f.map.bytes();
  if (b.size() < 8) return {};
  uint64_t n = 0;
  std::memcpy(&n, b.data(), 8);
  if (n > b.size() - 8 || f.header_bytes != 8 + n) return {};
  return as_text(b.subspan(8, n));
}

void add_text_lines(std::vector<RawLine>& out, std::string_view text) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      if (start < text.size()) out.push_back(RawLine{text.substr(start), kNone, false});
      break;
    }
    out.push_back(RawLine{text.substr(start, nl - start), kNone, false});
    start = nl + 1;
  }
}

}   // namespace

std::string meta_type_label(const MetaValue& v) {
  if (v.type != MetaType::array) return std::string(meta_type_name(v.type));
  if (v.elem_type != MetaType::array) return fmt::format("ARRAY[{}]", meta_type_name(v.elem_type));
  // Arrays of arrays: the innermost element types may differ from one element to the next.
  std::string inner = "…";
  for (int d = 0; d < v.depth; ++d) inner = "ARRAY[" + inner + "]";
  return "ARRAY[" + inner + "]";
}

std::string meta_value_text(const MetaValue& v) {
  switch (v.type) {   // the union member in use depends on the type
    case MetaType::u8:
    case MetaType::u16:
    case MetaType::u32:
    case MetaType::u64: return fmt::format("{}", v.num.u);
    case MetaType::i8:
    case MetaType::i16:
    case MetaType::i32:
    case MetaType::i64: return fmt::format("{}", v.num.i);
    case MetaType::f32: return fmt::format("{}", static_cast<float>(v.num.f));
    case MetaType::f64: return fmt::format("{}", v.num.f);
    case MetaType::boolean: return v.num.u ? "true" : "false";
    case MetaType::string:
    case MetaType::json: return std::string(v.str);
    case MetaType::array: return fmt::format("[{}]", v.count);
  }
  return {};
}

Role meta_value_role(const MetaValue& v) {
  switch (v.type) {
    case MetaType::string: return Role::string;
    case MetaType::boolean: return Role::type_other;
    case MetaType::array:
    case MetaType::json: return Role::muted;
    default: return Role::number;
  }
}

HeaderTree build_header_tree(const Model& model) {
  HeaderTree t;
  add_tokenizer_section(t, model);

  // One section per (source, file), in the order the metadata lists them.
  std::vector<std::pair<std::string_view, uint32_t>> groups;
  std::map<std::pair<std::string_view, uint32_t>, std::vector<uint32_t>> members;
  std::vector<bool> file_has_meta(model.files.size(), false);
  for (uint32_t i = 0; i < model.meta.size(); ++i) {
    const MetaEntry& m = model.meta[i];
    auto key = std::make_pair(m.source, m.file);
    auto& list = members[key];
    if (list.empty()) groups.push_back(key);
    list.push_back(i);
    // An entry holding a whole file's text (an Ollama config.json layer) stands for that file.
    if (m.file < file_has_meta.size() && !m.value.str.empty() &&
        m.value.str.data() == reinterpret_cast<const char*>(model.files[m.file].map.bytes().data()))
      file_has_meta[m.file] = true;
  }
  for (const auto& g : groups) {
    std::string label(g.first);
    if (g.second < model.files.size())
      label += fmt::format(" · {} ({})", model.files[g.second].role, file_name(model.files[g.second].path));
    const uint32_t section = add_section(t, std::move(label));
    for (uint32_t i : members[g]) {
      const MetaEntry& m = model.meta[i];
      HeaderNode n;
      n.kind = HeaderNodeKind::entry;
      n.depth = 1;
      n.parent = section;
      n.meta = i;
      n.key = std::string(m.key);
      n.type = meta_type_label(m.value);
      n.value_role = meta_value_role(m.value);
      if (m.value.type == MetaType::array) {
        n.value = fmt::format("[{}]", m.value.count);
        n.elements = m.value.count;
        n.folded = true;
      }
      const uint32_t index = add(t, std::move(n));
      if (m.value.type == MetaType::json) {
        nlohmann::ordered_json j =
            nlohmann::ordered_json::parse(m.value.str.begin(), m.value.str.end(), nullptr, false);
        if (!j.is_discarded()) {
          describe_json(j, t.nodes[index]);
          t.nodes[index].type = "JSON " + t.nodes[index].type;
          add_json_children(t, index, std::string(m.key), j, 2);
        } else {
          t.nodes[index].value = std::string(m.value.str);
        }
      } else if (m.value.type != MetaType::array) {
        t.nodes[index].value = meta_value_text(m.value);
      }
      close(t, index);
    }
    close(t, section);
  }

  // config.json and the Ollama manifest, unless their text is already a metadata entry.
  bool have_config = false;
  for (uint32_t f = 0; f < model.files.size(); ++f) {
    const SourceFile& file = model.files[f];
    if (file.role != "config" && file.role != "manifest") continue;
    have_config |= file.role == "config";
    if (file_has_meta[f] || file.map.size() > kMaxTextBytes) continue;
    add_json_section(t, file.role == "config" ? "config.json" : fmt::format("manifest ({})", file_name(file.path)),
                     as_text(file.map.bytes()));
  }
  std::error_code ec;
  const std::string& disk = model.disk_path.empty() ? model.path : model.disk_path;
  if (!have_config && fs::is_directory(disk, ec)) {
    t.config_path = (fs::path(disk) / "config.json").string();
    t.config_text = read_small_file(t.config_path);
    if (!t.config_text.empty()) add_json_section(t, "config.json", t.config_text);
  }
  return t;
}

std::vector<RawLine> build_raw_lines(const Model& model, HeaderTree& tree) {
  std::vector<RawLine> out;
  auto title = [&](std::string text) {
    tree.owned.push_back(std::move(text));
    out.push_back(RawLine{tree.owned.back(), kNone, true});
  };
  for (uint32_t f = 0; f < model.files.size(); ++f) {
    const SourceFile& file = model.files[f];
    auto bytes = file.map.bytes();
    if (is_gguf(bytes)) {
      title(fmt::format("── gguf {}: {} (key TYPE value, offsets in the file) ──", file.role, file.path));
      for (uint32_t i = 0; i < model.meta.size(); ++i)
        if (model.meta[i].file == f && model.meta[i].source == "gguf") out.push_back(RawLine{{}, i, false});
    } else if (std::string_view header = safetensors_header(file); !header.empty()) {
      title(fmt::format("── safetensors header {}: {} ──", file.role, file.path));
      add_text_lines(out, header);
    } else if (bytes.size() <= kMaxTextBytes && is_valid_utf8(as_text(bytes))) {
      title(fmt::format("── {}: {} ──", file.role, file.path));
      add_text_lines(out, as_text(bytes));
    } else {
      title(fmt::format("── {}: {} ({} bytes of binary: no raw text) ──", file.role, file.path, bytes.size()));
    }
  }
  if (!tree.config_text.empty()) {
    title(fmt::format("── config.json: {} ──", tree.config_path));
    add_text_lines(out, tree.config_text);
  }
  return out;
}

}   // namespace akview::tui
