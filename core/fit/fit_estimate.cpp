// The `fit` estimate for GGUF models (llama.cpp's buffers) and the table's contexts; SafeTensors /
// MLX models go to estimate_stored_runtime (stored_runtime.cpp).
#include "core/fit/fit_estimate.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/checked.hpp"
#include "core/fit/compute_buffer.hpp"
#include "core/fit/kv_cache.hpp"
#include "core/fit/layer_split.hpp"
#include "core/fit/stored_runtime.hpp"
#include "core/formats/gguf.hpp"
#include "core/formats/gguf_meta.hpp"

namespace akview::fit {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::optional<uint64_t> meta_u64(const Model& model, const std::string& key) {
  const MetaEntry* e = model.find_meta(key);
  if (!e) return std::nullopt;
  if (e->value.type == MetaType::array) {   // per-layer arrays: the widest layer
    auto elems = read_gguf_array(model, *e, e->value, 4096);
    if (!elems) return std::nullopt;
    uint64_t widest = 0;
    for (const auto& v : *elems)
      if (auto i = meta_integer(v); i && *i > 0) widest = std::max(widest, static_cast<uint64_t>(*i));
    return widest;
  }
  auto i = meta_integer(e->value);
  if (!i || *i < 0) return std::nullopt;
  return static_cast<uint64_t>(*i);
}

// The vocabulary llama.cpp sizes its logits by: the tokenizer's token count.
Figure vocab_of(const Model& model, const std::string& arch) {
  if (const MetaEntry* t = model.find_meta("tokenizer.ggml.tokens"); t && t->value.type == MetaType::array)
    return {t->value.count, "gguf: tokenizer.ggml.tokens (count)"};
  if (auto v = meta_u64(model, arch + ".vocab_size")) return {*v, "gguf: " + arch + ".vocab_size"};
  return {0, ""};
}

ComputeShape compute_shape(const Model& model, const std::string& arch, const KvCache& kv, uint32_t cells,
                           uint32_t ubatch, uint64_t n_vocab) {
  auto key = [&](const char* suffix) { return meta_u64(model, arch + "." + suffix).value_or(0); };
  ComputeShape s;
  s.tokens = std::min<uint64_t>(cells, ubatch);
  uint64_t full = 0, sliding = 0;
  for (const auto& l : kv.layers) (l.sliding ? sliding : full) = l.cells;
  s.mask_cells = full + sliding;
  s.n_embd = key("embedding_length");
  s.n_vocab = n_vocab;
  const uint64_t experts = key("expert_count"), dense_lead = key("leading_dense_block_count");
  const uint64_t ff = key("feed_forward_length");
  s.dense_ff = experts == 0 || dense_lead > 0 ? ff : 0;
  if (experts) {
    s.expert_ff = model.find_meta(arch + ".expert_feed_forward_length") ? key("expert_feed_forward_length") : ff;
    s.experts_used = key("expert_used_count");
    s.shared_experts = key("expert_shared_count");
  }
  if (model.find_meta(arch + ".attention.key_length_mla")) {
    s.mla_heads = key("attention.head_count");
    s.kv_lora = key("attention.kv_lora_rank");
    s.rope_dim = key("rope.dimension_count");
    s.q_lora = key("attention.q_lora_rank");
    s.key_mla = key("attention.key_length_mla");
  }
  return s;
}

// Fills `e.devices` for the placement `device` (one entry per layer, then the output layer).
void share_out(FitEstimate& e, const LayerWeights& w, const std::vector<int>& device, const FitQuery& q) {
  const size_t n_gpu = q.gpu_gib.size();
  e.devices.assign(1 + n_gpu, DeviceShare{});
  e.devices[0].name = "CPU";
  e.devices[0].input_layer = true;
  for (size_t g = 0; g < n_gpu; ++g) {
    e.devices[1 + g].name = fmt::format("GPU{}", g);
    e.devices[1 + g].capacity = static_cast<uint64_t>(q.gpu_gib[g] * kGiB);
  }
  auto at = [&](int d) -> DeviceShare& { return e.devices[static_cast<size_t>(d + 1)]; };
  e.devices[0].weights = w.input;
  for (size_t il = 0; il < w.layer.size(); ++il) {
    at(device[il]).weights += w.layer[il];
    at(device[il]).layers += 1;
  }
  DeviceShare& out = at(device[w.layer.size()]);
  out.weights += w.output;
  out.output_layer = true;
  for (auto& l : e.kv_layers) {
    l.device = device[l.layer];
    at(l.device).kv += checked_align_up(l.k_bytes, kTensorAlignment).value_or(l.k_bytes) +
                       (l.v_head_dim ? checked_align_up(l.v_bytes, kTensorAlignment).value_or(l.v_bytes) : 0);
  }
  // Every device that computes a layer holds a compute buffer of the same plan; the logits
  // (output buffer) live in host memory.
  const uint64_t compute = e.compute ? e.compute->bytes : 0;
  for (auto& d : e.devices)
    if (d.layers > 0 || d.output_layer) d.compute = compute;
  if (e.devices[0].compute == 0) e.devices[0].compute = compute;   // the CPU schedules the graph's inputs
  e.devices[0].output = e.output ? e.output->bytes : 0;
}

bool fits(const FitEstimate& e) {
  for (size_t i = 1; i < e.devices.size(); ++i)
    if (e.devices[i].total() > e.devices[i].capacity) return false;
  return true;
}

Result<FitEstimate> estimate_gguf(const Model& model, const FitQuery& q) {
  FitEstimate e;
  e.path = model.path;
  e.runtime = "llama.cpp";
  e.kv_type = q.kv_type;
  e.batch = q.batch;
  e.ubatch = std::min(q.batch, q.ubatch);
  const MetaEntry* arch_entry = model.find_meta("general.architecture");
  e.arch = std::string(arch_entry->value.str);
  e.arch_source = "gguf: general.architecture";
  const std::string file = model.files.empty() ? model.path : model.files.front().path;

  e.weights = {model.total_bytes(), fmt::format("the {} tensors' bytes", model.tensors.size())};
  const ArchRule* rule = find_arch_rule(e.arch);
  e.arch_known = rule != nullptr;
  if (rule) e.arch_note = std::string(rule->note);

  GgufAttention attention;
  if (rule) {
    auto a = read_gguf_attention(model, e.arch, *rule);
    if (!a) return std::move(a).error();
    attention = std::move(*a);
  } else {
    e.missing.push_back(
        fmt::format("KV cache and compute buffer: llama.cpp's cache for architecture '{}' is not modelled "
                    "(known: llama, qwen2/3, qwen3moe, gemma2/3, phi3, deepseek2, ...)",
                    e.arch));
    if (auto c = meta_u64(model, e.arch + ".context_length")) {
      attention.trained_context = *c;
      attention.context_source = "gguf: " + e.arch + ".context_length";
    }
    attention.n_layer =
        static_cast<uint32_t>(std::min<uint64_t>(meta_u64(model, e.arch + ".block_count").value_or(0), 512));
  }
  e.trained_context = attention.trained_context;
  e.context = q.context ? q.context : attention.trained_context;
  e.context_source = q.context ? "--ctx" : attention.context_source;

  const LayerWeights w = weights_by_layer(model, attention.n_layer);
  e.embedding = {w.embedding, "tensor: token_embd.weight"};
  e.output_tied = w.output_tied;
  e.output_layer = w.output_tied ? Figure{0, "no output.weight: llama.cpp reuses token_embd.weight"}
                                 : Figure{w.output_matrix, "tensor: output.weight"};

  const Figure vocab = vocab_of(model, e.arch);
  if (vocab.bytes) {
    auto bytes = checked_mul(vocab.bytes, 4);
    if (!bytes)
      return make_error(ErrorCode::overflow, file, kNoOffset, "the vocabulary size overflows the logits buffer");
    e.output = Figure{*bytes, fmt::format("{} x 4 bytes (one row of f32 logits; {})", vocab.bytes, vocab.source)};
  } else {
    e.missing.push_back("output buffer: needs tokenizer.ggml.tokens or " + e.arch + ".vocab_size");
  }

  for (const auto& k : attention.missing) e.missing.push_back("KV cache and compute buffer: needs " + k);
  if (e.context == 0) e.missing.push_back("KV cache and compute buffer: needs --ctx or " + e.arch + ".context_length");

  if (rule && attention.missing.empty() && e.context > 0) {
    auto cells = padded_cells(e.context, file);
    if (!cells) return std::move(cells).error();
    e.cells = *cells;
    auto kv = size_kv_cache(attention, e.cells, e.ubatch, q.kv_type, file);
    if (!kv) return std::move(kv).error();
    e.kv_layers = kv->layers;
    e.k_bytes = kv->k_bytes;
    e.v_bytes = kv->v_bytes;
    e.kv = Figure{kv->buffer_bytes, attention.source};
    e.kv_source = attention.source;
    e.window = attention.window;
    e.window_source = attention.window_source;
    const ComputeEstimate c =
        estimate_compute_buffer(compute_shape(model, e.arch, *kv, e.cells, e.ubatch, vocab.bytes));
    e.compute = Figure{c.bytes, "estimate: " + c.formula};
  }

  // Placement: everything on the CPU, or the largest -ngl whose GPU shares fit.
  const uint32_t n_layer = static_cast<uint32_t>(w.layer.size());
  std::vector<double> split = q.gpu_gib;
  if (split.empty()) {
    share_out(e, w, place_layers(n_layer, 0, split), q);
  } else {
    for (uint32_t ngl = n_layer + 1;; --ngl) {
      share_out(e, w, place_layers(n_layer, ngl, split), q);
      e.gpu_layers = ngl;
      if (fits(e) || ngl == 0) break;
    }
  }

  uint64_t total = e.weights.bytes;
  for (const auto* f : {&e.kv, &e.compute, &e.output})
    if (*f) total = checked_add(total, (*f)->bytes).value_or(UINT64_MAX);
  e.total = total;
  return e;
}

}   // namespace

Result<FitEstimate> estimate_fit(const Model& model, const FitQuery& query) {
  if (query.batch == 0 || query.ubatch == 0)
    return make_error(ErrorCode::usage, model.path, kNoOffset, "--batch must be at least 1");
  for (double g : query.gpu_gib)
    if (!(g > 0) || !std::isfinite(g) || g > 1e6)
      return make_error(ErrorCode::usage, model.path, kNoOffset, fmt::format("--gpu-mem {}: expected GiB above 0", g));
  const MetaEntry* arch = model.find_meta("general.architecture");
  if (arch && arch->value.type == MetaType::string) return estimate_gguf(model, query);
  return estimate_stored_runtime(model, query);
}

std::vector<uint64_t> table_contexts(uint64_t trained) {
  std::vector<uint64_t> out;
  for (uint64_t c : {4096, 8192, 32768, 131072})
    if (trained == 0 || c < trained) out.push_back(c);
  if (trained) out.push_back(trained);
  return out;
}

Result<std::vector<FitTableRow>> fit_table(const Model& model, const FitQuery& query, const FitEstimate& at_query) {
  std::vector<FitTableRow> rows;
  for (uint64_t context : table_contexts(at_query.trained_context ? at_query.trained_context : at_query.context)) {
    std::optional<FitEstimate> other;
    if (context != at_query.context) {
      FitQuery q = query;
      q.context = context;
      auto e = estimate_fit(model, q);
      if (!e) return std::move(e).error();
      other = std::move(*e);
    }
    const FitEstimate& e = other ? *other : at_query;
    FitTableRow row;
    row.context = context;
    row.cells = e.cells;
    if (e.kv) row.kv = e.kv->bytes;
    if (e.compute) row.compute = e.compute->bytes;
    row.total = e.total;
    row.gpu_layers = e.gpu_layers;
    rows.push_back(row);
  }
  return rows;
}

}   // namespace akview::fit
