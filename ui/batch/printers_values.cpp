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

}   // namespace

nlohmann::json json_number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json to_json(const DumpReport& r) {
  nlohmann::json j = {
      {"name", r.name},     {"type", r.type},
      {"shape", r.shape},   {"rows", {r.row_begin, r.row_end}},
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
    fmt::print(out, "wrote rows {}:{} of {} ({} values, {}) to {}\n", r.row_begin, r.row_end,
               escape_for_terminal(r.name), r.bytes_written / 4, format_bytes(r.bytes_written),
               escape_for_terminal(r.out_path));
  } else {
    const char* sep = format == OutputFormat::csv ? "," : " ";
    if (format == OutputFormat::text)
      fmt::print(out, "# {} {} {} rows {}:{}\n", escape_for_terminal(r.name), r.type, format_shape(r.shape),
                 r.row_begin, r.row_end);
    for (int64_t i = 0; i < r.row_end - r.row_begin; ++i) {
      std::string line;
      for (int64_t c = 0; c < r.n_cols; ++c)
        line += fmt::format("{}{:.9g}", c ? sep : "", r.values[static_cast<size_t>(i * r.n_cols + c)]);
      fmt::print(out, "{}\n", line);
    }
  }
  if (!r.caveat.empty() && format == OutputFormat::text) fmt::print(out, "# note: {}\n", r.caveat);
}

namespace {

void write_json(JsonWriter& w, const QuantGroup& g) {
  w.begin_object();   // members in key order (nlohmann's sorted objects)
  w.field("bias", static_cast<double>(g.bias));
  w.field("col", g.col);
  w.field("levels_total", g.levels_total);
  w.field("levels_used", g.levels_used);
  w.field("max", static_cast<double>(g.value_max));
  w.field("min", static_cast<double>(g.value_min));
  w.field("n", g.n_cols);
  w.field("row", g.row);
  w.field("saturated", g.saturated);
  w.field("scale", static_cast<double>(g.scale));
  if (g.has_super) {
    w.field("sub_min", g.sub_min);
    w.field("sub_scale", g.sub_scale);
    w.field("super_min", static_cast<double>(g.super_min));
    w.field("super_scale", static_cast<double>(g.super_scale));
  }
  w.end_object();
}

}   // namespace

Status print_groups(std::FILE* out, const GroupsReport& r, const RowStream<QuantGroup>& groups, OutputFormat format) {
  if (format == OutputFormat::json) {
    JsonWriter w(out);
    w.begin_object();
    if (r.group_size) w.field("bits", r.bits);
    if (r.group_size) w.field("group_size", r.group_size);
    w.key("groups");
    w.begin_array();
    AKV_TRY(groups([&](const QuantGroup& g) { write_json(w, g); }));
    w.end_array();
    w.field("n_rows", r.n_rows);
    w.field("name", r.name);
    w.key("rows");
    w.begin_array();
    w.value(r.row_begin);
    w.value(r.row_end);
    w.end_array();
    w.field("type", r.type);
    w.end_object();
    w.end_document();
    return Status();
  }
  if (format == OutputFormat::csv) {
    fmt::print(
        out,
        "row,col,n,scale,bias,super_scale,super_min,sub_scale,sub_min,min,max,levels_used,levels_total,saturated\n");
    return groups([&](const QuantGroup& g) {
      fmt::print(out, "{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{:.9g},{:.9g},{},{},{}\n", g.row, g.col, g.n_cols,
                 g.scale, g.bias, g.super_scale, g.super_min, g.sub_scale, g.sub_min, g.value_min, g.value_max,
                 g.levels_used, g.levels_total, g.saturated);
    });
  }
  fmt::print(out, "# {} {} rows {}:{} of {}\n", escape_for_terminal(r.name), r.type, r.row_begin, r.row_end, r.n_rows);
  fmt::print(out, "{:>6} {:>6} {:>4} {:>12} {:>12} {:>12} {:>12} {:>9} {:>5}\n", "row", "col", "n", "scale", "bias",
             "min", "max", "levels", "sat");
  return groups([&](const QuantGroup& g) {
    fmt::print(out, "{:>6} {:>6} {:>4} {:>12.5g} {:>12.5g} {:>12.5g} {:>12.5g} {:>4}/{:<4} {:>5}\n", g.row, g.col,
               g.n_cols, g.scale, g.bias, g.value_min, g.value_max, g.levels_used, g.levels_total, g.saturated);
  });
}

namespace {

void write_json(JsonWriter& w, const StatsRow& r) {
  w.begin_object();   // members in key order (nlohmann's sorted objects)
  if (!r.problem.empty()) {
    w.field("name", r.name);
    w.field("problem", r.problem);
    w.field("shape", r.shape);
    w.field("type", r.type);
    return w.end_object();
  }
  const TensorStats& s = r.stats;
  w.field("abs_mean", s.abs_mean);
  w.field("cancelled", s.cancelled);
  if (!r.caveat.empty()) w.field("caveat", r.caveat);
  w.field("count", s.count);
  w.field("finite", s.finite);
  w.key("histogram");
  w.begin_object();
  w.field("counts", s.histogram);
  w.field("hi", s.hist_hi);
  w.field("lo", s.hist_lo);
  w.end_object();
  w.key("log2_abs_histogram");
  w.begin_object();
  w.field("counts", s.log_abs_histogram);
  w.field("min_exp", kLogMinExp);
  w.end_object();
  w.field("max", s.max);
  w.field("mean", s.mean);
  w.field("min", s.min);
  w.field("name", r.name);
  w.field("nan", s.nan);
  w.field("neg_inf", s.neg_inf);
  w.field("pos_inf", s.pos_inf);
  w.field("shape", r.shape);
  w.field("std", s.std);
  w.key("top");
  w.begin_array();
  for (const auto& o : s.top) {
    w.begin_object();
    w.field("col", o.col);
    w.field("row", o.row);
    w.field("value", static_cast<double>(o.value));
    w.end_object();
  }
  w.end_array();
  w.field("type", r.type);
  w.field("zeros", s.zeros);
  w.end_object();
}

}   // namespace

Status print_stats(std::FILE* out, const RowStream<StatsRow>& rows, OutputFormat format) {
  if (format == OutputFormat::json)
    return print_json_rows(out, rows, [out](JsonWriter& w, const StatsRow& r) {
      write_json(w, r);
      w.flush();   // a row's statistics take a while: show each when it is done
      std::fflush(out);
    });
  if (format == OutputFormat::csv) {
    fmt::print(out, "name,type,count,min,max,mean,std,zeros,nan,inf\n");
    return rows([&](const StatsRow& r) {
      fmt::print(out, "{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{}\n", csv_field(r.name), r.type, r.stats.count,
                 r.stats.min, r.stats.max, r.stats.mean, r.stats.std, r.stats.zeros, r.stats.nan,
                 r.stats.pos_inf + r.stats.neg_inf);
    });
  }
  return rows([&](const StatsRow& r) {
    fmt::print(out, "{}  {} {}\n", escape_for_terminal(r.name), r.type, format_shape(r.shape));
    if (!r.problem.empty()) {
      fmt::print(out, "  (no stats: {})\n", escape_for_terminal(r.problem));
      return;
    }
    const TensorStats& s = r.stats;
    fmt::print(out, "  min {:.6g}  max {:.6g}  mean {:.6g}  std {:.6g}  zeros {}  nan {}  inf {}\n", s.min, s.max,
               s.mean, s.std, s.zeros, s.nan, s.pos_inf + s.neg_inf);
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
  });
}

}   // namespace akview
