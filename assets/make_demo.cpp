// Generates the bundled demo folder with the project's own writers (tests/writers): the same small
// llama-style weights in every format akview reads, so `akview build/assets/demo` opens on the model list.
//   <out>/demo/llama-demo-q4km.gguf    a Q4_K_M-like mixture (q4_k, q6_k, q8_0, f32)
//   <out>/demo/llama-demo-bf16/        a sharded BF16 SafeTensors checkpoint with config.json, so
//                                      `akview diff` against the GGUF shows what quantization did
//   <out>/demo/llama-demo-mlx-4bit/    MLX affine 4-bit g64 (packed U32 + bf16 .scales/.biases, FORMATS.md §3)
//   <out>/demo/ollama/                 an Ollama store (FORMATS.md §4): llama-demo:q4_k_m (the GGUF as a
//                                      blob, with template/params/license layers) and llama-demo:int4
//                                      (safetensors tensor blobs, §4.5)
// Weights are synthetic: N(0, 0.02) with rare outliers and one "hot" input column per matrix. The
// output is deterministic (fixed seed, no timestamps), so blob digests are the same at every build.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/writers/gguf_writer.hpp"
#include "tests/writers/ollama_writer.hpp"
#include "tests/writers/quantize.hpp"
#include "tests/writers/st_writer.hpp"

namespace {

using akview::TypeId;
namespace t = akview::testing;

constexpr int kLayers = 4, kDim = 256, kHeads = 4, kKvHeads = 2, kFfn = 768, kVocab = 512, kContext = 2048;

struct DemoTensor {
  std::string gguf_name, hf_name;
  int64_t rows, cols;   // numpy shape [rows, cols] (rows = 1 for vectors)
  TypeId gguf_type;
  std::vector<float> values;
};

std::vector<float> make_matrix(int64_t rows, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::uniform_int_distribution<int64_t> pick(0, cols - 1);
  const int64_t hot = pick(rng);
  std::vector<float> w(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = normal(rng);
      if (c == hot) v *= 3.0f;
      if (rng() % 2000 == 0) v *= 12.0f;   // rare outliers, as real checkpoints have
      w[static_cast<size_t>(r * cols + c)] = v;
    }
  return w;
}

std::vector<float> make_norm(int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(1.0f, 0.05f);
  std::vector<float> w(static_cast<size_t>(n));
  for (auto& v : w) v = normal(rng);
  return w;
}

std::vector<DemoTensor> make_model() {
  std::mt19937 rng(20261121);
  std::vector<DemoTensor> ts;
  const int64_t kv_dim = kDim / kHeads * kKvHeads;
  ts.push_back(
      {"token_embd.weight", "model.embed_tokens.weight", kVocab, kDim, TypeId::q8_0, make_matrix(kVocab, kDim, rng)});
  for (int l = 0; l < kLayers; ++l) {
    const std::string g = "blk." + std::to_string(l) + ".", h = "model.layers." + std::to_string(l) + ".";
    const TypeId wide = (l == 0 || l == kLayers - 1) ? TypeId::q6_k : TypeId::q4_k;   // Q4_K_M keeps ends wider
    ts.push_back({g + "attn_norm.weight", h + "input_layernorm.weight", 1, kDim, TypeId::f32, make_norm(kDim, rng)});
    ts.push_back(
        {g + "attn_q.weight", h + "self_attn.q_proj.weight", kDim, kDim, TypeId::q4_k, make_matrix(kDim, kDim, rng)});
    ts.push_back({g + "attn_k.weight", h + "self_attn.k_proj.weight", kv_dim, kDim, TypeId::q4_k,
                  make_matrix(kv_dim, kDim, rng)});
    ts.push_back(
        {g + "attn_v.weight", h + "self_attn.v_proj.weight", kv_dim, kDim, wide, make_matrix(kv_dim, kDim, rng)});
    ts.push_back({g + "attn_output.weight", h + "self_attn.o_proj.weight", kDim, kDim, TypeId::q4_k,
                  make_matrix(kDim, kDim, rng)});
    ts.push_back(
        {g + "ffn_norm.weight", h + "post_attention_layernorm.weight", 1, kDim, TypeId::f32, make_norm(kDim, rng)});
    ts.push_back(
        {g + "ffn_gate.weight", h + "mlp.gate_proj.weight", kFfn, kDim, TypeId::q4_k, make_matrix(kFfn, kDim, rng)});
    ts.push_back(
        {g + "ffn_up.weight", h + "mlp.up_proj.weight", kFfn, kDim, TypeId::q4_k, make_matrix(kFfn, kDim, rng)});
    ts.push_back({g + "ffn_down.weight", h + "mlp.down_proj.weight", kDim, kFfn, wide, make_matrix(kDim, kFfn, rng)});
  }
  ts.push_back({"output_norm.weight", "model.norm.weight", 1, kDim, TypeId::f32, make_norm(kDim, rng)});
  ts.push_back({"output.weight", "lm_head.weight", kVocab, kDim, TypeId::q6_k, make_matrix(kVocab, kDim, rng)});
  return ts;
}

void add_tokenizer(t::GgufWriter& w) {
  std::vector<t::GgufValue> tokens, scores, types;
  const char* words[] = {"▁the", "▁model", "▁weights", "▁are", "▁quantized", "▁in", "▁blocks", "▁日本", "🙂"};
  for (int i = 0; i < kVocab; ++i) {
    std::string tok;
    int type = 1;
    if (i < 3) {
      tok = i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>";
      type = i == 0 ? 2 : 3;
    } else if (i < 3 + 256) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "<0x%02X>", i - 3);
      tok = buf;
      type = 6;
    } else {
      tok = std::string(words[i % 9]) + (i >= 3 + 256 + 9 ? std::to_string(i) : "");
    }
    tokens.push_back(t::gguf_string(tok));
    scores.push_back(t::gguf_f32(-static_cast<float>(i) / 10.0f));
    types.push_back(t::gguf_i32(type));
  }
  w.set("tokenizer.ggml.model", t::gguf_string("llama"));
  w.set("tokenizer.ggml.tokens", t::gguf_array(t::kGgufString, tokens));
  w.set("tokenizer.ggml.scores", t::gguf_array(t::kGgufF32, scores));
  w.set("tokenizer.ggml.token_type", t::gguf_array(t::kGgufI32, types));
  w.set("tokenizer.ggml.bos_token_id", t::gguf_u32(1));
  w.set("tokenizer.ggml.eos_token_id", t::gguf_u32(2));
  w.set("tokenizer.ggml.unknown_token_id", t::gguf_u32(0));
  w.set("tokenizer.chat_template",
        t::gguf_string("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}</s>\n{% endfor %}"));
}

bool write_gguf(const std::string& path, const std::vector<DemoTensor>& ts) {
  t::GgufWriter w;
  w.set("general.architecture", t::gguf_string("llama"));
  w.set("general.type", t::gguf_string("model"));
  w.set("general.name", t::gguf_string("akview demo llama"));
  w.set("general.license", t::gguf_string("MIT"));
  w.set("general.file_type", t::gguf_u32(15));   // MOSTLY_Q4_K_M
  w.set("general.quantization_version", t::gguf_u32(2));
  w.set("llama.context_length", t::gguf_u32(kContext));
  w.set("llama.embedding_length", t::gguf_u32(kDim));
  w.set("llama.block_count", t::gguf_u32(kLayers));
  w.set("llama.feed_forward_length", t::gguf_u32(kFfn));
  w.set("llama.attention.head_count", t::gguf_u32(kHeads));
  w.set("llama.attention.head_count_kv", t::gguf_u32(kKvHeads));
  w.set("llama.attention.layer_norm_rms_epsilon", t::gguf_f32(1e-5f));
  w.set("llama.rope.freq_base", t::gguf_f32(10000.0f));
  w.set("llama.rope.dimension_count", t::gguf_u32(kDim / kHeads));
  w.set("llama.vocab_size", t::gguf_u32(kVocab));
  add_tokenizer(w);
  for (const auto& d : ts) {
    t::GgufTensorSpec spec(d.gguf_name, static_cast<uint32_t>(akview::type_info(d.gguf_type).ggml_id),
                           d.rows == 1 ? std::vector<int64_t>{d.cols} : std::vector<int64_t>{d.cols, d.rows});
    spec.data = t::quantize(d.gguf_type, d.values);
    if (spec.data.empty()) return false;
    w.add_tensor(std::move(spec));
  }
  return w.write(path);
}

constexpr std::string_view kHfConfig = R"({
  "architectures": ["LlamaForCausalLM"],
  "model_type": "llama",
  "hidden_size": 256,
  "intermediate_size": 768,
  "num_attention_heads": 4,
  "num_hidden_layers": 4,
  "num_key_value_heads": 2,
  "max_position_embeddings": 2048,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "vocab_size": 512,
  "torch_dtype": "bfloat16")";

bool write_hf(const std::string& dir, const std::vector<DemoTensor>& ts) {
  std::vector<std::vector<t::StTensor>> shards(2);
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto& d = ts[i];
    auto shape = d.rows == 1 ? std::vector<int64_t>{d.cols} : std::vector<int64_t>{d.rows, d.cols};
    shards[i < ts.size() / 2 ? 0 : 1].push_back({d.hf_name, "BF16", shape, t::quantize(TypeId::bf16, d.values)});
  }
  t::StWriteOptions options;
  options.metadata = {{"format", "pt"}};
  if (t::write_sharded_safetensors(dir, shards, options).size() != 2) return false;
  return t::write_text(dir + "/config.json", std::string(kHfConfig) + "\n}\n");
}

// The tensor of `d` as SafeTensors tensors: BF16, or (quantized) MLX / Ollama affine 4-bit g64 with
// bf16 companions named `<base><scales>` and `<base><biases>`.
std::vector<t::StTensor> affine_tensors(const DemoTensor& d, const std::string& base, const std::string& scales,
                                        const std::string& biases, bool quantize) {
  if (!quantize || d.rows == 1)
    return {{d.hf_name, "BF16", d.rows == 1 ? std::vector<int64_t>{d.cols} : std::vector<int64_t>{d.rows, d.cols},
             t::quantize(TypeId::bf16, d.values)}};
  auto q = t::quantize_affine(d.values, d.cols, 4, 64, TypeId::bf16);
  if (q.weight.empty()) return {};
  return {{d.hf_name, "U32", {d.rows, d.cols * 4 / 32}, std::move(q.weight)},
          {base + scales, "BF16", {d.rows, d.cols / 64}, std::move(q.scales)},
          {base + biases, "BF16", {d.rows, d.cols / 64}, std::move(q.biases)}};
}

// mlx-lm's layout: every matrix quantized (embedding and lm_head included), one model.safetensors with
// {"format": "mlx"}, and the quantization dict under both "quantization" and "quantization_config".
bool write_mlx(const std::string& dir, const std::vector<DemoTensor>& ts) {
  std::vector<t::StTensor> tensors;
  for (const auto& d : ts) {
    const std::string module = d.hf_name.substr(0, d.hf_name.size() - std::string(".weight").size());
    auto part = affine_tensors(d, module, ".scales", ".biases", true);
    if (part.empty()) return false;
    for (auto& x : part) tensors.push_back(std::move(x));
  }
  t::StWriteOptions options;
  options.metadata = {{"format", "mlx"}};
  if (!t::write_safetensors(dir + "/model.safetensors", tensors, options)) return false;
  return t::write_text(dir + "/config.json",
                       std::string(kHfConfig) +
                           ",\n  \"quantization\": {\"group_size\": 64, \"bits\": 4, \"mode\": \"affine\"},"
                           "\n  \"quantization_config\": {\"group_size\": 64, \"bits\": 4, \"mode\": \"affine\"}\n}\n");
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string parameter_size(const std::vector<DemoTensor>& ts) {   // Ollama's model_type, e.g. "3.5M"
  double n = 0;
  for (const auto& d : ts) n += static_cast<double>(d.rows * d.cols);
  return fmt::format("{:.1f}M", n / 1e6);
}

// llama-demo:q4_k_m holds the GGUF file as its model blob; llama-demo:int4 holds one safetensors blob
// per tensor, the matrices int4-quantized (affine g64, bf16 .scale/.bias) and the embedding, lm_head
// and norms left in BF16 as Ollama's importer does.
bool write_ollama(const std::string& root, const std::string& gguf_path, const std::vector<DemoTensor>& ts) {
  t::OllamaStoreWriter store(root);
  const auto gguf = read_bytes(gguf_path);
  if (gguf.empty()) return false;
  const nlohmann::ordered_json gguf_layers = {
      store.put("application/vnd.ollama.image.model", gguf),
      store.put_text("application/vnd.ollama.image.template",
                     "{{- range .Messages }}<|{{ .Role }}|>\n{{ .Content }}</s>\n{{ end }}<|assistant|>\n"),
      store.put_text("application/vnd.ollama.image.params", R"({"stop":["</s>"],"temperature":0.7})"),
      store.put_text("application/vnd.ollama.image.license",
                     "MIT License: synthetic weights made by akview's demo writer.\n"),
  };
  const nlohmann::ordered_json common = {{"model_family", "llama"},
                                         {"model_families", {"llama"}},
                                         {"model_type", parameter_size(ts)},
                                         {"architecture", "amd64"},
                                         {"os", "linux"}};
  nlohmann::ordered_json gguf_config = common;
  gguf_config["model_format"] = "gguf";
  gguf_config["file_type"] = "Q4_K_M";
  if (!store.write_manifest("llama-demo", "q4_k_m", gguf_config, gguf_layers)) return false;

  nlohmann::ordered_json st_layers = nlohmann::ordered_json::array();
  st_layers.push_back(
      store.put_text("application/vnd.ollama.image.json", std::string(kHfConfig) + "\n}\n", "config.json"));
  for (const auto& d : ts) {
    const bool quantize = d.hf_name.find("embed_tokens") == std::string::npos && d.hf_name != "lm_head.weight";
    auto tensors = affine_tensors(d, d.hf_name, ".scale", ".bias", quantize);
    if (tensors.empty()) return false;
    t::StWriteOptions options;
    if (tensors.size() > 1) options.metadata = {{"quant_type", "int4"}, {"group_size", "64"}};
    st_layers.push_back(
        store.put("application/vnd.ollama.image.tensor", t::safetensors_bytes(tensors, options), d.hf_name));
  }
  nlohmann::ordered_json st_config = common;
  st_config["model_format"] = "safetensors";
  st_config["file_type"] = "int4";
  return store.write_manifest("llama-demo", "int4", st_config, st_layers);
}

}   // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  namespace fs = std::filesystem;
  const std::string out = argv[1], demo = out + "/demo";
  std::error_code ec;
  fs::remove_all(demo, ec);               // no stale model from an older layout may stay in the list
  fs::remove_all(out + "/demo-hf", ec);   // the BF16 checkpoint's former place
  for (const char* sub : {"/llama-demo-bf16", "/llama-demo-mlx-4bit", "/ollama"})
    fs::create_directories(demo + sub, ec);
  const auto model = make_model();
  const std::string gguf = demo + "/llama-demo-q4km.gguf";
  if (!write_gguf(gguf, model) || !write_hf(demo + "/llama-demo-bf16", model) ||
      !write_mlx(demo + "/llama-demo-mlx-4bit", model) || !write_ollama(demo + "/ollama", gguf, model)) {
    std::fprintf(stderr, "cannot write the demo models under %s\n", demo.c_str());
    return 1;
  }
  return 0;
}
