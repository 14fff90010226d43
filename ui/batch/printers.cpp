// Text / JSON / CSV rendering of the batch reports. The JSON field names are the stable interface
// documented in README.md ("JSON reference").
#include "ui/batch/printers.hpp"

#include <fmt/format.h>

namespace akview {
namespace {

nlohmann::json offset_json(uint64_t offset) {
  return offset == kNoOffset ? nlohmann::json(nullptr) : nlohmann::json(offset);
}

}   // namespace

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

namespace {

std::string note_line(const NoteRow& n) {
  std::string where = n.offset == kNoOffset ? escape_for_terminal(n.file)
                                            : fmt::format("{}@{:#x}", escape_for_terminal(n.file), n.offset);
  return fmt::format("{}: {}", where, escape_for_terminal(n.message));
}

std::string type_label(const TensorRow& r) {
  if (r.group_size) return fmt::format("{} {}-bit g{}", r.type, r.bits, r.group_size);
  return r.type;
}

}   // namespace

nlohmann::json to_json(const NoteRow& n) {
  return {{"code", n.code},
          {"file", n.file},
          {"offset", offset_json(n.offset)},
          {"message", n.message},
          {"fails_check", n.fails_check}};
}

nlohmann::json to_json(const InfoReport& r) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : r.files)
    files.push_back({{"path", f.path},
                     {"role", f.role},
                     {"size", f.size},
                     {"header_bytes", f.header_bytes},
                     {"data_offset", f.data_offset}});
  nlohmann::json types = nlohmann::json::array();
  for (const auto& t : r.types)
    types.push_back({{"type", t.type}, {"tensors", t.tensors}, {"parameters", t.parameters}, {"bytes", t.bytes}});
  nlohmann::json notes = nlohmann::json::array();
  for (const auto& n : r.notes) notes.push_back(to_json(n));
  return {{"path", r.path},
          {"format", r.format},
          {"architecture", r.architecture.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.architecture)},
          {"name", r.name.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.name)},
          {"files", files},
          {"tensors", r.tensors},
          {"parameters", r.parameters},
          {"bytes", r.bytes},
          {"metadata_keys", r.metadata_keys},
          {"types", types},
          {"notes", notes}};
}

namespace {

void write_json(JsonWriter& w, const MetaRow& r) {
  const bool array = r.type.rfind("ARRAY", 0) == 0;
  w.begin_object();   // members in key order (nlohmann's sorted objects)
  if (array) w.field("count", r.count);
  w.field("file", r.file);
  w.field("key", r.key);
  w.field("offset", r.offset);
  w.field("source", r.source);
  if (array) w.field("truncated", r.truncated);
  w.field("type", r.type);
  w.field("value", r.value);
  w.end_object();
}

}   // namespace

nlohmann::json to_json(const CheckReport& r) {
  nlohmann::json problems = nlohmann::json::array(), warnings = nlohmann::json::array();
  for (const auto& n : r.problems) problems.push_back(to_json(n));
  for (const auto& n : r.warnings) warnings.push_back(to_json(n));
  return {{"path", r.path},       {"ok", r.ok()},         {"format", r.format},
          {"files", r.files},     {"tensors", r.tensors}, {"values_scanned", r.values_scanned},
          {"problems", problems}, {"warnings", warnings}};
}

void print_info(std::FILE* out, const InfoReport& r, OutputFormat format) {
  if (format == OutputFormat::json) return print_json(out, to_json(r));
  fmt::print(out, "path        {}\n", escape_for_terminal(r.path));
  fmt::print(out, "format      {}\n", r.format);
  if (!r.architecture.empty()) fmt::print(out, "arch        {}\n", escape_for_terminal(r.architecture));
  if (!r.name.empty()) fmt::print(out, "name        {}\n", escape_for_terminal(r.name));
  fmt::print(out, "tensors     {}\n", r.tensors);
  fmt::print(out, "parameters  {} ({})\n", r.parameters, format_count(r.parameters));
  fmt::print(out, "bytes       {} ({})\n", r.bytes, format_bytes(r.bytes));
  fmt::print(out, "metadata    {} keys\n", r.metadata_keys);
  fmt::print(out, "files       {}\n", r.files.size());
  for (const auto& f : r.files)
    fmt::print(out, "  {:<12} {:>12}  header {:>10}  {}\n", f.role, format_bytes(f.size), format_bytes(f.header_bytes),
               escape_for_terminal(f.path));
  fmt::print(out, "types\n");
  for (const auto& t : r.types)
    fmt::print(out, "  {:<12} {:>6} tensors  {:>10} params  {:>12}\n", t.type, t.tensors, format_count(t.parameters),
               format_bytes(t.bytes));
  for (const auto& n : r.notes) fmt::print(out, "note: {}\n", note_line(n));
}

namespace {

// `s` padded with blanks to `width` columns, as fmt's {:<N} / {:>N}: printable ASCII directly (one
// column a byte), anything else through fmt, whose display-width scan cost a third of a listing.
void append_padded(fmt::memory_buffer& buf, std::string_view s, size_t width, bool right) {
  static constexpr std::string_view kBlanks =
      "                                                                        ";
  if (s.size() >= width || width - s.size() > kBlanks.size() || !printable_ascii(s)) {
    if (right) fmt::format_to(fmt::appender(buf), "{:>{}}", s, width);
    else fmt::format_to(fmt::appender(buf), "{:<{}}", s, width);
    return;
  }
  const std::string_view pad = kBlanks.substr(0, width - s.size());
  if (right) buf.append(pad);
  buf.append(s);
  if (!right) buf.append(pad);
}

void write_json(JsonWriter& w, const TensorRow& r) {
  w.begin_object();   // members in key order (README "JSON reference", nlohmann's sorted objects)
  if (r.group_size) w.field("bits", r.bits);
  w.field("bits_per_weight", r.bits_per_weight);
  w.field("canonical", r.canonical);
  if (r.companion) w.field("companion", true);
  w.field("file", r.file);
  if (r.group_size) w.field("group_size", r.group_size);
  w.field("name", r.name);
  w.field("nbytes", r.nbytes);
  w.field("offset", r.offset);
  w.field("parameters", r.parameters);
  w.field("shape", r.shape);
  w.field("type", r.type);
  if (r.unsupported) w.field("unsupported", true);
  w.end_object();
}

}   // namespace

Status print_tensors(std::FILE* out, const RangedRows<TensorRow>& ranged, OutputFormat format) {
  if (format == OutputFormat::json)
    return print_json_rows(out, ranged, [](JsonWriter& w, const TensorRow& r) { write_json(w, r); });
  if (format == OutputFormat::csv) {
    fmt::print(out, "name,canonical,type,shape,parameters,nbytes,bits_per_weight,file,offset\n");
    return print_text_rows(out, ranged, [](fmt::memory_buffer& buf, const TensorRow& r) {
      fmt::format_to(fmt::appender(buf), "{},{},{},{},{},{},{:.4f},{},{}\n", csv_field(r.name),
                     csv_field(r.canonical.value_or("")), csv_field(type_label(r)), csv_field(format_shape(r.shape)),
                     r.parameters, r.nbytes, r.bits_per_weight, csv_field(r.file), r.offset);
    });
  }
  // A first pass measures the name column (chunks on two threads, as the rows themselves).
  struct Widest {
    size_t width = 0;
    Status status;
  };
  size_t name_w = 4;
  AKV_TRY(in_ordered_chunks<Widest>(
      ranged.positions,
      [&](size_t begin, size_t end, Widest& w) {
        w.width = 0;
        w.status = ranged.range(begin, end, [&](const TensorRow& r) {
          w.width = std::max(w.width, escaped_size(r.name) + (r.companion ? 2 : 0));
        });
      },
      [&](Widest& w) {
        name_w = std::max(name_w, w.width);
        return w.status;
      }));
  name_w = std::min<size_t>(name_w, 72);
  fmt::print(out, "{:<{}}  {:<18} {:<20} {:>10} {:>11} {:>6}  {:>12}\n", "name", name_w, "type", "shape", "params",
             "bytes", "bpw", "offset");
  // The row is fmt's "{:<N}  {:<18} {:<20} {:>10} {:>11} {:>6.2f}  {:>12}" cell by cell.
  return print_text_rows(out, ranged, [name_w](fmt::memory_buffer& buf, const TensorRow& r) {
    append_padded(buf, (r.companion ? "  " : "") + escape_for_terminal(r.name), name_w, false);
    buf.append(std::string_view("  "));
    append_padded(buf, type_label(r), 18, false);
    buf.push_back(' ');
    append_padded(buf, format_shape(r.shape), 20, false);
    buf.push_back(' ');
    append_padded(buf, format_count(r.parameters), 10, true);
    buf.push_back(' ');
    append_padded(buf, format_bytes(r.nbytes), 11, true);
    fmt::format_to(fmt::appender(buf), " {:>6.2f}  ", r.bits_per_weight);
    append_padded(buf, format_offset(r.offset), 12, true);
    if (r.unsupported) buf.append(std::string_view("  (unsupported)"));
    buf.push_back('\n');
  });
}

Status print_meta(std::FILE* out, const RowStream<MetaRow>& rows, OutputFormat format, bool single_key) {
  if (single_key) {   // the rows of one key (one, unless several files hold it): an object when one
    auto kept = collect_rows(rows);
    if (!kept) return std::move(kept).error();
    if (kept->size() == 1) {
      const MetaRow& r = kept->front();
      if (format == OutputFormat::json) {
        JsonWriter w(out);
        write_json(w, r);
        w.end_document();
        return Status();
      }
      if (format == OutputFormat::text && r.value.is_string()) {
        fmt::print(out, "{}\n", escape_for_terminal(r.value.get<std::string>()));
        return Status();
      }
    }
    return print_meta(out, rows_of(*kept), format, false);
  }
  if (format == OutputFormat::json)
    return print_json_rows(out, rows, [](JsonWriter& w, const MetaRow& r) { write_json(w, r); });
  if (format == OutputFormat::csv) {
    fmt::print(out, "key,type,value,source\n");
    return rows([&](const MetaRow& r) {
      fmt::print(out, "{},{},{},{}\n", csv_field(r.key), csv_field(r.type), csv_field(dump_json(r.value, -1)),
                 r.source);
    });
  }
  size_t key_w = 3;   // a first pass measures the key column
  AKV_TRY(rows([&](const MetaRow& r) { key_w = std::max(key_w, r.key.size()); }));
  key_w = std::min<size_t>(key_w, 60);
  return rows([&](const MetaRow& r) {
    std::string value = escape_for_terminal(dump_json(r.value, -1));
    if (r.truncated) value += fmt::format(" … ({} elements)", r.count);
    fmt::print(out, "{:<{}}  {:<16} {}\n", escape_for_terminal(r.key), key_w, r.type, value);
  });
}

void print_check(std::FILE* out, const CheckReport& r, OutputFormat format) {
  if (format == OutputFormat::json) return print_json(out, to_json(r));
  for (const auto& n : r.problems) fmt::print(out, "{}\n", note_line(n));
  for (const auto& n : r.warnings) fmt::print(out, "warning: {}\n", note_line(n));
  if (r.ok())
    fmt::print(out, "ok: {} ({}, {} files, {} tensors)\n", escape_for_terminal(r.path), r.format, r.files, r.tensors);
}

}   // namespace akview
