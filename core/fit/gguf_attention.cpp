// Reading the attention shape of a GGUF for the KV cache (gguf_attention.hpp). The limits are
// llama.cpp's: at most 512 layers (LLAMA_MAX_LAYERS), a context of at most 2^32 - 1 tokens (its
// n_ctx is a uint32_t); head counts are capped at 2^16 so no product of them can overflow.
#include "core/fit/gguf_attention.hpp"

#include <fmt/format.h>

#include "core/formats/gguf.hpp"
#include "core/formats/gguf_meta.hpp"

namespace akview::fit {
namespace {

constexpr uint64_t kMaxLayers = 512;
constexpr uint64_t kMaxHeads = uint64_t{1} << 16;
constexpr uint64_t kMaxHeadDim = uint64_t{1} << 20;
constexpr uint64_t kMaxContext = 0xffffffffu;

struct Reader {
  const Model& model;
  std::string arch;

  std::string key(std::string_view suffix) const { return arch + "." + std::string(suffix); }

  Error bad(const MetaEntry& e, std::string message) const {
    const std::string& file = e.file < model.files.size() ? model.files[e.file].path : model.path;
    return make_error(ErrorCode::schema, file, e.offset, fmt::format("metadata key '{}': {}", e.key, message));
  }

  // An unsigned integer key within [min, max]; nullopt (no error) when absent.
  Result<std::optional<uint64_t>> number(std::string_view suffix, uint64_t min, uint64_t max) const {
    const MetaEntry* e = model.find_meta(key(suffix));
    if (!e) return std::optional<uint64_t>();
    auto v = meta_integer(e->value);
    if (!v) return bad(*e, "is not an integer");
    if (*v < 0 || static_cast<uint64_t>(*v) < min || static_cast<uint64_t>(*v) > max)
      return bad(*e, fmt::format("{} is outside {}..{}", *v, min, max));
    return std::optional<uint64_t>(static_cast<uint64_t>(*v));
  }

  // A number or a per-layer array (head counts, sliding-window flags): one value per layer.
  Result<std::optional<std::vector<uint64_t>>> per_layer(std::string_view suffix, uint32_t n_layer, uint64_t min,
                                                         uint64_t max) const {
    using Out = std::optional<std::vector<uint64_t>>;
    const MetaEntry* e = model.find_meta(key(suffix));
    if (!e) return Out();
    if (e->value.type != MetaType::array) {
      auto one = number(suffix, min, max);
      if (!one) return std::move(one).error();
      return Out(std::vector<uint64_t>(n_layer, **one));
    }
    if (e->value.count != n_layer)
      return bad(*e, fmt::format("has {} elements for {} layers", e->value.count, n_layer));
    auto elems = read_gguf_array(model, *e, e->value, n_layer);
    if (!elems) return std::move(elems).error();
    std::vector<uint64_t> out;
    for (const MetaValue& v : *elems) {
      std::optional<int64_t> i = v.type == MetaType::boolean ? std::optional<int64_t>(v.num.u != 0) : meta_integer(v);
      if (!i || *i < 0 || static_cast<uint64_t>(*i) < min || static_cast<uint64_t>(*i) > max)
        return bad(*e, fmt::format("element {} is not an integer in {}..{}", out.size(), min, max));
      out.push_back(static_cast<uint64_t>(*i));
    }
    return Out(std::move(out));
  }
};

}   // namespace

Result<GgufAttention> read_gguf_attention(const Model& model, const std::string& arch, const ArchRule& rule) {
  Reader r{model, arch};
  GgufAttention a;
  a.rule = &rule;

  auto ctx = r.number("context_length", 1, kMaxContext);
  if (!ctx) return std::move(ctx).error();
  if (*ctx) {
    a.trained_context = **ctx;
    a.context_source = "gguf: " + r.key("context_length");
  }
  auto layers = r.number("block_count", 1, kMaxLayers);
  if (!layers) return std::move(layers).error();
  auto embd = r.number("embedding_length", 1, uint64_t{1} << 24);
  if (!embd) return std::move(embd).error();
  if (!*layers) a.missing.push_back(r.key("block_count"));
  if (!a.missing.empty()) return a;
  a.n_layer = static_cast<uint32_t>(**layers);

  auto heads = r.per_layer("attention.head_count", a.n_layer, 1, kMaxHeads);
  if (!heads) return std::move(heads).error();
  if (!*heads) {
    a.missing.push_back(r.key("attention.head_count"));
    return a;
  }
  auto kv_heads = r.per_layer("attention.head_count_kv", a.n_layer, 0, kMaxHeads);
  if (!kv_heads) return std::move(kv_heads).error();
  const std::vector<uint64_t>& kvh = *kv_heads ? **kv_heads : **heads;   // absent: as many as the query heads

  auto k_len = r.number("attention.key_length", 1, kMaxHeadDim);
  if (!k_len) return std::move(k_len).error();
  auto v_len = r.number("attention.value_length", 1, kMaxHeadDim);
  if (!v_len) return std::move(v_len).error();
  auto k_len_swa = r.number("attention.key_length_swa", 1, kMaxHeadDim);
  if (!k_len_swa) return std::move(k_len_swa).error();
  auto v_len_swa = r.number("attention.value_length_swa", 1, kMaxHeadDim);
  if (!v_len_swa) return std::move(v_len_swa).error();
  uint64_t k_dim = 0, v_dim = 0;
  std::string dim_source;
  if (*k_len && *v_len) {
    k_dim = **k_len, v_dim = **v_len;
    dim_source = r.key("attention.key_length") + " / value_length";
  } else if (*embd) {
    // llama.cpp: n_embd / n_head of layer 0 for whichever length is absent
    const uint64_t derived = **embd / (*heads)->front();
    k_dim = *k_len ? **k_len : derived;
    v_dim = *v_len ? **v_len : derived;
    dim_source = fmt::format("{} / {} ({} / {})", r.key("embedding_length"), r.key("attention.head_count"), **embd,
                             (*heads)->front());
    if (derived == 0) {
      a.missing.push_back(r.key("attention.key_length") + " (embedding_length / head_count is 0)");
      return a;
    }
  } else {
    a.missing.push_back(r.key("embedding_length") + " or " + r.key("attention.key_length"));
    return a;
  }

  // MLA: llama.cpp caches one row of key_length (latent + rope) per token and derives V from it.
  if (rule.kv == KvKind::mla) {
    auto k_mla = r.number("attention.key_length_mla", 1, kMaxHeadDim);
    if (!k_mla) return std::move(k_mla).error();
    a.mla = k_mla->has_value();
  }

  // Sliding window: which layers, and how wide.
  std::vector<uint64_t> sliding(a.n_layer, 0);
  auto window = r.number("attention.sliding_window", 0, kMaxContext);
  if (!window) return std::move(window).error();
  bool use_swa = false;
  if (rule.swa == SwaRule::always) {
    use_swa = true;
    a.window = *window ? static_cast<uint32_t>(**window) : rule.default_window;
    a.window_source = *window ? "gguf: " + r.key("attention.sliding_window")
                              : fmt::format("llama.cpp's default for {} ({})", arch, rule.default_window);
  } else if (rule.swa == SwaRule::if_window_key && *window && **window > 0) {
    use_swa = true;
    a.window = static_cast<uint32_t>(**window);
    a.window_source = "gguf: " + r.key("attention.sliding_window");
  }
  std::string pattern_source;
  if (use_swa) {
    const MetaEntry* pe = model.find_meta(r.key("attention.sliding_window_pattern"));
    if (pe && pe->value.type == MetaType::array) {
      auto flags = r.per_layer("attention.sliding_window_pattern", a.n_layer, 0, 1);
      if (!flags) return std::move(flags).error();
      sliding = **flags;
      pattern_source = "gguf: " + r.key("attention.sliding_window_pattern") + " (per layer)";
    } else {
      auto period = r.number("attention.sliding_window_pattern", 0, kMaxLayers);
      if (!period) return std::move(period).error();
      const uint64_t p = *period ? **period : rule.default_period;
      for (uint32_t il = 0; il < a.n_layer; ++il) sliding[il] = p == 0 || il % p < p - 1;
      pattern_source = *period ? fmt::format("gguf: {} ({})", r.key("attention.sliding_window_pattern"), p)
                               : fmt::format("llama.cpp's default period for {} ({})", arch, p);
    }
    a.window_source += ", layers: " + pattern_source;
  }

  a.layers.resize(a.n_layer);
  for (uint32_t il = 0; il < a.n_layer; ++il) {
    LayerShape& l = a.layers[il];
    l.sliding = sliding[il] != 0;
    l.kv_heads = static_cast<uint32_t>(kvh[il]);
    l.k_head_dim = static_cast<uint32_t>(l.sliding && *k_len_swa ? **k_len_swa : k_dim);
    l.v_head_dim = a.mla ? 0 : static_cast<uint32_t>(l.sliding && *v_len_swa ? **v_len_swa : v_dim);
  }
  a.source = fmt::format("gguf: {}{}, {}", r.key("attention.head_count_kv"), *kv_heads ? "" : " (absent: head_count)",
                         dim_source);
  if (a.mla) a.source += ", " + r.key("attention.key_length_mla") + " present (MLA: no V rows)";
  return a;
}

}   // namespace akview::fit
