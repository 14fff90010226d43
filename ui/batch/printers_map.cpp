// Rendering of the name map with the extracted config, and of model diffs.
#include <fmt/format.h>

#include "ui/batch/printers.hpp"

namespace akview {
namespace {

template <typename T>
nlohmann::json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

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
          {"sliding_window_pattern", c.sliding_window_pattern.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.sliding_window_pattern)},
          {"quantization", c.quantization.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.quantization)},
          {"quantization_source", c.quantization_source}};
}

std::string shape_or_dash(const std::optional<std::vector<int64_t>>& s) { return s ? format_shape(*s) : "-"; }

}  // namespace

nlohmann::json to_json(const MapReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& m : r.rows)
    rows.push_back({{"name", m.native}, {"canonical", optional_json(m.canonical)}, {"role", m.role.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.role)},
                    {"layer", m.layer < 0 ? nlohmann::json(nullptr) : nlohmann::json(m.layer)},
                    {"note", m.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.note)}});
  return {{"path", r.path}, {"arch", r.arch}, {"tensors", rows}, {"unmapped", r.unmapped}, {"config", config_json(r.config)}};
}

void print_map(std::FILE* out, const MapReport& r, OutputFormat format) {
  if (format == OutputFormat::json) return print_json(out, to_json(r));
  if (format == OutputFormat::csv) {
    fmt::print(out, "name,canonical,role,layer,note\n");
    for (const auto& m : r.rows)
      fmt::print(out, "{},{},{},{},{}\n", csv_field(m.native), csv_field(m.canonical.value_or("")), m.role,
                 m.layer < 0 ? std::string() : std::to_string(m.layer), csv_field(m.note));
    return;
  }
  size_t w = 4;
  for (const auto& m : r.rows) w = std::max(w, m.native.size());
  w = std::min<size_t>(w, 64);
  for (const auto& m : r.rows)
    fmt::print(out, "{:<{}}  {:<40} {:<16}{}\n", escape_for_terminal(m.native), w,
               m.canonical ? escape_for_terminal(*m.canonical) : std::string("(unmapped)"), m.role,
               m.note.empty() ? "" : "  note: " + escape_for_terminal(m.note));
  fmt::print(out, "{} tensors, {} unmapped\n\nconfig ({})\n", r.rows.size(), r.unmapped, r.arch.empty() ? "unknown arch" : escape_for_terminal(r.arch));
  for (const auto& f : config_fields()) {
    const ConfigValue& v = r.config.*(f.field);
    if (v.present) fmt::print(out, "  {:<16} {:<14.10g} {}\n", f.name, v.value, escape_for_terminal(v.source));
  }
  if (!r.config.quantization.empty())
    fmt::print(out, "  {:<16} {}  {}\n", "quantization", escape_for_terminal(r.config.quantization), escape_for_terminal(r.config.quantization_source));
}

nlohmann::json to_json(const DiffTableReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& d : r.rows) {
    nlohmann::json j = {{"key", d.key}, {"canonical", d.canonical}, {"name_a", optional_json(d.name_a)},
                        {"name_b", optional_json(d.name_b)}, {"type_a", optional_json(d.type_a)},
                        {"type_b", optional_json(d.type_b)}, {"shape_a", optional_json(d.shape_a)},
                        {"shape_b", optional_json(d.shape_b)}, {"shape_differs", d.shape_differs},
                        {"type_differs", d.type_differs}};
    if (!d.note.empty()) j["note"] = d.note;
    if (d.error)
      j["error"] = {{"max_abs", json_number(d.error->max_abs)}, {"rmse", json_number(d.error->rmse)},
                    {"rel_rmse", json_number(d.error->rel_rmse)}, {"cosine", json_number(d.error->cosine)},
                    {"elements", d.error->elements}};
    if (!d.value_problem.empty()) j["value_problem"] = d.value_problem;
    rows.push_back(std::move(j));
  }
  return {{"a", r.path_a}, {"b", r.path_b}, {"tensors", rows}, {"only_a", r.only_a}, {"only_b", r.only_b},
          {"shape_changes", r.shape_changes}, {"type_changes", r.type_changes}, {"cancelled", r.cancelled}};
}

void print_diff(std::FILE* out, const DiffTableReport& r, OutputFormat format) {
  if (format == OutputFormat::json) return print_json(out, to_json(r));
  if (format == OutputFormat::csv) {
    fmt::print(out, "key,type_a,type_b,shape_a,shape_b,max_abs,rmse,rel_rmse,cosine\n");
    for (const auto& d : r.rows)
      fmt::print(out, "{},{},{},{},{},{},{},{},{}\n", csv_field(d.key), d.type_a.value_or(""), d.type_b.value_or(""),
                 csv_field(shape_or_dash(d.shape_a)), csv_field(shape_or_dash(d.shape_b)),
                 d.error ? fmt::format("{:.9g}", d.error->max_abs) : "", d.error ? fmt::format("{:.9g}", d.error->rmse) : "",
                 d.error ? fmt::format("{:.9g}", d.error->rel_rmse) : "", d.error ? fmt::format("{:.9g}", d.error->cosine) : "");
    return;
  }
  size_t w = 3;
  for (const auto& d : r.rows) w = std::max(w, d.key.size());
  w = std::min<size_t>(w, 56);
  fmt::print(out, "{:<{}}  {:<10} {:<10} {:>11} {:>11} {:>10} {:>9}\n", "key", w, "A", "B", "max_abs", "rmse", "rel_rmse", "cosine");
  for (const auto& d : r.rows) {
    std::string status;
    if (!d.name_a) status = "only in B";
    else if (!d.name_b) status = "only in A";
    else if (d.shape_differs) status = fmt::format("shape {} vs {}", shape_or_dash(d.shape_a), shape_or_dash(d.shape_b));
    std::string values = d.error ? fmt::format("{:>11.4g} {:>11.4g} {:>10.4g} {:>9.6f}", d.error->max_abs, d.error->rmse,
                                               d.error->rel_rmse, d.error->cosine)
                                 : status.empty() ? d.value_problem : status;
    fmt::print(out, "{:<{}}  {:<10} {:<10} {}{}\n", escape_for_terminal(d.key), w, d.type_a.value_or("-"), d.type_b.value_or("-"),
               escape_for_terminal(values), d.note.empty() ? "" : "  (" + escape_for_terminal(d.note) + ")");
  }
  fmt::print(out, "{} paired, {} only in A, {} only in B, {} shape changes, {} type changes\n",
             r.rows.size() - r.only_a - r.only_b, r.only_a, r.only_b, r.shape_changes, r.type_changes);
}

}  // namespace akview
