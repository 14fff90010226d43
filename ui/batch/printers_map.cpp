// Rendering of the name map with the extracted config, and of model diffs.
#include <fmt/format.h>

#include "ui/batch/printers.hpp"

namespace akview {
namespace {

nlohmann::json config_json(const ModelConfig& c) {
  nlohmann::json fields = nlohmann::json::object();
  for (const auto& f : config_fields()) {
    const ConfigValue& v = c.*(f.field);
    fields[std::string(f.name)] =
        v.present ? nlohmann::json{{"value", json_number(v.value)}, {"source", v.source}} : nlohmann::json(nullptr);
  }
  return {{"arch", c.arch.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.arch)},
          {"arch_source", c.arch_source},
          {"fields", fields},
          {"sliding_window_pattern",
           c.sliding_window_pattern.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.sliding_window_pattern)},
          {"quantization", c.quantization.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.quantization)},
          {"quantization_source", c.quantization_source}};
}

std::string shape_or_dash(const std::optional<std::vector<int64_t>>& s) { return s ? format_shape(*s) : "-"; }

}   // namespace

namespace {

void write_json(JsonWriter& w, const MapRow& m) {
  w.begin_object();
  w.field("canonical", m.canonical);
  if (m.layer < 0) w.field("layer", nullptr);
  else w.field("layer", m.layer);
  w.key("name");
  w.value(m.native);
  w.key("note");
  if (m.note.empty()) w.value(nullptr);
  else w.value(m.note);
  w.key("role");
  if (m.role.empty()) w.value(nullptr);
  else w.value(m.role);
  w.end_object();
}

}   // namespace

Status print_map(std::FILE* out, const MapReport& r, OutputFormat format) {
  uint64_t tensors = 0, unmapped = 0;
  auto count = [&](const MapRow& m) {
    ++tensors;
    unmapped += !m.canonical;
  };
  if (format == OutputFormat::json) {
    JsonWriter w(out);
    w.begin_object();
    w.field("arch", r.arch);
    w.field("config", config_json(r.config));
    w.field("path", r.path);
    w.key("tensors");
    w.begin_array();
    AKV_TRY(r.rows([&](const MapRow& m) {
      write_json(w, m);
      count(m);
    }));
    w.end_array();
    w.field("unmapped", unmapped);
    w.end_object();
    w.end_document();
    return Status();
  }
  if (format == OutputFormat::csv) {
    fmt::print(out, "name,canonical,role,layer,note\n");
    return r.rows([&](const MapRow& m) {
      fmt::print(out, "{},{},{},{},{}\n", csv_field(m.native), csv_field(m.canonical.value_or("")), m.role,
                 m.layer < 0 ? std::string() : std::to_string(m.layer), csv_field(m.note));
    });
  }
  size_t w = 4;   // a first pass measures the name column
  AKV_TRY(r.rows([&](const MapRow& m) { w = std::max(w, m.native.size()); }));
  w = std::min<size_t>(w, 64);
  AKV_TRY(r.rows([&](const MapRow& m) {
    fmt::print(out, "{:<{}}  {:<40} {:<16}{}\n", escape_for_terminal(m.native), w,
               m.canonical ? escape_for_terminal(*m.canonical) : std::string("(unmapped)"), m.role,
               m.note.empty() ? "" : "  note: " + escape_for_terminal(m.note));
    count(m);
  }));
  fmt::print(out, "{} tensors, {} unmapped\n\nconfig ({})\n", tensors, unmapped,
             r.arch.empty() ? "unknown arch" : escape_for_terminal(r.arch));
  for (const auto& f : config_fields()) {
    const ConfigValue& v = r.config.*(f.field);
    if (v.present) fmt::print(out, "  {:<16} {:<14.10g} {}\n", f.name, v.value, escape_for_terminal(v.source));
  }
  if (!r.config.quantization.empty())
    fmt::print(out, "  {:<16} {}  {}\n", "quantization", escape_for_terminal(r.config.quantization),
               escape_for_terminal(r.config.quantization_source));
  return Status();
}

namespace {

void write_json(JsonWriter& w, const DiffRow& d) {
  w.begin_object();
  w.field("canonical", d.canonical);
  if (d.error) {
    w.key("error");
    w.begin_object();
    w.field("cosine", d.error->cosine);
    w.field("elements", d.error->elements);
    w.field("max_abs", d.error->max_abs);
    w.field("rel_rmse", d.error->rel_rmse);
    w.field("rmse", d.error->rmse);
    w.end_object();
  }
  w.field("key", d.key);
  w.field("name_a", d.name_a);
  w.field("name_b", d.name_b);
  if (!d.note.empty()) w.field("note", d.note);
  w.field("shape_a", d.shape_a);
  w.field("shape_b", d.shape_b);
  w.field("shape_differs", d.shape_differs);
  w.field("type_a", d.type_a);
  w.field("type_b", d.type_b);
  w.field("type_differs", d.type_differs);
  if (!d.value_problem.empty()) w.field("value_problem", d.value_problem);
  w.end_object();
}

}   // namespace

Status print_diff(std::FILE* out, const DiffTableReport& r, OutputFormat format) {
  // A first pass without values: the counts (printed before the rows in JSON) and the key column.
  size_t only_a = 0, only_b = 0, shape_changes = 0, type_changes = 0, rows = 0, w = 3;
  if (format != OutputFormat::csv)
    AKV_TRY(r.pairs([&](const DiffRow& d) {
      ++rows;
      only_a += !d.name_b;
      only_b += !d.name_a;
      shape_changes += d.shape_differs;
      type_changes += d.type_differs;
      w = std::max(w, d.key.size());
    }));
  if (format == OutputFormat::json) {
    JsonWriter jw(out);
    jw.begin_object();
    jw.field("a", r.path_a);
    jw.field("b", r.path_b);
    jw.field("cancelled", false);   // a batch diff runs to the end
    jw.field("only_a", only_a);
    jw.field("only_b", only_b);
    jw.field("shape_changes", shape_changes);
    jw.key("tensors");
    jw.begin_array();
    AKV_TRY(r.rows([&](const DiffRow& d) { write_json(jw, d); }));
    jw.end_array();
    jw.field("type_changes", type_changes);
    jw.end_object();
    jw.end_document();
    return Status();
  }
  if (format == OutputFormat::csv) {
    fmt::print(out, "key,type_a,type_b,shape_a,shape_b,max_abs,rmse,rel_rmse,cosine\n");
    return r.rows([&](const DiffRow& d) {
      fmt::print(out, "{},{},{},{},{},{},{},{},{}\n", csv_field(d.key), d.type_a.value_or(""), d.type_b.value_or(""),
                 csv_field(shape_or_dash(d.shape_a)), csv_field(shape_or_dash(d.shape_b)),
                 d.error ? fmt::format("{:.9g}", d.error->max_abs) : "",
                 d.error ? fmt::format("{:.9g}", d.error->rmse) : "",
                 d.error ? fmt::format("{:.9g}", d.error->rel_rmse) : "",
                 d.error ? fmt::format("{:.9g}", d.error->cosine) : "");
    });
  }
  w = std::min<size_t>(w, 56);
  fmt::print(out, "{:<{}}  {:<10} {:<10} {:>11} {:>11} {:>10} {:>9}\n", "key", w, "A", "B", "max_abs", "rmse",
             "rel_rmse", "cosine");
  AKV_TRY(r.rows([&](const DiffRow& d) {
    std::string status;
    if (!d.name_a) status = "only in B";
    else if (!d.name_b) status = "only in A";
    else if (d.shape_differs)
      status = fmt::format("shape {} vs {}", shape_or_dash(d.shape_a), shape_or_dash(d.shape_b));
    std::string values = d.error          ? fmt::format("{:>11.4g} {:>11.4g} {:>10.4g} {:>9.6f}", d.error->max_abs,
                                                        d.error->rmse, d.error->rel_rmse, d.error->cosine)
                         : status.empty() ? d.value_problem
                                          : status;
    fmt::print(out, "{:<{}}  {:<10} {:<10} {}{}\n", escape_for_terminal(d.key), w, d.type_a.value_or("-"),
               d.type_b.value_or("-"), escape_for_terminal(values),
               d.note.empty() ? "" : "  (" + escape_for_terminal(d.note) + ")");
  }));
  fmt::print(out, "{} paired, {} only in A, {} only in B, {} shape changes, {} type changes\n", rows - only_a - only_b,
             only_a, only_b, shape_changes, type_changes);
  return Status();
}

}   // namespace akview
