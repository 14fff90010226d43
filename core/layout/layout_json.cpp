// JSON layout: the SafeTensors header's entries (FORMATS.md §1.1) and whole JSON files (shard
// indexes §1.7, config.json §3.5, Ollama manifests §4.2) as one region per member, nested a few
// levels deep. Each level is read again with the pull parser over just its own bytes, so the
// walk streams: a weight_map of a million lines is never held.
#include <fmt/format.h>

#include "core/json_reader.hpp"
#include "core/layout/layout_walkers.hpp"

namespace akview::layout {
namespace {

constexpr std::string_view kMetadataKey = "__metadata__";
constexpr int kFileLevels = 3;   // a JSON file: members, their members, and one level more

// The value's source text with runs of whitespace folded, shortened for a region value.
std::string compact(std::span<const uint8_t> file, uint64_t begin, uint64_t end) {
  std::string out;
  bool in_string = false, escaped = false, space = false;
  for (uint64_t i = begin; i < end && out.size() < 97; ++i) {
    const char c = static_cast<char>(file[i]);
    if (in_string) {
      out += c;
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      space = true;
      continue;
    }
    if (space && !out.empty() && c != ',' && c != ':' && c != '}' && c != ']' && out.back() != ':' &&
        out.back() != ',' && out.back() != '{' && out.back() != '[')
      out += ' ';
    space = false;
    out += c;
    if (c == '"') in_string = true;
  }
  return shorten(out, 96);
}

// The label of a run of JSON punctuation: its non-blank characters ("{", ",", "}").
std::string syntax_label(std::span<const uint8_t> file, uint64_t begin, uint64_t end) {
  std::string out;
  for (uint64_t i = begin; i < end && out.size() < 8; ++i)
    if (file[i] != ' ' && file[i] != '\n' && file[i] != '\r' && file[i] != '\t') out += static_cast<char>(file[i]);
  return out;
}

}   // namespace

Status walk_json_members(std::span<const uint8_t> file, std::string_view path, uint64_t begin, uint64_t end,
                         uint8_t depth, int levels, RegionWriter& w) {
  JsonReader reader(file.subspan(begin, end - begin), path, begin);
  JsonToken tok;
  if (!reader.next(tok)) return reader.error();
  const bool is_object = tok.kind == JsonKind::object_begin;
  if (!is_object && tok.kind != JsonKind::array_begin) return {};
  uint64_t cursor = begin;
  for (uint64_t index = 0; !w.stopped(); ++index) {
    if (!reader.next(tok)) return reader.error();
    if (tok.kind == JsonKind::object_end || tok.kind == JsonKind::array_end) {
      const uint64_t close_end = tok.offset + 1;
      if (close_end > cursor)
        w.emit(depth, cursor, close_end - cursor, RegionKind::json_syntax, syntax_label(file, cursor, close_end), "");
      cursor = close_end;
      break;
    }
    const uint64_t member_at = tok.offset;
    std::string label = is_object ? std::string(tok.text) : fmt::format("[{}]", index);
    if (is_object && !reader.next(tok)) return reader.error();
    const uint64_t value_at = tok.offset;
    const JsonKind value_kind = tok.kind;
    if (!reader.skip_value(tok)) return reader.error();
    const uint64_t member_end = reader.file_offset();
    if (member_at > cursor)
      w.emit(depth, cursor, member_at - cursor, RegionKind::json_syntax, syntax_label(file, cursor, member_at), "");
    const RegionKind kind = is_object && depth <= 1 && label == kMetadataKey ? RegionKind::metadata : RegionKind::entry;
    w.emit(depth, member_at, member_end - member_at, kind, shorten(label, 200), compact(file, value_at, member_end));
    const bool container = value_kind == JsonKind::object_begin || value_kind == JsonKind::array_begin;
    if (container && levels > 1) {
      // The member's children: the key (and colon) as syntax, then the value's own members.
      if (value_at > member_at)
        w.emit(static_cast<uint8_t>(depth + 1), member_at, value_at - member_at, RegionKind::key, "key",
               shorten(label, 200));
      AKV_TRY(walk_json_members(file, path, value_at, member_end, static_cast<uint8_t>(depth + 1), levels - 1, w));
    }
    cursor = member_end;
  }
  if (end > cursor && !w.stopped())
    w.emit(depth, cursor, end - cursor, RegionKind::padding, "whitespace", fmt::format("{} bytes", end - cursor));
  return {};
}

Status walk_json_file(const Model& model, uint32_t file_index, RegionWriter& w) {
  const SourceFile& f = model.files[file_index];
  const auto bytes = f.map.bytes();
  if (bytes.empty()) return {};
  // A blob that only starts like JSON (an Ollama template "{{ .Prompt }}") is shown as text.
  JsonReader check(bytes, f.path, 0);
  JsonToken tok;
  while (check.next(tok) && tok.kind != JsonKind::end) {}
  if (!check.ok()) {
    w.emit(0, 0, bytes.size(), RegionKind::text, f.role,
           shorten(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), 64));
    return {};
  }
  w.emit(0, 0, bytes.size(), RegionKind::json, f.role, fmt::format("{} bytes of JSON", bytes.size()));
  return walk_json_members(bytes, f.path, 0, bytes.size(), 1, kFileLevels, w);
}

}   // namespace akview::layout
