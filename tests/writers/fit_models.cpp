// The `fit` ground-truth models (fit_models.hpp): metadata keys as llama.cpp's loader reads them,
// tensors in ggml order (ne[0] is the row length) with the shapes its per-architecture loaders ask for.
#include "tests/writers/fit_models.hpp"

#include <fmt/format.h>

namespace akview::testing {
namespace {

constexpr uint32_t kF32 = 0;

// A SentencePiece ("llama") vocabulary: <unk>, <s>, </s>, the 256 byte tokens, fillers, and
// <|endoftext|> last (llama.cpp looks it up for a model named phi3).
void add_vocab(GgufWriter& w, uint32_t n_vocab) {
  std::vector<GgufValue> tokens, scores, types;
  for (uint32_t i = 0; i < n_vocab; ++i) {
    std::string text;
    int32_t type = 1;   // normal
    if (i == 0) text = "<unk>", type = 2;
    else if (i == 1) text = "<s>", type = 3;
    else if (i == 2) text = "</s>", type = 3;
    else if (i < 3 + 256) text = fmt::format("<0x{:02X}>", i - 3), type = 6;
    else if (i + 1 == n_vocab) text = "<|endoftext|>", type = 3;
    else text = fmt::format("\xe2\x96\x81t{}", i);
    tokens.push_back(gguf_string(text));
    scores.push_back(gguf_f32(-static_cast<float>(i)));
    types.push_back(gguf_i32(type));
  }
  w.set("tokenizer.ggml.model", gguf_string("llama"));
  w.set("tokenizer.ggml.tokens", gguf_array(kGgufString, tokens));
  w.set("tokenizer.ggml.scores", gguf_array(kGgufF32, scores));
  w.set("tokenizer.ggml.token_type", gguf_array(kGgufI32, types));
  w.set("tokenizer.ggml.bos_token_id", gguf_u32(1));
  w.set("tokenizer.ggml.eos_token_id", gguf_u32(2));
  w.set("tokenizer.ggml.unknown_token_id", gguf_u32(0));
}

struct Builder {
  const FitModelSpec& s;
  GgufWriter w;
  void key(const std::string& suffix, uint32_t v) { w.set(s.arch + "." + suffix, gguf_u32(v)); }
  void tensor(const std::string& name, std::vector<int64_t> ne, uint32_t type) {
    w.add_tensor({name, type, std::move(ne)});
  }
  void matrix(const std::string& name, std::vector<int64_t> ne) { tensor(name, std::move(ne), s.weight_type); }
  void norm(const std::string& name, int64_t n) { tensor(name, {n}, kF32); }
  std::string blk(uint32_t il, const char* what) const { return fmt::format("blk.{}.{}.weight", il, what); }
};

void add_attention(Builder& b, uint32_t il, bool qk_norm) {
  const auto& s = b.s;
  const int64_t q = int64_t{s.head_dim} * s.n_head, kv = int64_t{s.head_dim} * s.n_head_kv;
  b.matrix(b.blk(il, "attn_q"), {s.n_embd, q});
  b.matrix(b.blk(il, "attn_k"), {s.n_embd, kv});
  b.matrix(b.blk(il, "attn_v"), {s.n_embd, kv});
  b.matrix(b.blk(il, "attn_output"), {q, s.n_embd});
  if (qk_norm) {
    b.norm(b.blk(il, "attn_q_norm"), s.head_dim);
    b.norm(b.blk(il, "attn_k_norm"), s.head_dim);
  }
}

void add_dense_ffn(Builder& b, uint32_t il, uint32_t n_ff) {
  b.matrix(b.blk(il, "ffn_gate"), {b.s.n_embd, n_ff});
  b.matrix(b.blk(il, "ffn_down"), {n_ff, b.s.n_embd});
  b.matrix(b.blk(il, "ffn_up"), {b.s.n_embd, n_ff});
}

void add_moe_ffn(Builder& b, uint32_t il, uint32_t n_ff_exp) {
  const auto& s = b.s;
  b.tensor(b.blk(il, "ffn_gate_inp"), {s.n_embd, s.n_expert}, kF32);
  b.matrix(b.blk(il, "ffn_gate_exps"), {s.n_embd, n_ff_exp, s.n_expert});
  b.matrix(b.blk(il, "ffn_down_exps"), {n_ff_exp, s.n_embd, s.n_expert});
  b.matrix(b.blk(il, "ffn_up_exps"), {s.n_embd, n_ff_exp, s.n_expert});
}

// deepseek2 with MLA (key_length_mla / value_length_mla present): the compressed KV projection and
// the per-head k_b / v_b, leading dense layers, then routed and shared experts.
void add_deepseek2_layer(Builder& b, uint32_t il) {
  const auto& s = b.s;
  const int64_t nope = s.key_mla - s.rope_dim;
  b.norm(b.blk(il, "attn_norm"), s.n_embd);
  b.norm(b.blk(il, "attn_q_a_norm"), s.q_lora);
  b.norm(b.blk(il, "attn_kv_a_norm"), s.kv_lora);
  b.matrix(b.blk(il, "attn_q_a"), {s.n_embd, s.q_lora});
  b.matrix(b.blk(il, "attn_q_b"), {s.q_lora, int64_t{s.n_head} * s.key_mla});
  b.matrix(b.blk(il, "attn_kv_a_mqa"), {s.n_embd, s.kv_lora + s.rope_dim});
  b.matrix(b.blk(il, "attn_k_b"), {nope, s.kv_lora, s.n_head});
  b.matrix(b.blk(il, "attn_v_b"), {s.kv_lora, s.value_mla, s.n_head});
  b.matrix(b.blk(il, "attn_output"), {int64_t{s.n_head} * s.value_mla, s.n_embd});
  b.norm(b.blk(il, "ffn_norm"), s.n_embd);
  if (il < s.n_dense_lead) {
    add_dense_ffn(b, il, s.n_ff);
    return;
  }
  add_moe_ffn(b, il, s.n_ff_exp);
  const int64_t shared = int64_t{s.n_ff_exp} * s.n_expert_shared;
  b.matrix(b.blk(il, "ffn_gate_shexp"), {s.n_embd, shared});
  b.matrix(b.blk(il, "ffn_down_shexp"), {shared, s.n_embd});
  b.matrix(b.blk(il, "ffn_up_shexp"), {s.n_embd, shared});
}

FitModelSpec base(std::string name, std::string arch) {
  FitModelSpec s;
  s.name = std::move(name);
  s.arch = std::move(arch);
  return s;
}

}   // namespace

std::vector<FitModelSpec> fit_model_specs() {
  std::vector<FitModelSpec> v;
  v.push_back(base("llama-gqa", "llama"));
  {
    auto s = base("llama-mha-tied", "llama");   // no GQA, output tied to token_embd
    s.n_head_kv = 4;
    s.tied_output = true;
    v.push_back(s);
  }
  {
    auto s = base("mixtral-moe", "llama");
    s.n_expert = 8, s.n_expert_used = 2;
    v.push_back(s);
  }
  v.push_back(base("qwen2", "qwen2"));
  {
    auto s = base("qwen3", "qwen3");
    s.head_dim = 128;   // qwen3 heads are wider than n_embd / n_head
    v.push_back(s);
  }
  {
    auto s = base("qwen3moe", "qwen3moe");
    s.head_dim = 128, s.n_expert = 8, s.n_expert_used = 2, s.n_ff_exp = 128;
    v.push_back(s);
  }
  {
    auto s = base("gemma2", "gemma2");
    s.tied_output = true, s.sliding_window = 1024, s.n_ctx_train = 8192;
    v.push_back(s);
  }
  {
    auto s = base("gemma3", "gemma3");
    s.n_layer = 8, s.tied_output = true, s.sliding_window = 512, s.n_ctx_train = 131072, s.head_dim = 128;
    v.push_back(s);
  }
  {
    auto s = base("phi3", "phi3");
    s.n_head_kv = 4, s.sliding_window = 2048, s.n_ctx_train = 4096;   // phi3's window is read, then not used
    v.push_back(s);
  }
  {
    auto s = base("deepseek2-mla", "deepseek2");
    s.n_head = 4, s.n_head_kv = 1, s.n_ctx_train = 163840;
    s.q_lora = 96, s.kv_lora = 128, s.rope_dim = 32, s.key_mla = 96, s.value_mla = 64;
    s.head_dim = s.kv_lora + s.rope_dim;   // the cached K row: latent + rope part
    s.n_expert = 8, s.n_expert_used = 2, s.n_ff_exp = 128, s.n_expert_shared = 1, s.n_dense_lead = 1;
    v.push_back(s);
  }
  {
    auto s = base("llama3-8b-shape", "llama");   // Llama-3-8B's shapes, q8_0 matrices
    s.n_embd = 4096, s.n_layer = 32, s.n_head = 32, s.n_head_kv = 8, s.head_dim = 128, s.n_ff = 14336;
    s.n_vocab = 128256, s.n_ctx_train = 8192, s.weight_type = 8;
    v.push_back(s);
  }
  return v;
}

GgufWriter build_fit_model(const FitModelSpec& s) {
  Builder b{s, {}};
  b.w.set("general.architecture", gguf_string(s.arch));
  b.w.set("general.name", gguf_string(s.name));
  b.w.set("general.file_type", gguf_u32(s.weight_type == 8 ? 7 : 1));
  b.key("context_length", s.n_ctx_train);
  b.key("embedding_length", s.n_embd);
  b.key("block_count", s.n_layer);
  b.key("feed_forward_length", s.n_ff);
  b.key("attention.head_count", s.n_head);
  b.key("attention.head_count_kv", s.n_head_kv);
  b.w.set(s.arch + ".attention.layer_norm_rms_epsilon", gguf_f32(1e-6f));
  b.w.set(s.arch + ".rope.freq_base", gguf_f32(10000.0f));
  const bool mla = s.arch == "deepseek2";
  if (mla) {
    b.key("attention.key_length", s.kv_lora + s.rope_dim);
    b.key("attention.value_length", s.kv_lora);
    b.key("attention.key_length_mla", s.key_mla);
    b.key("attention.value_length_mla", s.value_mla);
    b.key("attention.q_lora_rank", s.q_lora);
    b.key("attention.kv_lora_rank", s.kv_lora);
    b.key("rope.dimension_count", s.rope_dim);
    b.key("leading_dense_block_count", s.n_dense_lead);
    b.key("expert_shared_count", s.n_expert_shared);
  } else if (s.head_dim * s.n_head != s.n_embd) {
    b.key("attention.key_length", s.head_dim);
    b.key("attention.value_length", s.head_dim);
  }
  if (s.n_expert) {
    b.key("expert_count", s.n_expert);
    b.key("expert_used_count", s.n_expert_used);
  }
  if (s.n_ff_exp) b.key("expert_feed_forward_length", s.n_ff_exp);
  if (s.sliding_window) b.key("attention.sliding_window", s.sliding_window);
  if (s.swa_pattern) b.key("attention.sliding_window_pattern", s.swa_pattern);
  add_vocab(b.w, s.n_vocab);

  b.matrix("token_embd.weight", {s.n_embd, s.n_vocab});
  b.norm("output_norm.weight", s.n_embd);
  if (!s.tied_output) b.matrix("output.weight", {s.n_embd, s.n_vocab});
  const bool gemma = s.arch == "gemma2" || s.arch == "gemma3";
  const bool qk_norm = s.arch == "qwen3" || s.arch == "qwen3moe" || s.arch == "gemma3";
  for (uint32_t il = 0; il < s.n_layer; ++il) {
    if (mla) {
      add_deepseek2_layer(b, il);
      continue;
    }
    b.norm(b.blk(il, "attn_norm"), s.n_embd);
    add_attention(b, il, qk_norm);
    if (s.arch == "qwen2") {
      const int64_t q = int64_t{s.head_dim} * s.n_head, kv = int64_t{s.head_dim} * s.n_head_kv;
      b.tensor(fmt::format("blk.{}.attn_q.bias", il), {q}, kF32);
      b.tensor(fmt::format("blk.{}.attn_k.bias", il), {kv}, kF32);
      b.tensor(fmt::format("blk.{}.attn_v.bias", il), {kv}, kF32);
    }
    if (gemma) b.norm(b.blk(il, "post_attention_norm"), s.n_embd);
    b.norm(b.blk(il, "ffn_norm"), s.n_embd);
    if (s.arch == "phi3") {
      b.matrix(b.blk(il, "ffn_down"), {s.n_ff, s.n_embd});
      b.matrix(b.blk(il, "ffn_up"), {s.n_embd, 2 * int64_t{s.n_ff}});
    } else if (s.n_expert) {
      add_moe_ffn(b, il, s.n_ff_exp ? s.n_ff_exp : s.n_ff);
    } else {
      add_dense_ffn(b, il, s.n_ff);
    }
    if (gemma) b.norm(b.blk(il, "post_ffw_norm"), s.n_embd);
  }
  return std::move(b.w);
}

}   // namespace akview::testing
