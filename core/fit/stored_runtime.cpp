// The stored-tensor runtimes' estimate (stored_runtime.hpp): the config through model_config, the
// activation dtype and layer_types read from the same config.json.
#include "core/fit/stored_runtime.hpp"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/checked.hpp"
#include "core/names/model_config.hpp"

namespace akview::fit {
namespace {

// The config.json text of a model, or "" (the same places extract_config looks).
std::string config_text(const Model& model, std::string& name) {
  for (const auto& f : model.files) {
    if (f.role != "config") continue;
    auto b = f.map.bytes();
    name = f.path;
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  name = model.path + "/config.json";
  std::ifstream in(name, std::ios::binary);
  return in ? std::string((std::istreambuf_iterator<char>(in)), {}) : std::string();
}

struct ActivationType {
  TypeId type = TypeId::f16;
  std::string source;
};

ActivationType activation_type(const nlohmann::json& j, const std::string& name) {
  for (const char* scope : {"", "text_config"}) {
    const nlohmann::json* o = &j;
    if (*scope) {
      if (!j.contains(scope) || !j[scope].is_object()) continue;
      o = &j[scope];
    }
    for (const char* k : {"torch_dtype", "dtype"}) {
      if (!o->contains(k) || !(*o)[k].is_string()) continue;
      const std::string v = (*o)[k].get<std::string>();
      const std::string src = fmt::format("{}: {}{}{}", name, scope, *scope ? "." : "", k);
      if (v == "bfloat16") return {TypeId::bf16, src};
      if (v == "float16") return {TypeId::f16, src};
      if (v == "float32") return {TypeId::f32, src};
    }
  }
  return {TypeId::f16, "no torch_dtype in the config: float16 assumed"};
}

// layer_types ["sliding_attention", "full_attention", ...] when the config has it.
std::vector<bool> sliding_layers(const nlohmann::json& j, uint32_t n_layer) {
  for (const nlohmann::json* o : {&j, j.contains("text_config") ? &j["text_config"] : &j}) {
    if (!o->contains("layer_types") || !(*o)["layer_types"].is_array()) continue;
    const auto& a = (*o)["layer_types"];
    if (a.size() != n_layer) continue;
    std::vector<bool> out;
    for (const auto& v : a) out.push_back(v.is_string() && v.get<std::string>() == "sliding_attention");
    return out;
  }
  return std::vector<bool>(n_layer, false);
}

}   // namespace

Result<FitEstimate> estimate_stored_runtime(const Model& model, const FitQuery& q) {
  FitEstimate e;
  e.path = model.path;
  e.runtime = model.format == "mlx" ? "MLX (the stored tensors as they are)"
                                    : "transformers / MLX (the stored tensors as they are)";
  e.kv_type = q.kv_type;
  e.weights = {model.total_bytes(), fmt::format("the {} tensors' bytes at their stored dtypes", model.tensors.size())};
  auto config = extract_config(model);
  if (!config) return std::move(config).error();
  e.arch = config->arch;
  e.arch_source = config->arch_source;
  e.arch_known = !e.arch.empty();
  if (const Tensor* t = model.find("model.embed_tokens.weight"))
    e.embedding = {t->nbytes, "tensor: model.embed_tokens.weight"};
  if (const Tensor* t = model.find("lm_head.weight")) e.output_layer = {t->nbytes, "tensor: lm_head.weight"};
  else e.output_tied = true;

  std::string name;
  const std::string text = config_text(model, name);
  nlohmann::json j = text.empty() ? nlohmann::json() : nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) j = nlohmann::json::object();
  const ActivationType act = activation_type(j, name);
  e.kv_type = act.type;

  const ModelConfig& c = *config;
  e.trained_context = c.context.present && c.context.value > 0 ? static_cast<uint64_t>(c.context.value) : 0;
  e.context = q.context ? q.context : e.trained_context;
  e.context_source = q.context ? "--ctx" : c.context.source;
  for (const auto* f : {&c.layers, &c.kv_heads, &c.head_dim})
    if (!f->present) e.missing.push_back("KV cache: needs the config's layer count, key/value heads and head dim");
  if (e.context == 0) e.missing.push_back("KV cache: needs --ctx or the config's max_position_embeddings");
  const bool ok_shape = c.layers.present && c.kv_heads.present && c.head_dim.present && e.context > 0;
  if (ok_shape) {
    if (c.layers.value < 1 || c.layers.value > 4096 || c.kv_heads.value < 1 || c.kv_heads.value > 65536 ||
        c.head_dim.value < 1 || c.head_dim.value > (1 << 20) || e.context > 0xffffffffu)
      return make_error(
          ErrorCode::schema, name, kNoOffset,
          fmt::format("config: {} layers, {} kv heads, head dim {} at a context of {}: outside what a runtime can hold",
                      c.layers.value, c.kv_heads.value, c.head_dim.value, e.context));
    const auto n_layer = static_cast<uint32_t>(c.layers.value);
    const auto sliding = sliding_layers(j, n_layer);
    const uint64_t window =
        c.sliding_window.present && c.sliding_window.value > 0 ? static_cast<uint64_t>(c.sliding_window.value) : 0;
    e.window = static_cast<uint32_t>(std::min<uint64_t>(window, UINT32_MAX));
    if (window) e.window_source = c.sliding_window.source + ", layers: " + c.sliding_window_pattern_source;
    const uint64_t elem = type_info(act.type).block_bytes;
    uint64_t total = 0;
    for (uint32_t il = 0; il < n_layer; ++il) {
      KvLayer l;
      l.layer = il;
      l.sliding = window && sliding[il];
      l.cells = static_cast<uint32_t>(l.sliding ? std::min(e.context, window) : e.context);
      l.kv_heads = static_cast<uint32_t>(c.kv_heads.value);
      l.k_head_dim = l.v_head_dim = static_cast<uint32_t>(c.head_dim.value);
      auto row = checked_mul(uint64_t{l.kv_heads} * l.k_head_dim, elem);
      auto bytes = row ? checked_mul(*row, l.cells) : std::nullopt;
      auto sum = bytes ? checked_add(total, 2 * *bytes) : std::nullopt;
      if (!sum) return make_error(ErrorCode::overflow, name, kNoOffset, "KV cache: the byte count passes 2^64");
      l.k_bytes = l.v_bytes = *bytes;
      e.k_bytes += *bytes;
      e.v_bytes += *bytes;
      total = *sum;
      e.kv_layers.push_back(l);
    }
    e.cells = static_cast<uint32_t>(e.context);
    e.kv = Figure{total,
                  fmt::format("{}, {}, {} in {}", c.layers.source, c.kv_heads.source, c.head_dim.source, act.source)};
    e.kv_source = e.kv->source;
  }
  e.missing.push_back("compute and output buffers: not estimated for this runtime (it allocates them as it runs)");
  e.total = checked_add(e.weights.bytes, e.kv ? e.kv->bytes : 0).value_or(UINT64_MAX);
  DeviceShare cpu;
  cpu.name = "host";
  cpu.weights = e.weights.bytes;
  cpu.kv = e.kv ? e.kv->bytes : 0;
  e.devices.push_back(cpu);
  return e;
}

}   // namespace akview::fit
