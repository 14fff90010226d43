// Rendering of compute runs (time, GB/s, error against the reference and --ref) and devices.
#include <algorithm>

#include <fmt/format.h>

#include "ui/batch/printers.hpp"

namespace akview {
namespace {

nlohmann::json error_json(const std::optional<compute::ErrorStats>& e) {
  if (!e) return nullptr;
  return {{"n", e->n},
          {"max_abs", json_number(e->max_abs)},
          {"rms", json_number(e->rms)},
          {"rel_rms", json_number(e->rel_rms)},
          {"cosine", json_number(e->cosine)},
          {"nmse", json_number(e->nmse)}};
}

std::string error_cells(const std::optional<compute::ErrorStats>& e) {
  if (!e) return fmt::format("{:>10} {:>10} {:>10}", "-", "-", "-");
  return fmt::format("{:>10.3g} {:>10.3g} {:>10.7f}", e->max_abs, e->rel_rms, e->cosine);
}

nlohmann::json xquant_json(const compute::XQuantRun& q) {
  if (q.act.empty()) return {{"act", nullptr}, {"note", q.note}};
  return {{"act", q.act},
          {"variant", q.variant},
          {"min_seconds", q.min_seconds},
          {"median_seconds", q.median_seconds},
          {"gbps_best", q.gbps_best},
          {"gbps_median", q.gbps_median},
          {"vs_reference", error_json(q.vs_reference)}};
}

std::string error_csv(const std::optional<compute::ErrorStats>& e) {
  if (!e) return ",,,";
  return fmt::format("{:.9g},{:.9g},{:.9g},{:.9g}", e->max_abs, e->rel_rms, e->cosine, e->nmse);
}

}   // namespace

nlohmann::json to_json(const compute::TensorRun& t) {
  nlohmann::json j = {{"name", t.name},
                      {"type", t.type},
                      {"backend", t.backend},
                      {"device", t.device},
                      {"rows", t.n_rows},
                      {"cols", t.n_cols},
                      {"weight_bytes", t.weight_bytes},
                      {"repeats", t.repeats},
                      {"min_seconds", t.min_seconds},
                      {"median_seconds", t.median_seconds},
                      {"gbps_best", t.gbps_best},
                      {"gbps_median", t.gbps_median},
                      {"vs_reference", error_json(t.vs_reference)},
                      {"vs_ref_model", error_json(t.vs_second)}};
  j["upload_seconds"] = t.upload_seconds ? nlohmann::json(*t.upload_seconds) : nlohmann::json(nullptr);
  if (!t.note.empty()) j["note"] = t.note;
  if (!t.reference_error.empty()) j["reference_error"] = t.reference_error;
  if (t.xquant) j["x_quant"] = xquant_json(*t.xquant);
  return j;
}

RunPrinter::RunPrinter(std::FILE* out, OutputFormat format, std::string path, std::string ref_path, bool x_quant)
    : out_(out), format_(format), path_(std::move(path)), ref_path_(std::move(ref_path)), x_quant_(x_quant) {}

RunPrinter::~RunPrinter() = default;

void RunPrinter::begin(const std::vector<std::string>& names) {
  if (format_ == OutputFormat::json) {
    json_ = std::make_unique<JsonWriter>(out_, MemberOrder::as_written);
    json_->begin_object();
    json_->field("path", path_);
    json_->key("ref");
    if (ref_path_.empty()) json_->value(nullptr);
    else json_->value(ref_path_);
    json_->key("runs");
    json_->begin_array();
  } else if (format_ == OutputFormat::csv) {
    // The x-quant columns appear only when the run asked for that path.
    fmt::print(out_, "name,type,backend,rows,cols,median_seconds,gbps_median,max_abs,rel_rms,cosine,nmse{}\n",
               x_quant_ ? ",xq_act,xq_median_seconds,xq_gbps_median,xq_max_abs,xq_rel_rms,xq_cosine,xq_nmse" : "");
  } else {
    width_ = 4;
    for (const auto& n : names) width_ = std::max(width_, n.size());
    width_ = std::min<size_t>(width_, 56);
    fmt::print(out_, "{:<{}}  {:<10} {:<8} {:>13} {:>10} {:>8}  {:>10} {:>10} {:>10}{}\n", "name", width_, "type",
               "backend", "shape", "median", "GB/s", "max_abs", "rel_rms", "cosine",
               ref_path_.empty() ? "" : "   vs --ref: max_abs rel_rms cosine");
  }
  std::fflush(out_);
}

void RunPrinter::row(const compute::TensorRun& t) {
  if (format_ == OutputFormat::json) {
    json_->value(to_json(t));
    json_->flush();
    return;
  }
  if (format_ == OutputFormat::csv) {
    std::string tail;
    if (x_quant_ && t.xquant && !t.xquant->act.empty())
      tail = fmt::format(",{},{:.9g},{:.6g},{}", t.xquant->act, t.xquant->median_seconds, t.xquant->gbps_median,
                         error_csv(t.xquant->vs_reference));
    else if (x_quant_) tail = ",,,,,,,";
    fmt::print(out_, "{},{},{},{},{},{:.9g},{:.6g},{}{}\n", csv_field(t.name), t.type, t.backend, t.n_rows, t.n_cols,
               t.median_seconds, t.gbps_median, error_csv(t.vs_reference), tail);
  } else {
    fmt::print(out_, "{:<{}}  {:<10} {:<8} {:>13} {:>8.3f}ms {:>8.2f}  {}{}\n", escape_for_terminal(t.name), width_,
               t.type, t.backend, fmt::format("{}x{}", t.n_rows, t.n_cols), t.median_seconds * 1e3, t.gbps_median,
               error_cells(t.vs_reference), ref_path_.empty() ? "" : "  " + error_cells(t.vs_second));
    if (!t.note.empty()) fmt::print(out_, "  note: {}\n", escape_for_terminal(t.note));
    if (t.upload_seconds)
      fmt::print(out_, "  upload: {:.3f} ms ({:.2f} GB/s), not in the times: the weights stay on the device\n",
                 *t.upload_seconds * 1e3,
                 *t.upload_seconds > 0 ? static_cast<double>(t.weight_bytes) / *t.upload_seconds / 1e9 : 0.0);
    if (t.xquant && t.xquant->act.empty()) fmt::print(out_, "  x-quant: {}\n", escape_for_terminal(t.xquant->note));
    if (t.xquant && !t.xquant->act.empty())
      fmt::print(out_, "{:<{}}  {:<10} {:<8} {:>13} {:>8.3f}ms {:>8.2f}  {}\n", "  x-quant, x as " + t.xquant->act,
                 width_, t.type, "int8", "", t.xquant->median_seconds * 1e3, t.xquant->gbps_median,
                 error_cells(t.xquant->vs_reference));
  }
  std::fflush(out_);
}

void RunPrinter::end(const RunTableReport& r) {
  if (format_ == OutputFormat::json) {
    json_->end_array();
    json_->key("failures");
    json_->begin_array();
    for (const auto& f : r.failures) {
      json_->begin_object();
      json_->field("name", f.name);
      json_->field("code", error_info(f.error.code).slug);
      json_->field("message", f.error.to_string());
      json_->end_object();
    }
    json_->end_array();
    json_->field("ref_missing", r.ref_missing);
    json_->field("cancelled", r.cancelled);
    json_->end_object();
    json_->end_document();
    json_.reset();
    return;
  }
  if (format_ == OutputFormat::csv) return;
  for (const auto& f : r.failures)
    fmt::print(out_, "failed: {}: {}\n", escape_for_terminal(f.name), escape_for_terminal(f.error.to_string()));
  for (const auto& m : r.ref_missing) fmt::print(out_, "not in --ref model: {}\n", escape_for_terminal(m));
  if (r.cancelled) fmt::print(out_, "cancelled\n");
}

void print_run(std::FILE* out, const RunTableReport& r, OutputFormat format) {
  bool xq = false;
  std::vector<std::string> names;
  for (const auto& t : r.runs) {
    names.push_back(t.name);
    xq = xq || t.xquant.has_value();
  }
  RunPrinter printer(out, format, r.path, r.ref_path, xq);
  printer.begin(names);
  for (const auto& t : r.runs) printer.row(t);
  printer.end(r);
}

nlohmann::json to_json(const compute::DevicesReport& r) {
  nlohmann::json backends = nlohmann::json::array();
  for (const auto& b : r.backends)
    backends.push_back(
        {{"name", b.name}, {"description", b.description}, {"available", b.available}, {"reason", b.reason}});
  nlohmann::json platforms = nlohmann::json::array();
  for (const auto& p : r.opencl_platforms) {
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : p.devices)
      devices.push_back({{"name", d.name},
                         {"vendor", d.vendor},
                         {"version", d.version},
                         {"driver_version", d.driver_version},
                         {"type", d.type},
                         {"compute_units", d.compute_units},
                         {"global_mem_bytes", d.global_mem_bytes},
                         {"max_alloc_bytes", d.max_alloc_bytes},
                         {"max_work_group_size", d.max_work_group_size},
                         {"fp16", d.fp16},
                         {"used", d.used},
                         {"index", d.index}});
    platforms.push_back({{"name", p.name},
                         {"vendor", p.vendor},
                         {"version", p.version},
                         {"devices", devices},
                         {"error", p.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.error)}});
  }
  return {{"backends", backends},
          {"opencl_platforms", platforms},
          {"opencl_error", r.opencl_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.opencl_error)},
          {"cpu_threads", r.cpu_threads}};
}

void print_devices(std::FILE* out, const compute::DevicesReport& r, OutputFormat format) {
  if (format == OutputFormat::json) return print_json(out, to_json(r));
  fmt::print(out, "backends\n");
  for (const auto& b : r.backends)
    fmt::print(out, "  {:<10} {:<12} {}\n", b.name, b.available ? "available" : "unavailable",
               escape_for_terminal(b.reason));
  fmt::print(out, "cpu threads {}\n", r.cpu_threads);
  if (!r.opencl_error.empty()) fmt::print(out, "opencl: {}\n", escape_for_terminal(r.opencl_error));
  for (const auto& p : r.opencl_platforms) {
    fmt::print(out, "opencl platform: {} ({}, {})\n", escape_for_terminal(p.name), escape_for_terminal(p.vendor),
               escape_for_terminal(p.version));
    if (!p.error.empty()) fmt::print(out, "  {}\n", escape_for_terminal(p.error));
    for (const auto& d : p.devices)
      fmt::print(out, "  [{}] {}{} — {}, {} CUs, {} global, {} max alloc, {}\n", d.index, escape_for_terminal(d.name),
                 d.used ? " (used)" : "", d.type, d.compute_units, format_bytes(d.global_mem_bytes),
                 format_bytes(d.max_alloc_bytes), escape_for_terminal(d.version));
  }
}

}   // namespace akview
