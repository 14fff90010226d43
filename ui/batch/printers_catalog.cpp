// The model list of a folder that holds several models (core/catalog.hpp), for `akview PATH` in batch
// mode: a table for people (one line per model), an array for scripts (README "JSON reference").
#include <algorithm>

#include <fmt/format.h>

#include "core/remote/mirror.hpp"
#include "ui/batch/printers.hpp"

namespace akview {

nlohmann::json to_json(const CatalogEntry& e) {
  // A model of a remote repository is shown by its address, not by where the cache lays it out.
  nlohmann::json j = {{"name", e.name}, {"path", remote::display_path(e.open_path)}, {"source", e.source}};
  if (!e.described) return j;
  if (!e.error.empty()) {
    j["error"] = e.error;
    return j;
  }
  j["format"] = e.format;
  j["architecture"] = e.config.arch.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.config.arch);
  j["bytes"] = e.size_bytes;
  j["parameters"] = e.parameters;
  j["tensors"] = e.tensors;
  j["main_type"] = e.main_type();
  nlohmann::json types = nlohmann::json::array();
  for (const CatalogType& t : e.types) types.push_back({{"type", t.type}, {"tensors", t.tensors}, {"bytes", t.bytes}});
  j["types"] = std::move(types);
  j["files"] = e.files.size();
  return j;
}

void print_catalog(std::FILE* out, const std::vector<CatalogEntry>& entries, OutputFormat format) {
  if (format == OutputFormat::json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& e : entries) arr.push_back(to_json(e));
    return print_json(out, arr);
  }
  if (format == OutputFormat::csv) {
    fmt::print(out, "name,source,format,bytes,parameters,main_type,files,path,error\n");
    for (const auto& e : entries)
      fmt::print(out, "{},{},{},{},{},{},{},{},{}\n", csv_field(e.name), e.source, csv_field(e.format), e.size_bytes,
                 e.parameters, csv_field(e.main_type()), e.files.size(), csv_field(remote::display_path(e.open_path)),
                 csv_field(e.error));
    return;
  }
  size_t name_w = 4;
  for (const auto& e : entries) name_w = std::max(name_w, escape_for_terminal(e.name).size());
  name_w = std::min<size_t>(name_w, 60);
  fmt::print(out, "{:<{}}  {:<11} {:<19} {:>11} {:>8}  {:<22} {:>5}\n", "name", name_w, "source", "format", "size",
             "params", "main type", "files");
  for (const auto& e : entries) {
    const std::string name = escape_for_terminal(e.name);
    if (!e.error.empty())
      fmt::print(out, "{:<{}}  {:<11} error: {}\n", name, name_w, e.source, escape_for_terminal(e.error));
    else
      fmt::print(out, "{:<{}}  {:<11} {:<19} {:>11} {:>8}  {:<22} {:>5}\n", name, name_w, e.source, e.format,
                 format_bytes(e.size_bytes), format_count(e.parameters), escape_for_terminal(e.main_type()),
                 e.files.size());
  }
}

}   // namespace akview
