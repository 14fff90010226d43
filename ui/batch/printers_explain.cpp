// Rendering of `explain`: the group's bytes, each step (label, formula with its numbers, values),
// the values, and the family paragraph; JSON {name, type, row, col, group, bytes, steps, values}
// with the family paragraph as the last step.
#include <fmt/format.h>

#include "ui/batch/explain_report.hpp"

namespace akview {
namespace {

std::string hex_string(const std::vector<uint8_t>& bytes) {
  std::string s;
  s.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) s += fmt::format("{:02x}", b);
  return s;
}

// Shortest text of a step value: as a float32 when it is one (most are), else as the double it is
// (a u32 word).
std::string value_text(double v) {
  const float f = static_cast<float>(v);
  return static_cast<double>(f) == v ? fmt::format("{}", f) : fmt::format("{}", v);
}

}   // namespace

std::string step_values_line(const std::vector<double>& values, size_t max) {
  std::string s;
  for (size_t i = 0; i < values.size() && i < max; ++i) s += fmt::format("{}{}", i ? " " : "", value_text(values[i]));
  if (values.size() > max) s += fmt::format(" … ({} values)", values.size());
  return s;
}

std::vector<std::string> wrap_words(std::string_view text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(pos, end - pos);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(std::move(line));
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
    pos = end + 1;
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

ExplainStep family_step(const GroupExplanation& e) {
  return {fmt::format("family: {}", e.family ? e.family->title : "unknown"),
          fmt::format("{} This tensor: {}.", e.family ? e.family->paragraph : "", e.bits_per_weight),
          {}};
}

nlohmann::json to_json(const ExplainReport& r) {
  const GroupExplanation& e = r.explanation;
  nlohmann::json steps = nlohmann::json::array();
  auto add_step = [&](const ExplainStep& s) {
    nlohmann::json values = nlohmann::json::array();
    for (double v : s.values) values.push_back(json_number(v));
    steps.push_back({{"label", s.label}, {"formula", s.formula}, {"values", std::move(values)}});
  };
  for (const auto& s : e.steps) add_step(s);
  add_step(family_step(e));
  nlohmann::json values = nlohmann::json::array();
  for (float v : e.values) values.push_back(json_number(v));
  return {{"name", r.name},
          {"type", r.type},
          {"row", e.row},
          {"col", e.col},
          {"group", {{"row", e.row}, {"col", e.group_col}, {"n", e.group_n}}},
          {"bytes", {{"offset", e.bytes_offset}, {"hex", hex_string(e.bytes)}}},
          {"steps", std::move(steps)},
          {"values", std::move(values)}};
}

void print_explain(std::FILE* out, const ExplainReport& r, OutputFormat format) {
  if (format == OutputFormat::json) return print_json(out, to_json(r));
  const GroupExplanation& e = r.explanation;
  fmt::print(out, "# {} {} element [{}, {}]: group of {} at columns {}..{} of row {}\n", escape_for_terminal(r.name),
             r.type, e.row, e.col, e.group_n, e.group_col, e.group_col + e.group_n - 1, e.row);
  fmt::print(out, "bytes  {} @{}, {} bytes\n", escape_for_terminal(r.file), format_offset(e.bytes_offset),
             e.bytes.size());
  for (size_t i = 0; i < e.bytes.size(); i += 32) {
    std::string line;
    for (size_t k = i; k < std::min(e.bytes.size(), i + 32); ++k)
      line += fmt::format("{}{:02x}", k == i ? "" : " ", e.bytes[k]);
    fmt::print(out, "  +{:<4} {}\n", i, line);
  }
  int n = 0;
  for (const auto& s : e.steps) {
    fmt::print(out, "{:>2}. {}\n", ++n, escape_for_terminal(s.label));
    for (const auto& line : wrap_words(escape_for_terminal(s.formula), 96)) fmt::print(out, "    {}\n", line);
    if (!s.values.empty()) fmt::print(out, "    = {}\n", step_values_line(s.values));
  }
  std::vector<double> values(e.values.begin(), e.values.end());
  fmt::print(out, "values (columns {}..{}):\n", e.group_col, e.group_col + e.group_n - 1);
  for (size_t i = 0; i < values.size(); i += 8) {
    std::string line;
    for (size_t k = i; k < std::min(values.size(), i + 8); ++k) {
      const bool asked = static_cast<int64_t>(k) == e.col - e.group_col;
      line += fmt::format("{}{:>14}", k == i ? "" : " ", fmt::format("{}{:.9g}", asked ? "*" : "", e.values[k]));
    }
    fmt::print(out, "  [{:>4}] {}\n", e.group_col + static_cast<int64_t>(i), line);
  }
  const ExplainStep family = family_step(e);
  fmt::print(out, "{}:\n", family.label);
  for (const auto& line : wrap_words(family.formula, 98)) fmt::print(out, "  {}\n", line);
}

}   // namespace akview
