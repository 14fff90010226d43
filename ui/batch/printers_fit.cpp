// Rendering of `akview fit`: each buffer with its bytes and where the figure came from, the KV
// cache's layers (runs of equal layers on one line), the devices, and the table over contexts.
#include <fmt/format.h>

#include "ui/batch/fit_report.hpp"

namespace akview {
namespace {

nlohmann::json figure_json(const fit::Figure& f) { return {{"bytes", f.bytes}, {"source", f.source}}; }
nlohmann::json figure_json(const std::optional<fit::Figure>& f) {
  return f ? figure_json(*f) : nlohmann::json(nullptr);
}
std::string device_name(int device) { return device < 0 ? std::string("CPU") : fmt::format("GPU{}", device); }

}   // namespace

nlohmann::json to_json(const FitReport& r) {
  const fit::FitEstimate& e = r.estimate;
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : e.kv_layers)
    layers.push_back({{"layer", l.layer},
                      {"sliding", l.sliding},
                      {"cells", l.cells},
                      {"kv_heads", l.kv_heads},
                      {"k_head_dim", l.k_head_dim},
                      {"v_head_dim", l.v_head_dim},
                      {"k_bytes", l.k_bytes},
                      {"v_bytes", l.v_bytes},
                      {"device", device_name(l.device)}});
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : e.devices)
    devices.push_back({{"name", d.name},
                       {"layers", d.layers},
                       {"input_layer", d.input_layer},
                       {"output_layer", d.output_layer},
                       {"weights", d.weights},
                       {"kv_cache", d.kv},
                       {"compute", d.compute},
                       {"output", d.output},
                       {"total", d.total()},
                       {"capacity", d.capacity ? nlohmann::json(d.capacity) : nlohmann::json(nullptr)}});
  nlohmann::json table = nlohmann::json::array();
  for (const auto& t : r.table)
    table.push_back({{"context", t.context},
                     {"cells", t.cells},
                     {"kv_cache", t.kv ? nlohmann::json(*t.kv) : nlohmann::json(nullptr)},
                     {"compute", t.compute ? nlohmann::json(*t.compute) : nlohmann::json(nullptr)},
                     {"total", t.total},
                     {"gpu_layers", t.gpu_layers}});
  return {{"path", e.path},
          {"runtime", e.runtime},
          {"arch", e.arch},
          {"arch_source", e.arch_source},
          {"arch_known", e.arch_known},
          {"context", e.context},
          {"context_source", e.context_source},
          {"trained_context", e.trained_context},
          {"cells", e.cells},
          {"kv_type", std::string(type_info(e.kv_type).name)},
          {"batch", e.batch},
          {"ubatch", e.ubatch},
          {"buffers",
           {{"weights", figure_json(e.weights)},
            {"kv_cache", figure_json(e.kv)},
            {"compute", figure_json(e.compute)},
            {"output", figure_json(e.output)}}},
          {"embedding", figure_json(e.embedding)},
          {"output_layer", figure_json(e.output_layer)},
          {"output_tied", e.output_tied},
          {"k_bytes", e.k_bytes},
          {"v_bytes", e.v_bytes},
          {"window", e.window},
          {"window_source", e.window_source},
          {"kv_layers", layers},
          {"devices", devices},
          {"gpu_layers", e.gpu_layers},
          {"total", e.total},
          {"missing", e.missing},
          {"table", table}};
}

void print_fit(std::FILE* out, const FitReport& r, OutputFormat format) {
  if (format == OutputFormat::json) {
    print_json(out, to_json(r));
    return;
  }
  const fit::FitEstimate& e = r.estimate;
  auto esc = [](const std::string& s) { return escape_for_terminal(s); };
  fmt::print(out, "{}: {} ({}), runtime {}\n", esc(e.path), e.arch.empty() ? "unknown architecture" : esc(e.arch),
             esc(e.arch_source), esc(e.runtime));
  if (e.context)
    fmt::print(out, "context {} tokens ({}){}, KV type {}, batch {} / ubatch {}\n", e.context, esc(e.context_source),
               e.cells && e.cells != e.context ? fmt::format(" = {} cells", e.cells) : std::string(),
               type_info(e.kv_type).name, e.batch, e.ubatch);
  fmt::print(out, "\n  {:<14} {:>11}  {}\n", "buffer", "bytes", "from");
  auto row = [&](const char* name, const std::optional<fit::Figure>& f) {
    if (f) fmt::print(out, "  {:<14} {:>11}  {}\n", name, format_bytes(f->bytes), esc(f->source));
    else fmt::print(out, "  {:<14} {:>11}  (not made: see below)\n", name, "-");
  };
  row("weights", e.weights);
  if (e.embedding.bytes)
    fmt::print(out, "  {:<14} {:>11}  {}\n", "  embedding", format_bytes(e.embedding.bytes), esc(e.embedding.source));
  fmt::print(out, "  {:<14} {:>11}  {}\n", "  output", e.output_tied ? "tied" : format_bytes(e.output_layer.bytes),
             esc(e.output_layer.source));
  row("KV cache", e.kv);
  if (e.kv) fmt::print(out, "  {:<14} {:>11}  K {}, V {}\n", "", "", format_bytes(e.k_bytes), format_bytes(e.v_bytes));
  if (!e.runtime.starts_with("llama.cpp")) {
    // the stored-tensor runtimes: no compute / output figures
  } else {
    row("compute", e.compute);
    row("output", e.output);
  }
  fmt::print(out, "  {:<14} {:>11}\n", "total", format_bytes(e.total));
  if (e.window) fmt::print(out, "\nsliding window {} tokens ({})\n", e.window, esc(e.window_source));

  if (!e.kv_layers.empty()) {
    fmt::print(out, "\n  {:<12} {:<8} {:>8} {:>13} {:>13} {:>11}  {}\n", "KV layers", "kind", "cells", "K heads x dim",
               "V heads x dim", "each", "device");
    for (size_t i = 0; i < e.kv_layers.size();) {
      const auto& a = e.kv_layers[i];
      size_t j = i + 1;
      while (j < e.kv_layers.size()) {
        const auto& b = e.kv_layers[j];
        if (b.sliding != a.sliding || b.cells != a.cells || b.kv_heads != a.kv_heads || b.k_head_dim != a.k_head_dim ||
            b.v_head_dim != a.v_head_dim || b.device != a.device)
          break;
        ++j;
      }
      const std::string span =
          j - i == 1 ? fmt::format("{}", a.layer) : fmt::format("{}-{}", a.layer, e.kv_layers[j - 1].layer);
      fmt::print(out, "  {:<12} {:<8} {:>8} {:>13} {:>13} {:>11}  {}\n", span, a.sliding ? "sliding" : "full", a.cells,
                 fmt::format("{} x {}", a.kv_heads, a.k_head_dim),
                 a.v_head_dim ? fmt::format("{} x {}", a.kv_heads, a.v_head_dim) : std::string("- (MLA)"),
                 format_bytes(a.k_bytes + a.v_bytes), device_name(a.device));
      i = j;
    }
  }
  if (e.devices.size() > 1) {
    const uint32_t on_gpus = static_cast<uint32_t>(e.kv_layers.size()) - e.devices[0].layers;
    fmt::print(out, "\n-ngl {}: {} of {} layers on the GPUs, the output layer on {} (llama.cpp's layer split)\n",
               e.gpu_layers, on_gpus, e.kv_layers.size(), e.devices[0].output_layer ? "the CPU" : "a GPU");
    fmt::print(out, "  {:<6} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11}  {}\n", "device", "layers", "weights", "KV cache",
               "compute", "total", "capacity", "holds");
    for (const auto& d : e.devices) {
      std::string holds = d.input_layer ? "token embedding" : "";
      if (d.output_layer) holds += holds.empty() ? "output layer" : ", output layer";
      fmt::print(out, "  {:<6} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11}  {}\n", d.name, d.layers,
                 format_bytes(d.weights), format_bytes(d.kv), format_bytes(d.compute), format_bytes(d.total()),
                 d.capacity ? format_bytes(d.capacity) : "RAM", holds);
    }
  }
  if (!r.table.empty()) {
    fmt::print(out, "\n  {:>9} {:>11} {:>11} {:>11}{}\n", "context", "KV cache", "compute", "total",
               e.devices.size() > 1 ? "    -ngl" : "");
    for (const auto& t : r.table)
      fmt::print(out, "  {:>9} {:>11} {:>11} {:>11}{}\n", t.context, t.kv ? format_bytes(*t.kv) : "-",
                 t.compute ? format_bytes(*t.compute) : "-", format_bytes(t.total),
                 e.devices.size() > 1 ? fmt::format("  {:>6}", t.gpu_layers) : std::string());
  }
  for (const auto& m : e.missing) fmt::print(out, "\nnot made: {}", esc(m));
  if (!e.missing.empty()) fmt::print(out, "\n");
}

}   // namespace akview
