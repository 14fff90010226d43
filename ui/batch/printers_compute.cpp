// Rendering of compute runs (time, GB/s, error against the reference and --ref) and devices.
#include <algorithm>

#include <fmt/format.h>

#include "ui/batch/printers.hpp"

namespace akview {
namespace {

nlohmann::json error_json(const std::optional<compute::ErrorStats>& e) {
  if (!e) return nullptr;
  return {{"n", e->n}, {"max_abs", json_number(e->max_abs)}, {"rms", json_number(e->rms)},
          {"rel_rms", json_number(e->rel_rms)}, {"cosine", json_number(e->cosine)}, {"nmse", json_number(e->nmse)}};
}

std::string error_cells(const std::optional<compute::ErrorStats>& e) {
  if (!e) return fmt::format("{:>10} {:>10} {:>10}", "-", "-", "-");
  return fmt::format("{:>10.3g} {:>10.3g} {:>10.7f}", e->max_abs, e->rel_rms, e->cosine);
}

nlohmann::json xquant_json(const compute::XQuantRun& q) {
  if (q.act.empty()) return {{"act", nullptr}, {"note", q.note}};
  return {{"act", q.act}, {"variant", q.variant}, {"min_seconds", q.min_seconds}, {"median_seconds", q.median_seconds},
          {"gbps_best", q.gbps_best}, {"gbps_median", q.gbps_median}, {"vs_reference", error_json(q.vs_reference)}};
}

bool any_xquant(const RunTableReport& r) {
  return std::any_of(r.runs.begin(), r.runs.end(), [](const compute::TensorRun& t) { return t.xquant.has_value(); });
}

std::string error_csv(const std::optional<compute::ErrorStats>& e) {
  if (!e) return ",,,";
  return fmt::format("{:.9g},{:.9g},{:.9g},{:.9g}", e->max_abs, e->rel_rms, e->cosine, e->nmse);
}

}  // namespace

nlohmann::json to_json(const RunTableReport& r) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& t : r.runs) {
    nlohmann::json j = {{"name", t.name}, {"type", t.type}, {"backend", t.backend}, {"device", t.device}, {"rows", t.n_rows}, {"cols", t.n_cols},
                        {"weight_bytes", t.weight_bytes}, {"repeats", t.repeats}, {"min_seconds", t.min_seconds},
                        {"median_seconds", t.median_seconds}, {"gbps_best", t.gbps_best}, {"gbps_median", t.gbps_median},
                        {"vs_reference", error_json(t.vs_reference)}, {"vs_ref_model", error_json(t.vs_second)}};
    j["upload_seconds"] = t.upload_seconds ? nlohmann::json(*t.upload_seconds) : nlohmann::json(nullptr);
    if (!t.note.empty()) j["note"] = t.note;
    if (!t.reference_error.empty()) j["reference_error"] = t.reference_error;
    if (t.xquant) j["x_quant"] = xquant_json(*t.xquant);
    runs.push_back(std::move(j));
  }
  nlohmann::json failures = nlohmann::json::array();
  for (const auto& f : r.failures)
    failures.push_back({{"name", f.name}, {"code", error_info(f.error.code).slug}, {"message", f.error.to_string()}});
  return {{"path", r.path}, {"ref", r.ref_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.ref_path)},
          {"runs", runs}, {"failures", failures}, {"ref_missing", r.ref_missing}, {"cancelled", r.cancelled}};
}

void print_run(std::FILE* out, const RunTableReport& r, OutputFormat format) {
  if (format == OutputFormat::json) return print_json(out, to_json(r));
  if (format == OutputFormat::csv) {
    // The x-quant columns appear only when the run asked for that path.
    const bool xq = any_xquant(r);
    fmt::print(out, "name,type,backend,rows,cols,median_seconds,gbps_median,max_abs,rel_rms,cosine,nmse{}\n",
               xq ? ",xq_act,xq_median_seconds,xq_gbps_median,xq_max_abs,xq_rel_rms,xq_cosine,xq_nmse" : "");
    for (const auto& t : r.runs) {
      std::string tail;
      if (xq && t.xquant && !t.xquant->act.empty())
        tail = fmt::format(",{},{:.9g},{:.6g},{}", t.xquant->act, t.xquant->median_seconds, t.xquant->gbps_median, error_csv(t.xquant->vs_reference));
      else if (xq)
        tail = ",,,,,,,";
      fmt::print(out, "{},{},{},{},{},{:.9g},{:.6g},{}{}\n", csv_field(t.name), t.type, t.backend, t.n_rows, t.n_cols, t.median_seconds,
                 t.gbps_median, error_csv(t.vs_reference), tail);
    }
    return;
  }
  size_t w = 4;
  for (const auto& t : r.runs) w = std::max(w, t.name.size());
  w = std::min<size_t>(w, 56);
  fmt::print(out, "{:<{}}  {:<10} {:<8} {:>13} {:>10} {:>8}  {:>10} {:>10} {:>10}{}\n", "name", w, "type", "backend",
             "shape", "median", "GB/s", "max_abs", "rel_rms", "cosine", r.ref_path.empty() ? "" : "   vs --ref: max_abs rel_rms cosine");
  for (const auto& t : r.runs) {
    fmt::print(out, "{:<{}}  {:<10} {:<8} {:>13} {:>8.3f}ms {:>8.2f}  {}{}\n", escape_for_terminal(t.name), w, t.type,
               t.backend, fmt::format("{}x{}", t.n_rows, t.n_cols), t.median_seconds * 1e3, t.gbps_median,
               error_cells(t.vs_reference), r.ref_path.empty() ? "" : "  " + error_cells(t.vs_second));
    if (!t.note.empty()) fmt::print(out, "  note: {}\n", escape_for_terminal(t.note));
    if (t.upload_seconds)
      fmt::print(out, "  upload: {:.3f} ms ({:.2f} GB/s), not in the times: the weights stay on the device\n",
                 *t.upload_seconds * 1e3, *t.upload_seconds > 0 ? static_cast<double>(t.weight_bytes) / *t.upload_seconds / 1e9 : 0.0);
    if (t.xquant && t.xquant->act.empty()) fmt::print(out, "  x-quant: {}\n", escape_for_terminal(t.xquant->note));
    if (t.xquant && !t.xquant->act.empty())
      fmt::print(out, "{:<{}}  {:<10} {:<8} {:>13} {:>8.3f}ms {:>8.2f}  {}\n", "  x-quant, x as " + t.xquant->act, w, t.type,
                 "int8", "", t.xquant->median_seconds * 1e3, t.xquant->gbps_median, error_cells(t.xquant->vs_reference));
  }
  for (const auto& f : r.failures) fmt::print(out, "failed: {}: {}\n", escape_for_terminal(f.name), escape_for_terminal(f.error.to_string()));
  for (const auto& m : r.ref_missing) fmt::print(out, "not in --ref model: {}\n", escape_for_terminal(m));
  if (r.cancelled) fmt::print(out, "cancelled\n");
}

nlohmann::json to_json(const compute::DevicesReport& r) {
  nlohmann::json backends = nlohmann::json::array();
  for (const auto& b : r.backends)
    backends.push_back({{"name", b.name}, {"description", b.description}, {"available", b.available}, {"reason", b.reason}});
  nlohmann::json platforms = nlohmann::json::array();
  for (const auto& p : r.opencl_platforms) {
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : p.devices)
      devices.push_back({{"name", d.name}, {"vendor", d.vendor}, {"version", d.version}, {"driver_version", d.driver_version},
                         {"type", d.type}, {"compute_units", d.compute_units}, {"global_mem_bytes", d.global_mem_bytes},
                         {"max_alloc_bytes", d.max_alloc_bytes}, {"max_work_group_size", d.max_work_group_size},
                         {"fp16", d.fp16}, {"used", d.used}, {"index", d.index}});
    platforms.push_back({{"name", p.name}, {"vendor", p.vendor}, {"version", p.version}, {"devices", devices},
                         {"error", p.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.error)}});
  }
  return {{"backends", backends}, {"opencl_platforms", platforms},
          {"opencl_error", r.opencl_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.opencl_error)},
          {"cpu_threads", r.cpu_threads}};
}

void print_devices(std::FILE* out, const compute::DevicesReport& r, OutputFormat format) {
  if (format == OutputFormat::json) return print_json(out, to_json(r));
  fmt::print(out, "backends\n");
  for (const auto& b : r.backends)
    fmt::print(out, "  {:<10} {:<12} {}\n", b.name, b.available ? "available" : "unavailable", escape_for_terminal(b.reason));
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

}  // namespace akview
