// Rendering of `akview layout`: regions streamed one per line (text indented by depth, or JSON
// objects written as they come, so a header of a million tensors never becomes one string), and
// one block's fields.
#include <fmt/format.h>

#include "core/layout/layout.hpp"
#include "ui/batch/printers.hpp"

namespace akview {
namespace {

// A JSON string: quoted directly when it needs no escaping (the common case: a million regions
// must not build a million JSON objects), else through the JSON writer (escapes, invalid UTF-8).
void append_json_string(std::string& out, std::string_view s) {
  bool plain = true;
  for (unsigned char c : s) plain = plain && c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
  if (plain) {
    out += '"';
    out += s;
    out += '"';
  } else {
    out += dump_json(nlohmann::json(std::string(s)), -1);
  }
}

// One region as `{"offset":..,"size":..,"depth":..,"kind":"..","label":"..","value":".."}`.
std::string region_json(const Region& r) {
  std::string line = fmt::format("{{\"offset\":{},\"size\":{},\"depth\":{},\"kind\":\"{}\",\"label\":", r.offset,
                                 r.size, r.depth, region_kind_name(r.kind));
  append_json_string(line, r.label);
  line += ",\"value\":";
  append_json_string(line, r.value);
  line += '}';
  return line;
}

// `{"file": .., "size": .., "regions": [` one region per line `]` (the closing brace is the caller's).
Status print_file_json(std::FILE* out, const Model& model, uint32_t file) {
  const SourceFile& f = model.files[file];
  fmt::print(out, "{{\"file\": {}, \"size\": {}, \"regions\": [", dump_json(f.path, -1), f.map.size());
  bool first = true;
  Status s = walk_layout(model, file, [&](const Region& r) {
    fmt::print(out, "{}\n  {}", first ? "" : ",", region_json(r));
    first = false;
    return true;
  });
  fmt::print(out, "\n]");
  return s;
}

// offset, size, then the region indented by depth: its kind, and its label and value where they add to it.
std::string region_text(const Region& r) {
  std::string line =
      fmt::format("{:#010x} {:>10}  {}{}", r.offset, r.size, std::string(2 * r.depth, ' '), region_kind_name(r.kind));
  if (!r.label.empty() && r.label != region_kind_name(r.kind)) line += " " + escape_for_terminal(r.label);
  if (!r.value.empty() && r.value != r.label) line += " = " + escape_for_terminal(r.value);
  return line;
}

Status print_file_text(std::FILE* out, const Model& model, uint32_t file) {
  const SourceFile& f = model.files[file];
  fmt::print(out, "# {} ({}, {} bytes)\n", escape_for_terminal(f.path),
             layout_format_name(detect_layout_format(model, file)), f.map.size());
  return walk_layout(model, file, [&](const Region& r) {
    fmt::print(out, "{}\n", region_text(r));
    return true;
  });
}

}   // namespace

Status print_layout(std::FILE* out, const Model& model, const std::vector<uint32_t>& files, OutputFormat format) {
  if (format != OutputFormat::json) {
    for (uint32_t f : files) AKV_TRY(print_file_text(out, model, f));
    return {};
  }
  // One file: {file, size, regions}. Several (a folder, a sharded set): the first, and the others in `files`.
  for (size_t i = 0; i < files.size(); ++i) {
    if (i == 1) fmt::print(out, ", \"files\": [\n");
    if (i > 1) fmt::print(out, ",\n");
    AKV_TRY(print_file_json(out, model, files[i]));
    if (i > 0) fmt::print(out, "}}");
  }
  fmt::print(out, "{}}}\n", files.size() > 1 ? "]" : "");
  return {};
}

Error print_unopened_layout(std::FILE* out, const std::string& path, std::span<const uint8_t> bytes,
                            const Error& open_error, OutputFormat format) {
  if (format == OutputFormat::json) {
    fmt::print(out, "{{\"file\": {}, \"size\": {}, \"opened\": false, \"regions\": [", dump_json(path, -1),
               bytes.size());
    bool first = true;
    Error e = walk_unopened_layout(bytes, path, open_error, [&](const Region& r) {
      fmt::print(out, "{}\n  {}", first ? "" : ",", region_json(r));
      first = false;
      return true;
    });
    fmt::print(out, "\n]}}\n");
    return e;
  }
  fmt::print(out, "# {} (does not open, {} bytes)\n", escape_for_terminal(path), bytes.size());
  return walk_unopened_layout(bytes, path, open_error, [&](const Region& r) {
    fmt::print(out, "{}\n", region_text(r));
    return true;
  });
}

nlohmann::json to_json(const BlockReport& r) {
  nlohmann::json fields = nlohmann::json::array();
  for (const auto& f : r.fields)
    fields.push_back({{"name", f.name},
                      {"offset", f.offset},
                      {"size", f.size},
                      {"hex", f.hex},
                      {"value", f.value},
                      {"meaning", f.meaning}});
  return {{"name", r.name},
          {"type", r.type},
          {"offset", r.offset},
          {"nbytes", r.nbytes},
          {"block_bytes", r.block_bytes},
          {"block_elems", r.block_elems},
          {"n_blocks", r.n_blocks},
          {"block", r.block},
          {"fields", fields}};
}

void print_block(std::FILE* out, const BlockReport& r, const Model& model, OutputFormat format) {
  if (format == OutputFormat::json) {
    nlohmann::json j = to_json(r);
    j["file"] = model.files[r.file].path;
    return print_json(out, j);
  }
  fmt::print(out, "{} {} at {} in {}: {} bytes, {} blocks of {} elements in {} bytes\n", escape_for_terminal(r.name),
             r.type, format_offset(r.offset), escape_for_terminal(model.files[r.file].path), r.nbytes, r.n_blocks,
             r.block_elems, r.block_bytes);
  fmt::print(out, "block {}\n", r.block);
  for (const auto& f : r.fields) {
    fmt::print(out, "  {:<12} {:>10} {:>4} B  {}\n", escape_for_terminal(f.name), format_offset(f.offset), f.size,
               escape_for_terminal(f.meaning));
    fmt::print(out, "  {:<12} hex   {}\n", "", f.hex);
    if (!f.value.empty()) fmt::print(out, "  {:<12} value {}\n", "", escape_for_terminal(f.value));
  }
}

}   // namespace akview
