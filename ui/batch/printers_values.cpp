// Rendering of the value reports: dump, groups, stats (text, JSON, CSV).
#include <cmath>

#include <fmt/format.h>

#include "ui/batch/printers.hpp"

namespace akview {
namespace {

// One character per bin, eight heights: a histogram at a glance.
std::string sparkline(const std::vector<uint64_t>& bins) {
  static constexpr const char* kBars[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  uint64_t peak = 0;
  for (uint64_t b : bins) peak = std::max(peak, b);
  std::string s;
  for (uint64_t b : bins) s += kBars[peak == 0 || b == 0 ? 0 : 1 + (b * 7) / peak];
  return s;
}

}  // namespace

nlohmann::json json_number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json to_json(const DumpReport& r) {
  nlohmann::json j = {{"name", r.name}, {"type", r.type}, {"shape", r.shape}, {"rows", {r.row_begin, r.row_end}},
                      {"n_cols", r.n_cols}, {"caveat", r.caveat.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.caveat)}};
  if (!r.out_path.empty()) {
    j["out"] = r.out_path;
    j["bytes_written"] = r.bytes_written;
    return j;
  }
  nlohmann::json rows = nlohmann::json::array();
  for (int64_t i = 0; i < r.row_end - r.row_begin; ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (int64_t c = 0; c < r.n_cols; ++c) row.push_back(json_number(r.values[static_cast<size_t>(i * r.n_cols + c)]));
    rows.push_back(std::move(row));
  }
  j["values"] = std::move(rows);
  return j;
}

void print_dump(std::FILE* out, const DumpReport& r, OutputFormat format) {
  if (format == OutputFormat::json) return print_json(out, to_json(r));
  if (!r.out_path.empty()) {
    fmt::print(out, "wrote rows {}:{} of {} ({} values, {}) to {}\n", r.row_begin, r.row_end, escape_for_terminal(r.name),
               r.bytes_written / 4, format_bytes(r.bytes_written), escape_for_terminal(r.out_path));
  } else {
    const char* sep = format == OutputFormat::csv ? "," : " ";
    if (format == OutputFormat::text)
      fmt::print(out, "# {} {} {} rows {}:{}\n", escape_for_terminal(r.name), r.type, format_shape(r.shape), r.row_begin,
                 r.row_end);
    for (int64_t i = 0; i < r.row_end - r.row_begin; ++i) {
      std::string line;
      for (int64_t c = 0; c < r.n_cols; ++c)
        line += fmt::format("{}{:.9g}", c ? sep : "", r.values[static_cast<size_t>(i * r.n_cols + c)]);
      fmt::print(out, "{}\n", line);
    }
  }
  if (!r.caveat.empty() && format == OutputFormat::text) fmt::print(out, "# note: {}\n", r.caveat);
}

nlohmann::json to_json(const GroupsReport& r) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : r.groups) {
    nlohmann::json j = {{"row", g.row}, {"col", g.col}, {"n", g.n_cols}, {"scale", json_number(g.scale)},
                        {"bias", json_number(g.bias)}, {"min", json_number(g.value_min)}, {"max", json_number(g.value_max)},
                        {"levels_used", g.levels_used}, {"levels_total", g.levels_total}, {"saturated", g.saturated}};
    if (g.has_super) {
      j["super_scale"] = json_number(g.super_scale);
      j["super_min"] = json_number(g.super_min);
      j["sub_scale"] = g.sub_scale;
      j["sub_min"] = g.sub_min;
    }
    groups.push_back(std::move(j));
  }
  nlohmann::json j = {{"name", r.name}, {"type", r.type}, {"rows", {r.row_begin, r.row_end}}, {"n_rows", r.n_rows},
                      {"groups", groups}};
  if (r.group_size) {
    j["bits"] = r.bits;
    j["group_size"] = r.group_size;
  }
  return j;
}

void print_groups(std::FILE* out, const GroupsReport& r, OutputFormat format) {
  if (format == OutputFormat::json) return print_json(out, to_json(r));
  if (format == OutputFormat::csv) {
    fmt::print(out, "row,col,n,scale,bias,super_scale,super_min,sub_scale,sub_min,min,max,levels_used,levels_total,saturated\n");
    for (const auto& g : r.groups)
      fmt::print(out, "{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{:.9g},{:.9g},{},{},{}\n", g.row, g.col, g.n_cols, g.scale,
                 g.bias, g.super_scale, g.super_min, g.sub_scale, g.sub_min, g.value_min, g.value_max, g.levels_used,
                 g.levels_total, g.saturated);
    return;
  }
  fmt::print(out, "# {} {} rows {}:{} of {}\n", escape_for_terminal(r.name), r.type, r.row_begin, r.row_end, r.n_rows);
  fmt::print(out, "{:>6} {:>6} {:>4} {:>12} {:>12} {:>12} {:>12} {:>9} {:>5}\n", "row", "col", "n", "scale", "bias", "min",
             "max", "levels", "sat");
  for (const auto& g : r.groups)
    fmt::print(out, "{:>6} {:>6} {:>4} {:>12.5g} {:>12.5g} {:>12.5g} {:>12.5g} {:>4}/{:<4} {:>5}\n", g.row, g.col, g.n_cols,
               g.scale, g.bias, g.value_min, g.value_max, g.levels_used, g.levels_total, g.saturated);
}

nlohmann::json to_json(const StatsRow& r) {
  nlohmann::json j = {{"name", r.name}, {"type", r.type}, {"shape", r.shape}};
  if (!r.problem.empty()) {
    j["problem"] = r.problem;
    return j;
  }
  const TensorStats& s = r.stats;
  nlohmann::json top = nlohmann::json::array();
  for (const auto& o : s.top) top.push_back({{"row", o.row}, {"col", o.col}, {"value", json_number(o.value)}});
  j.update({{"count", s.count}, {"finite", s.finite}, {"zeros", s.zeros}, {"nan", s.nan}, {"pos_inf", s.pos_inf},
            {"neg_inf", s.neg_inf}, {"min", json_number(s.min)}, {"max", json_number(s.max)}, {"mean", json_number(s.mean)},
            {"std", json_number(s.std)}, {"abs_mean", json_number(s.abs_mean)},
            {"histogram", {{"lo", json_number(s.hist_lo)}, {"hi", json_number(s.hist_hi)}, {"counts", s.histogram}}},
            {"log2_abs_histogram", {{"min_exp", kLogMinExp}, {"counts", s.log_abs_histogram}}},
            {"top", top}, {"cancelled", s.cancelled}});
  if (!r.caveat.empty()) j["caveat"] = r.caveat;
  return j;
}

void print_stats(std::FILE* out, const std::vector<StatsRow>& rows, OutputFormat format) {
  if (format == OutputFormat::json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : rows) arr.push_back(to_json(r));
    return print_json(out, arr);
  }
  if (format == OutputFormat::csv) {
    fmt::print(out, "name,type,count,min,max,mean,std,zeros,nan,inf\n");
    for (const auto& r : rows)
      fmt::print(out, "{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{}\n", csv_field(r.name), r.type, r.stats.count, r.stats.min,
                 r.stats.max, r.stats.mean, r.stats.std, r.stats.zeros, r.stats.nan, r.stats.pos_inf + r.stats.neg_inf);
    return;
  }
  for (const auto& r : rows) {
    fmt::print(out, "{}  {} {}\n", escape_for_terminal(r.name), r.type, format_shape(r.shape));
    if (!r.problem.empty()) {
      fmt::print(out, "  (no stats: {})\n", escape_for_terminal(r.problem));
      continue;
    }
    const TensorStats& s = r.stats;
    fmt::print(out, "  min {:.6g}  max {:.6g}  mean {:.6g}  std {:.6g}  zeros {}  nan {}  inf {}\n", s.min, s.max, s.mean,
               s.std, s.zeros, s.nan, s.pos_inf + s.neg_inf);
    if (!s.histogram.empty())
      fmt::print(out, "  hist [{:.4g}, {:.4g}] {}\n", s.hist_lo, s.hist_hi, sparkline(s.histogram));
    fmt::print(out, "  log2|x| [2^{}, 2^{}) {}\n", kLogMinExp, kLogMinExp + kLogBins, sparkline(s.log_abs_histogram));
    if (!s.top.empty()) {
      std::string tops;
      for (size_t k = 0; k < std::min<size_t>(s.top.size(), 4); ++k)
        tops += fmt::format("{}[{},{}]={:.6g}", k ? "  " : "", s.top[k].row, s.top[k].col, s.top[k].value);
      fmt::print(out, "  top |x|  {}\n", tops);
    }
    if (!r.caveat.empty()) fmt::print(out, "  note: {}\n", r.caveat);
  }
}

}  // namespace akview
