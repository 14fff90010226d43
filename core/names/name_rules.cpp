// The rule rows (FORMATS.md §2.9 HF -> GGUF table, MODEL_TENSORS per arch, conversion transforms)
// and their compiled matcher. Adding a model family is adding rows, not code.
#include "core/names/name_rules.hpp"

#include <array>
#include <charconv>

namespace akview {
namespace {

constexpr std::string_view kPermuted =
    "llama-arch GGUF: q/k rows are permuted from HF (LlamaModel.permute, k with n_head_kv)";
constexpr std::string_view kPlusOne = "gemma/gemma2 GGUF: +1 added to norm weights at conversion";
constexpr std::string_view kStacked = "GGUF stacks per-expert HF tensors into one [E, ...] tensor";

// The architectures whose converters apply a transform: its note is shown only for them.
struct NoteScope {
  std::string_view note;
  std::string_view archs;   // comma list; "" = every architecture
};
constexpr std::array kNoteScopes = {
    NoteScope{kPermuted, "llama,mistral,mixtral"},
    NoteScope{kPlusOne, "gemma,gemma2,nemotron"},
};

constexpr std::array kRules = {
    // ---- GGUF (llama.cpp TENSOR_NAMES) ----
    NameRule{"", "token_embd", "token_embedding", "embedding", ""},
    NameRule{"", "token_embd_norm", "token_embedding_norm", "norm", ""},
    NameRule{"", "position_embd", "position_embedding", "embedding", ""},
    NameRule{"", "output_norm", "output_norm", "norm", kPlusOne},
    NameRule{"", "output", "output", "output", ""},
    NameRule{"", "rope_freqs", "rope_freqs", "rope", ""},
    NameRule{"", "rope_factors_long", "rope_factors_long", "rope", ""},
    NameRule{"", "rope_factors_short", "rope_factors_short", "rope", ""},
    NameRule{"", "blk.{n}.attn_norm", "layers.{n}.attention_norm", "norm", kPlusOne},
    NameRule{"", "blk.{n}.attn_q", "layers.{n}.attention.q", "attention.q", kPermuted},
    NameRule{"", "blk.{n}.attn_k", "layers.{n}.attention.k", "attention.k", kPermuted},
    NameRule{"", "blk.{n}.attn_v", "layers.{n}.attention.v", "attention.v", ""},
    NameRule{"", "blk.{n}.attn_output", "layers.{n}.attention.output", "attention.output", ""},
    NameRule{"", "blk.{n}.attn_qkv", "layers.{n}.attention.qkv", "attention.qkv", ""},
    NameRule{"", "blk.{n}.attn_q_norm", "layers.{n}.attention.q_norm", "norm", ""},
    NameRule{"", "blk.{n}.attn_k_norm", "layers.{n}.attention.k_norm", "norm", ""},
    NameRule{"", "blk.{n}.post_attention_norm", "layers.{n}.post_attention_norm", "norm", kPlusOne},
    NameRule{"", "blk.{n}.ffn_norm", "layers.{n}.ffn_norm", "norm", kPlusOne},
    NameRule{"", "blk.{n}.post_ffw_norm", "layers.{n}.post_ffn_norm", "norm", kPlusOne},
    NameRule{"", "blk.{n}.ffn_gate", "layers.{n}.ffn.gate", "ffn.gate", ""},
    NameRule{"", "blk.{n}.ffn_up", "layers.{n}.ffn.up", "ffn.up", ""},
    NameRule{"phi3", "blk.{n}.ffn_up", "layers.{n}.ffn.gate_up", "ffn.gate_up", "phi3: fused gate+up, 2 x n_ff rows"},
    NameRule{"", "blk.{n}.ffn_down", "layers.{n}.ffn.down", "ffn.down", ""},
    NameRule{"", "blk.{n}.ffn_gate_inp", "layers.{n}.ffn.router", "ffn.router", ""},
    NameRule{"", "blk.{n}.ffn_gate_exps", "layers.{n}.ffn.experts.gate", "ffn.experts.gate", kStacked},
    NameRule{"", "blk.{n}.ffn_up_exps", "layers.{n}.ffn.experts.up", "ffn.experts.up", kStacked},
    NameRule{"", "blk.{n}.ffn_down_exps", "layers.{n}.ffn.experts.down", "ffn.experts.down", kStacked},
    NameRule{"", "blk.{n}.ffn_gate_shexp", "layers.{n}.ffn.shared_expert.gate", "ffn.shared_expert.gate", ""},
    NameRule{"", "blk.{n}.ffn_up_shexp", "layers.{n}.ffn.shared_expert.up", "ffn.shared_expert.up", ""},
    NameRule{"", "blk.{n}.ffn_down_shexp", "layers.{n}.ffn.shared_expert.down", "ffn.shared_expert.down", ""},
    NameRule{"", "blk.{n}.ffn_gate_inp_shexp", "layers.{n}.ffn.shared_expert_router", "ffn.router", ""},

    // ---- Hugging Face transformers (also MLX and Ollama safetensors) ----
    NameRule{"", "model.embed_tokens", "token_embedding", "embedding", ""},
    NameRule{"", "model.norm", "output_norm", "norm", ""},
    NameRule{"", "lm_head", "output", "output", ""},
    NameRule{"", "model.layers.{n}.input_layernorm", "layers.{n}.attention_norm", "norm", ""},
    NameRule{"", "model.layers.{n}.self_attn.q_proj", "layers.{n}.attention.q", "attention.q", ""},
    NameRule{"", "model.layers.{n}.self_attn.k_proj", "layers.{n}.attention.k", "attention.k", ""},
    NameRule{"", "model.layers.{n}.self_attn.v_proj", "layers.{n}.attention.v", "attention.v", ""},
    NameRule{"", "model.layers.{n}.self_attn.o_proj", "layers.{n}.attention.output", "attention.output", ""},
    NameRule{"", "model.layers.{n}.self_attn.qkv_proj", "layers.{n}.attention.qkv", "attention.qkv", ""},
    NameRule{"", "model.layers.{n}.self_attn.q_norm", "layers.{n}.attention.q_norm", "norm", ""},
    NameRule{"", "model.layers.{n}.self_attn.k_norm", "layers.{n}.attention.k_norm", "norm", ""},
    NameRule{"", "model.layers.{n}.post_attention_layernorm", "layers.{n}.ffn_norm", "norm", ""},
    NameRule{"gemma2,gemma3,gemma3_text", "model.layers.{n}.post_attention_layernorm", "layers.{n}.post_attention_norm",
             "norm", ""},
    NameRule{"", "model.layers.{n}.pre_feedforward_layernorm", "layers.{n}.ffn_norm", "norm", ""},
    NameRule{"", "model.layers.{n}.post_feedforward_layernorm", "layers.{n}.post_ffn_norm", "norm", ""},
    NameRule{"", "model.layers.{n}.mlp.gate_proj", "layers.{n}.ffn.gate", "ffn.gate", ""},
    NameRule{"", "model.layers.{n}.mlp.up_proj", "layers.{n}.ffn.up", "ffn.up", ""},
    NameRule{"", "model.layers.{n}.mlp.down_proj", "layers.{n}.ffn.down", "ffn.down", ""},
    NameRule{"", "model.layers.{n}.mlp.gate_up_proj", "layers.{n}.ffn.gate_up", "ffn.gate_up", ""},
    // MoE: routers, per-expert HF tensors, MLX's stacked switch_mlp, shared experts
    NameRule{"", "model.layers.{n}.mlp.gate", "layers.{n}.ffn.router", "ffn.router", ""},
    NameRule{"", "model.layers.{n}.block_sparse_moe.gate", "layers.{n}.ffn.router", "ffn.router", ""},
    NameRule{"", "model.layers.{n}.mlp.router", "layers.{n}.ffn.router", "ffn.router", ""},
    NameRule{"", "model.layers.{n}.mlp.experts.{e}.gate_proj", "layers.{n}.ffn.experts.{e}.gate", "ffn.experts.gate",
             ""},
    NameRule{"", "model.layers.{n}.mlp.experts.{e}.up_proj", "layers.{n}.ffn.experts.{e}.up", "ffn.experts.up", ""},
    NameRule{"", "model.layers.{n}.mlp.experts.{e}.down_proj", "layers.{n}.ffn.experts.{e}.down", "ffn.experts.down",
             ""},
    NameRule{"", "model.layers.{n}.block_sparse_moe.experts.{e}.w1", "layers.{n}.ffn.experts.{e}.gate",
             "ffn.experts.gate", ""},
    NameRule{"", "model.layers.{n}.block_sparse_moe.experts.{e}.w3", "layers.{n}.ffn.experts.{e}.up", "ffn.experts.up",
             ""},
    NameRule{"", "model.layers.{n}.block_sparse_moe.experts.{e}.w2", "layers.{n}.ffn.experts.{e}.down",
             "ffn.experts.down", ""},
    NameRule{"", "model.layers.{n}.mlp.switch_mlp.gate_proj", "layers.{n}.ffn.experts.gate", "ffn.experts.gate", ""},
    NameRule{"", "model.layers.{n}.mlp.switch_mlp.up_proj", "layers.{n}.ffn.experts.up", "ffn.experts.up", ""},
    NameRule{"", "model.layers.{n}.mlp.switch_mlp.down_proj", "layers.{n}.ffn.experts.down", "ffn.experts.down", ""},
    NameRule{"", "model.layers.{n}.block_sparse_moe.switch_mlp.gate_proj", "layers.{n}.ffn.experts.gate",
             "ffn.experts.gate", ""},
    NameRule{"", "model.layers.{n}.block_sparse_moe.switch_mlp.up_proj", "layers.{n}.ffn.experts.up", "ffn.experts.up",
             ""},
    NameRule{"", "model.layers.{n}.block_sparse_moe.switch_mlp.down_proj", "layers.{n}.ffn.experts.down",
             "ffn.experts.down", ""},
    NameRule{"", "model.layers.{n}.mlp.shared_expert.gate_proj", "layers.{n}.ffn.shared_expert.gate",
             "ffn.shared_expert.gate", ""},
    NameRule{"", "model.layers.{n}.mlp.shared_expert.up_proj", "layers.{n}.ffn.shared_expert.up",
             "ffn.shared_expert.up", ""},
    NameRule{"", "model.layers.{n}.mlp.shared_expert.down_proj", "layers.{n}.ffn.shared_expert.down",
             "ffn.shared_expert.down", ""},
    NameRule{"", "model.layers.{n}.mlp.shared_experts.gate_proj", "layers.{n}.ffn.shared_expert.gate",
             "ffn.shared_expert.gate", ""},
    NameRule{"", "model.layers.{n}.mlp.shared_experts.up_proj", "layers.{n}.ffn.shared_expert.up",
             "ffn.shared_expert.up", ""},
    NameRule{"", "model.layers.{n}.mlp.shared_experts.down_proj", "layers.{n}.ffn.shared_expert.down",
             "ffn.shared_expert.down", ""},
    NameRule{"", "model.layers.{n}.mlp.shared_expert_gate", "layers.{n}.ffn.shared_expert_router", "ffn.router", ""},

    // ---- Whisper: HF transformers names ----
    NameRule{"", "model.encoder.conv1", "encoder.conv1", "conv", ""},
    NameRule{"", "model.encoder.conv2", "encoder.conv2", "conv", ""},
    NameRule{"", "model.encoder.embed_positions", "encoder.position_embedding", "embedding", ""},
    NameRule{"", "model.encoder.layer_norm", "encoder.output_norm", "norm", ""},
    NameRule{"", "model.encoder.layers.{n}.self_attn_layer_norm", "encoder.layers.{n}.attention_norm", "norm", ""},
    NameRule{"", "model.encoder.layers.{n}.self_attn.q_proj", "encoder.layers.{n}.attention.q", "attention.q", ""},
    NameRule{"", "model.encoder.layers.{n}.self_attn.k_proj", "encoder.layers.{n}.attention.k", "attention.k", ""},
    NameRule{"", "model.encoder.layers.{n}.self_attn.v_proj", "encoder.layers.{n}.attention.v", "attention.v", ""},
    NameRule{"", "model.encoder.layers.{n}.self_attn.out_proj", "encoder.layers.{n}.attention.output",
             "attention.output", ""},
    NameRule{"", "model.encoder.layers.{n}.final_layer_norm", "encoder.layers.{n}.ffn_norm", "norm", ""},
    NameRule{"", "model.encoder.layers.{n}.fc1", "encoder.layers.{n}.ffn.up", "ffn.up", ""},
    NameRule{"", "model.encoder.layers.{n}.fc2", "encoder.layers.{n}.ffn.down", "ffn.down", ""},
    NameRule{"", "model.decoder.embed_tokens", "decoder.token_embedding", "embedding", ""},
    NameRule{"", "model.decoder.embed_positions", "decoder.position_embedding", "embedding", ""},
    NameRule{"", "model.decoder.layer_norm", "decoder.output_norm", "norm", ""},
    NameRule{"", "proj_out", "decoder.output", "output", ""},
    NameRule{"", "model.decoder.layers.{n}.self_attn_layer_norm", "decoder.layers.{n}.attention_norm", "norm", ""},
    NameRule{"", "model.decoder.layers.{n}.self_attn.q_proj", "decoder.layers.{n}.attention.q", "attention.q", ""},
    NameRule{"", "model.decoder.layers.{n}.self_attn.k_proj", "decoder.layers.{n}.attention.k", "attention.k", ""},
    NameRule{"", "model.decoder.layers.{n}.self_attn.v_proj", "decoder.layers.{n}.attention.v", "attention.v", ""},
    NameRule{"", "model.decoder.layers.{n}.self_attn.out_proj", "decoder.layers.{n}.attention.output",
             "attention.output", ""},
    NameRule{"", "model.decoder.layers.{n}.encoder_attn_layer_norm", "decoder.layers.{n}.cross_attention_norm", "norm",
             ""},
    NameRule{"", "model.decoder.layers.{n}.encoder_attn.q_proj", "decoder.layers.{n}.cross_attention.q",
             "cross_attention.q", ""},
    NameRule{"", "model.decoder.layers.{n}.encoder_attn.k_proj", "decoder.layers.{n}.cross_attention.k",
             "cross_attention.k", ""},
    NameRule{"", "model.decoder.layers.{n}.encoder_attn.v_proj", "decoder.layers.{n}.cross_attention.v",
             "cross_attention.v", ""},
    NameRule{"", "model.decoder.layers.{n}.encoder_attn.out_proj", "decoder.layers.{n}.cross_attention.output",
             "cross_attention.output", ""},
    NameRule{"", "model.decoder.layers.{n}.final_layer_norm", "decoder.layers.{n}.ffn_norm", "norm", ""},
    NameRule{"", "model.decoder.layers.{n}.fc1", "decoder.layers.{n}.ffn.up", "ffn.up", ""},
    NameRule{"", "model.decoder.layers.{n}.fc2", "decoder.layers.{n}.ffn.down", "ffn.down", ""},
    // ---- Whisper: OpenAI checkpoint names (whisper.cpp keeps them) ----
    NameRule{"", "encoder.conv1", "encoder.conv1", "conv", ""},
    NameRule{"", "encoder.conv2", "encoder.conv2", "conv", ""},
    NameRule{"", "encoder.positional_embedding", "encoder.position_embedding", "embedding", ""},
    NameRule{"", "encoder.ln_post", "encoder.output_norm", "norm", ""},
    NameRule{"", "encoder.blocks.{n}.attn_ln", "encoder.layers.{n}.attention_norm", "norm", ""},
    NameRule{"", "encoder.blocks.{n}.attn.query", "encoder.layers.{n}.attention.q", "attention.q", ""},
    NameRule{"", "encoder.blocks.{n}.attn.key", "encoder.layers.{n}.attention.k", "attention.k", ""},
    NameRule{"", "encoder.blocks.{n}.attn.value", "encoder.layers.{n}.attention.v", "attention.v", ""},
    NameRule{"", "encoder.blocks.{n}.attn.out", "encoder.layers.{n}.attention.output", "attention.output", ""},
    NameRule{"", "encoder.blocks.{n}.mlp_ln", "encoder.layers.{n}.ffn_norm", "norm", ""},
    NameRule{"", "encoder.blocks.{n}.mlp.0", "encoder.layers.{n}.ffn.up", "ffn.up", ""},
    NameRule{"", "encoder.blocks.{n}.mlp.2", "encoder.layers.{n}.ffn.down", "ffn.down", ""},
    NameRule{"", "decoder.token_embedding", "decoder.token_embedding", "embedding", ""},
    NameRule{"", "decoder.positional_embedding", "decoder.position_embedding", "embedding", ""},
    NameRule{"", "decoder.ln", "decoder.output_norm", "norm", ""},
    NameRule{"", "decoder.blocks.{n}.attn_ln", "decoder.layers.{n}.attention_norm", "norm", ""},
    NameRule{"", "decoder.blocks.{n}.attn.query", "decoder.layers.{n}.attention.q", "attention.q", ""},
    NameRule{"", "decoder.blocks.{n}.attn.key", "decoder.layers.{n}.attention.k", "attention.k", ""},
    NameRule{"", "decoder.blocks.{n}.attn.value", "decoder.layers.{n}.attention.v", "attention.v", ""},
    NameRule{"", "decoder.blocks.{n}.attn.out", "decoder.layers.{n}.attention.output", "attention.output", ""},
    NameRule{"", "decoder.blocks.{n}.cross_attn_ln", "decoder.layers.{n}.cross_attention_norm", "norm", ""},
    NameRule{"", "decoder.blocks.{n}.cross_attn.query", "decoder.layers.{n}.cross_attention.q", "cross_attention.q",
             ""},
    NameRule{"", "decoder.blocks.{n}.cross_attn.key", "decoder.layers.{n}.cross_attention.k", "cross_attention.k", ""},
    NameRule{"", "decoder.blocks.{n}.cross_attn.value", "decoder.layers.{n}.cross_attention.v", "cross_attention.v",
             ""},
    NameRule{"", "decoder.blocks.{n}.cross_attn.out", "decoder.layers.{n}.cross_attention.output",
             "cross_attention.output", ""},
    NameRule{"", "decoder.blocks.{n}.mlp_ln", "decoder.layers.{n}.ffn_norm", "norm", ""},
    NameRule{"", "decoder.blocks.{n}.mlp.0", "decoder.layers.{n}.ffn.up", "ffn.up", ""},
    NameRule{"", "decoder.blocks.{n}.mlp.2", "decoder.layers.{n}.ffn.down", "ffn.down", ""},
};

// Suffixes carried over from the native name to the canonical one.
constexpr std::array<std::string_view, 2> kSuffixes = {".weight", ".bias"};

bool is_number(std::string_view s) {
  if (s.empty() || s.size() > 18) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool arch_listed(std::string_view list, std::string_view arch) {
  while (!list.empty()) {
    auto comma = list.find(',');
    if (list.substr(0, comma) == arch) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// Splits `name` at '.', appends each segment to `key` with numbers replaced by '#', and collects
// the numbers. Returns false when the name is too deep to be a rule's.
bool shape_key(std::string_view name, std::string& key, std::vector<int64_t>& numbers) {
  key.clear();
  numbers.clear();
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    std::string_view seg = name.substr(start, dot - start);
    if (!key.empty() || start > 0) key += '.';
    if (is_number(seg)) {
      int64_t v = 0;
      std::from_chars(seg.data(), seg.data() + seg.size(), v);
      numbers.push_back(v);
      key += '#';
    } else {
      key.append(seg);
    }
    if (numbers.size() > 8) return false;
    start = dot + 1;
  }
  return true;
}

}   // namespace

std::span<const NameRule> name_rules() { return kRules; }

NameMatcher::NameMatcher() {
  for (uint32_t r = 0; r < kRules.size(); ++r) {
    Compiled c;
    c.rule = r;
    // Native pattern -> key: {n}/{e} and literal numbers become '#'.
    std::string pattern(kRules[r].native), key;
    size_t start = 0;
    while (start <= pattern.size()) {
      size_t dot = pattern.find('.', start);
      if (dot == std::string::npos) dot = pattern.size();
      std::string seg = pattern.substr(start, dot - start);
      if (start > 0) key += '.';
      if (seg == "{n}" || seg == "{e}") {
        c.slots.push_back({seg[1], 0});
        key += '#';
      } else if (is_number(seg)) {
        c.slots.push_back({'l', std::stoll(seg)});
        key += '#';
      } else {
        key += seg;
      }
      start = dot + 1;
    }
    std::string_view canon = kRules[r].canonical;
    size_t at = 0;
    while (true) {
      size_t tag = canon.find('{', at);
      if (tag == std::string_view::npos) {
        c.canonical.push_back(canon.substr(at));
        break;
      }
      c.canonical.push_back(canon.substr(at, tag - at));
      c.canonical.push_back(canon.substr(tag, 3));
      at = tag + 3;
    }
    by_key_[key].push_back(std::move(c));
  }
}

std::optional<CanonicalName> NameMatcher::match(std::string_view native, std::string_view arch) const {
  std::string_view suffix;
  for (auto s : kSuffixes)
    if (native.size() > s.size() && native.substr(native.size() - s.size()) == s) suffix = s;
  if (suffix.empty()) return std::nullopt;
  std::string_view stem = native.substr(0, native.size() - suffix.size());
  thread_local std::string key;
  thread_local std::vector<int64_t> numbers;
  if (!shape_key(stem, key, numbers)) return std::nullopt;
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return std::nullopt;
  const Compiled* best = nullptr;
  int64_t layer = -1, expert = -1;
  for (const auto& c : it->second) {
    int64_t n = -1, e = -1;
    bool ok = c.slots.size() == numbers.size();
    for (size_t i = 0; ok && i < c.slots.size(); ++i) {
      if (c.slots[i].kind == 'n') n = numbers[i];
      else if (c.slots[i].kind == 'e') e = numbers[i];
      else ok = c.slots[i].literal == numbers[i];
    }
    if (!ok) continue;
    const NameRule& rule = kRules[c.rule];
    const bool specific = !rule.arch.empty();
    if (specific && !arch_listed(rule.arch, arch)) continue;
    if (!best || (specific && kRules[best->rule].arch.empty())) {
      best = &c;
      layer = n;
      expert = e;
    }
  }
  if (!best) return std::nullopt;
  CanonicalName out;
  out.rule = best->rule;
  out.role = kRules[best->rule].role;
  out.note = kRules[best->rule].note;
  for (const auto& scope : kNoteScopes)
    if (scope.note == out.note && !arch_listed(scope.archs, arch)) out.note = {};
  out.layer = layer;
  out.expert = expert;
  for (auto part : best->canonical) {
    if (part == "{n}") out.name += std::to_string(layer);
    else if (part == "{e}") out.name += std::to_string(expert);
    else out.name.append(part);
  }
  out.name.append(suffix);
  return out;
}

const NameMatcher& name_matcher() {
  static const NameMatcher m;
  return m;
}

}   // namespace akview
