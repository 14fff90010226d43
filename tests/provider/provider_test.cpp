// MLX directories, Ollama stores, canonical names, ModelConfig and SHA-256 against the oracles.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/formats/format.hpp"
#include "core/formats/ollama.hpp"
#include "core/names/model_config.hpp"
#include "core/names/name_map.hpp"
#include "core/names/name_rules.hpp"
#include "core/sha256.hpp"
#include "tests/provider/oracle_util.hpp"

namespace akview {
namespace {

using test::manifest;
using test::oracle;
using test::st_model;

std::vector<int64_t> shape_of(const Model& m, const Tensor& t) {
  auto s = m.shape(t);
  return {s.begin(), s.end()};
}

// HF llama names -> the canonical names their role implies (the oracle models are one llama layer).
const std::map<std::string, std::string>& hf_expected() {
  static const std::map<std::string, std::string> k = {
      {"model.embed_tokens.weight", "token_embedding.weight"},
      {"model.norm.weight", "output_norm.weight"},
      {"lm_head.weight", "output.weight"},
      {"model.layers.0.input_layernorm.weight", "layers.0.attention_norm.weight"},
      {"model.layers.0.self_attn.q_proj.weight", "layers.0.attention.q.weight"},
      {"model.layers.0.self_attn.k_proj.weight", "layers.0.attention.k.weight"},
      {"model.layers.0.self_attn.v_proj.weight", "layers.0.attention.v.weight"},
      {"model.layers.0.self_attn.o_proj.weight", "layers.0.attention.output.weight"},
      {"model.layers.0.post_attention_layernorm.weight", "layers.0.ffn_norm.weight"},
      {"model.layers.0.mlp.gate_proj.weight", "layers.0.ffn.gate.weight"},
      {"model.layers.0.mlp.up_proj.weight", "layers.0.ffn.up.weight"},
      {"model.layers.0.mlp.down_proj.weight", "layers.0.ffn.down.weight"},
  };
  return k;
}

void check_mlx(const std::string& name) {
  const auto& entry = st_model(name);
  auto model = open_model(oracle(entry["dir"]));
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  EXPECT_EQ(model->format, "mlx");
  EXPECT_TRUE(model->notes.empty()) << model->notes.front().message;
  size_t logical = 0;
  for (const auto& want : entry["tensors"]) {
    SCOPED_TRACE(want["name"].get<std::string>());
    if (!want["quantized"].get<bool>()) {
      const Tensor* t = model->find(want["name"].get<std::string>());
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(shape_of(*model, *t), want["shape"].get<std::vector<int64_t>>());
      EXPECT_EQ(t->flags, 0);
      ++logical;
      continue;
    }
    const Tensor* t = model->find(want["weight"]["name"].get<std::string>());
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->type, TypeId::mlx_affine);
    EXPECT_EQ(shape_of(*model, *t), want["logical_shape"].get<std::vector<int64_t>>());
    EXPECT_EQ(t->offset, want["weight"]["abs_offset"].get<uint64_t>());
    ASSERT_LT(t->quant, model->quants.size());
    const QuantInfo& q = model->quants[t->quant];
    EXPECT_EQ(q.bits, want["bits"].get<int>());
    EXPECT_EQ(q.group_size, want["group_size"].get<uint32_t>());
    ASSERT_NE(q.scales, kNone);
    ASSERT_NE(q.biases, kNone);
    EXPECT_EQ(model->tensors[q.scales].name, want["scales"]["name"].get<std::string>());
    EXPECT_EQ(model->tensors[q.biases].name, want["biases"]["name"].get<std::string>());
    EXPECT_TRUE(model->tensors[q.scales].flags & kTensorCompanion);
    EXPECT_TRUE(model->tensors[q.biases].flags & kTensorCompanion);
    // companions follow their logical tensor
    const auto at = static_cast<uint32_t>(t - model->tensors.data());
    EXPECT_EQ(q.scales, at + 1);
    EXPECT_EQ(q.biases, at + 2);
    ++logical;
  }
  size_t non_companion = 0;
  for (const auto& t : model->tensors) non_companion += !(t.flags & kTensorCompanion);
  EXPECT_EQ(non_companion, logical);
  // every logical tensor maps to the canonical name its HF name implies
  NameMap map = build_name_map(*model);
  EXPECT_EQ(map.arch, "llama");
  EXPECT_TRUE(map.unmapped.empty());
  for (const auto& e : map.entries)
    EXPECT_EQ(e.canonical, hf_expected().at(std::string(model->tensors[e.tensor].name)));
  // The index finds each canonical name's entry, nothing else, and the names survive moving the map.
  NameMap moved = std::move(map);
  for (uint32_t i = 0; i < moved.entries.size(); ++i) {
    const std::string canonical(moved.entries[i].canonical);
    EXPECT_EQ(moved.find(canonical), i) << canonical;
    EXPECT_EQ(moved.find(canonical + "x"), kNone);
  }
  EXPECT_EQ(moved.find(""), kNone);
}

TEST(Mlx, Affine4BitWithOverride) { check_mlx("mlx_q4_g64_f16"); }
TEST(Mlx, Affine8BitBf16) { check_mlx("mlx_q8_g32_bf16"); }

TEST(Ollama, SafetensorsStoreListsLogicalTensors) {
  const auto& entry = st_model("ollama_st");
  auto model = open_model(oracle(entry["dir"]));
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  EXPECT_EQ(model->format, "ollama");
  EXPECT_TRUE(model->notes.empty()) << model->notes.front().message;
  size_t count = 0;
  for (const auto& want : entry["tensors"]) {
    SCOPED_TRACE(want["name"].get<std::string>());
    const Tensor* t = model->find(want["name"].get<std::string>());
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(model->files[t->file].path, oracle(want["blob"]));
    ++count;
    if (!want["quantized"].get<bool>()) {
      EXPECT_EQ(t->type, TypeId::bf16);
      EXPECT_EQ(shape_of(*model, *t), want["shape"].get<std::vector<int64_t>>());
      continue;
    }
    EXPECT_EQ(t->type, want["quant_type"] == "int4" ? TypeId::ollama_int4 : TypeId::ollama_int8);
    EXPECT_EQ(shape_of(*model, *t), want["logical_shape"].get<std::vector<int64_t>>());
    const QuantInfo& q = model->quants.at(t->quant);
    EXPECT_EQ(q.bits, want["bits"].get<int>());
    EXPECT_EQ(q.group_size, want["group_size"].get<uint32_t>());
    EXPECT_EQ(shape_of(*model, model->tensors[q.scales]), want["scale_shape"].get<std::vector<int64_t>>());
    EXPECT_EQ(model->tensors[q.biases].name, want["name"].get<std::string>() + ".bias");
  }
  size_t non_companion = 0;
  for (const auto& t : model->tensors) non_companion += !(t.flags & kTensorCompanion);
  EXPECT_EQ(non_companion, count);
  // the config.json layer gives the config; the config blob gives metadata
  auto config = extract_config(*model);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->dim.value, 128);
  const MetaEntry* ft = model->find_meta("ollama.config.file_type");
  ASSERT_NE(ft, nullptr);
  EXPECT_EQ(ft->value.str, "int4");
  NameMap map = build_name_map(*model);
  EXPECT_TRUE(map.unmapped.empty());
  for (const auto& e : map.entries)
    EXPECT_EQ(e.canonical, hf_expected().at(std::string(model->tensors[e.tensor].name)));
  // digests verified on request
  auto problems = verify_ollama_blobs(*model);
  EXPECT_TRUE(problems.empty()) << problems.front().message;
}

TEST(Ollama, GgufStoreByManifestStoreAndName) {
  const auto& entry = manifest()["gguf"]["ollama"];
  auto by_store = open_model(oracle(entry["path"]));
  ASSERT_TRUE(by_store.ok()) << by_store.error().to_string();
  auto by_manifest = open_model(oracle(entry["manifest"]));
  ASSERT_TRUE(by_manifest.ok()) << by_manifest.error().to_string();
  auto gguf = open_model(oracle(entry["model_blob_is_copy_of"]));
  ASSERT_TRUE(gguf.ok()) << gguf.error().to_string();
  ASSERT_EQ(by_store->tensors.size(), gguf->tensors.size());
  for (size_t i = 0; i < gguf->tensors.size(); ++i) {
    EXPECT_EQ(by_store->tensors[i].name, gguf->tensors[i].name);
    EXPECT_EQ(by_store->tensors[i].type, gguf->tensors[i].type);
    EXPECT_EQ(by_store->tensors[i].offset, gguf->tensors[i].offset);
  }
  const MetaEntry* tmpl = by_store->find_meta("ollama.template");
  ASSERT_NE(tmpl, nullptr);
  EXPECT_FALSE(tmpl->value.str.empty());
  EXPECT_NE(by_store->find_meta("ollama.params"), nullptr);
  EXPECT_TRUE(verify_ollama_blobs(*by_store).empty());

  setenv("OLLAMA_MODELS", oracle(entry["path"]).c_str(), 1);
  EXPECT_EQ(ollama_models_dir(), oracle(entry["path"]));
  auto by_name = open_model(entry["model_name"].get<std::string>());
  ASSERT_TRUE(by_name.ok()) << by_name.error().to_string();
  EXPECT_EQ(by_name->tensors.size(), gguf->tensors.size());
  auto short_name = open_model("akview-tiny");
  EXPECT_TRUE(short_name.ok());
  unsetenv("OLLAMA_MODELS");
}

TEST(Ollama, NameParsing) {
  auto n = parse_ollama_name("llama3:8b");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->host, "registry.ollama.ai");
  EXPECT_EQ(n->ns, "library");
  EXPECT_EQ(n->model, "llama3");
  EXPECT_EQ(n->tag, "8b");
  auto full = parse_ollama_name("example.com:5000/me/m.x");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->host, "example.com:5000");
  EXPECT_EQ(full->tag, "latest");
  EXPECT_EQ(full->display(), "example.com:5000/me/m.x:latest");
  EXPECT_FALSE(parse_ollama_name("a/b/c/d"));
  EXPECT_FALSE(parse_ollama_name("-bad"));
  EXPECT_FALSE(parse_ollama_name("my.ns/model"));
}

TEST(Names, GgufAndHfMeetOnCanonicalNames) {
  const auto& m = name_matcher();
  const std::map<std::string, std::string> gguf = {
      {"token_embd.weight", "model.embed_tokens.weight"},
      {"output_norm.weight", "model.norm.weight"},
      {"output.weight", "lm_head.weight"},
      {"blk.0.attn_norm.weight", "model.layers.0.input_layernorm.weight"},
      {"blk.0.attn_q.weight", "model.layers.0.self_attn.q_proj.weight"},
      {"blk.0.attn_k.weight", "model.layers.0.self_attn.k_proj.weight"},
      {"blk.0.attn_v.weight", "model.layers.0.self_attn.v_proj.weight"},
      {"blk.0.attn_output.weight", "model.layers.0.self_attn.o_proj.weight"},
      {"blk.0.ffn_norm.weight", "model.layers.0.post_attention_layernorm.weight"},
      {"blk.0.ffn_gate.weight", "model.layers.0.mlp.gate_proj.weight"},
      {"blk.0.ffn_up.weight", "model.layers.0.mlp.up_proj.weight"},
      {"blk.0.ffn_down.weight", "model.layers.0.mlp.down_proj.weight"},
  };
  for (const auto& [g, hf] : gguf) {
    auto a = m.match(g, "llama"), b = m.match(hf, "llama");
    ASSERT_TRUE(a && b) << g;
    EXPECT_EQ(a->name, b->name);
    EXPECT_EQ(a->role, b->role);
    EXPECT_EQ(b->name, hf_expected().at(hf));
  }
  auto q = m.match("blk.0.attn_q.weight", "llama");
  EXPECT_FALSE(q->note.empty());   // llama q/k permutation is recorded for diff
  EXPECT_EQ(m.match("model.layers.3.self_attn.q_proj.bias")->name, "layers.3.attention.q.bias");
  EXPECT_EQ(m.match("blk.12.ffn_gate_exps.weight")->name, "layers.12.ffn.experts.gate.weight");
  EXPECT_EQ(m.match("model.layers.12.mlp.switch_mlp.gate_proj.weight")->name, "layers.12.ffn.experts.gate.weight");
  EXPECT_EQ(m.match("model.layers.2.mlp.experts.7.down_proj.weight")->name, "layers.2.ffn.experts.7.down.weight");
  EXPECT_EQ(m.match("model.layers.2.mlp.experts.7.down_proj.weight")->expert, 7);
  EXPECT_EQ(m.match("model.layers.2.block_sparse_moe.experts.1.w3.weight")->name, "layers.2.ffn.experts.1.up.weight");
  EXPECT_EQ(m.match("model.layers.2.mlp.gate.weight")->role, "ffn.router");
  EXPECT_EQ(m.match("model.layers.1.post_attention_layernorm.weight", "gemma2")->name,
            "layers.1.post_attention_norm.weight");
  EXPECT_EQ(m.match("model.layers.1.post_attention_layernorm.weight", "llama")->name, "layers.1.ffn_norm.weight");
  EXPECT_EQ(m.match("blk.1.post_ffw_norm.weight")->name,
            m.match("model.layers.1.post_feedforward_layernorm.weight")->name);
  EXPECT_EQ(m.match("blk.0.ffn_up.weight", "phi3")->name, "layers.0.ffn.gate_up.weight");
  EXPECT_EQ(m.match("model.layers.0.mlp.gate_up_proj.weight", "phi3")->name, "layers.0.ffn.gate_up.weight");
  EXPECT_EQ(m.match("model.layers.0.self_attn.qkv_proj.weight")->name, m.match("blk.0.attn_qkv.weight")->name);
  EXPECT_EQ(m.match("encoder.blocks.3.mlp.2.weight")->name, "encoder.layers.3.ffn.down.weight");
  EXPECT_EQ(m.match("model.encoder.layers.3.fc2.weight")->name, "encoder.layers.3.ffn.down.weight");
  EXPECT_FALSE(m.match("encoder.blocks.3.mlp.1.weight"));
  EXPECT_FALSE(m.match("stem.weight"));
  EXPECT_FALSE(m.match("model.layers.0.self_attn.q_proj.scales"));
}

TEST(Names, GgufOracleMapsFully) {
  auto model = open_model(oracle("gguf/q4_0.gguf"));
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  NameMap map = build_name_map(*model);
  EXPECT_EQ(map.arch, "llama");
  EXPECT_TRUE(map.unmapped.empty());
  std::set<std::string> hf;
  for (const auto& [k, v] : hf_expected()) hf.insert(v);
  for (const auto& e : map.entries) EXPECT_TRUE(hf.count(std::string(e.canonical))) << e.canonical;
}

TEST(Names, PyTorchGenericNamesStayUnmapped) {
  auto model = open_model(oracle("pytorch/conv_linear_zip.pt"));
  ASSERT_TRUE(model.ok());
  NameMap map = build_name_map(*model);
  EXPECT_EQ(map.unmapped.size(), model->tensors.size());
  for (const auto& e : map.entries) EXPECT_TRUE(e.canonical.empty());
}

TEST(Names, MillionExpertNamesAllMap) {
  // Speed is a benchmark's business; this checks that every one of a million MoE names maps, with
  // its layer and expert numbers carried over.
  const auto& m = name_matcher();
  size_t mapped = 0;
  for (int i = 0; i < 1000000; ++i) {
    auto c = m.match(fmt::format("model.layers.{}.mlp.experts.{}.down_proj.weight", i % 100, i / 100));
    if (!c) continue;
    ++mapped;
    if (i % 99991 == 0) {
      EXPECT_EQ(c->layer, i % 100);
      EXPECT_EQ(c->expert, i / 100);
    }
  }
  EXPECT_EQ(mapped, 1000000u);
}

TEST(Config, FromConfigJsonOfEveryStModel) {
  const auto& want = manifest()["safetensors"]["model"];
  for (const char* dir : {"st/plain_bf16", "st/plain_f16", "st/plain_f32", "st/sharded_bf16", "st/mlx_q4_g64_f16",
                          "st/mlx_q8_g32_bf16"}) {
    SCOPED_TRACE(dir);
    auto model = open_model(oracle(dir));
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    auto c = extract_config(*model);
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    EXPECT_EQ(c->arch, "llama");
    EXPECT_EQ(c->dim.value, want["hidden_size"].get<double>());
    EXPECT_EQ(c->dim.source, "config.json: hidden_size");
    EXPECT_EQ(c->layers.value, want["num_hidden_layers"].get<double>());
    EXPECT_EQ(c->heads.value, want["num_attention_heads"].get<double>());
    EXPECT_EQ(c->kv_heads.value, want["num_key_value_heads"].get<double>());
    EXPECT_EQ(c->head_dim.value, want["head_dim"].get<double>());
    EXPECT_EQ(c->ffn_dim.value, want["intermediate_size"].get<double>());
    EXPECT_EQ(c->vocab.value, want["vocab_size"].get<double>());
    EXPECT_TRUE(c->norm_eps.present);
    EXPECT_TRUE(c->rope_theta.present);
  }
  auto mlx = open_model(oracle("st/mlx_q4_g64_f16"));
  auto c = extract_config(*mlx);
  EXPECT_NE(c->quantization.find("4-bit g64"), std::string::npos) << c->quantization;
  EXPECT_NE(c->quantization.find("lm_head: 8-bit g64"), std::string::npos) << c->quantization;
}

TEST(Config, DerivedHeadDim) {
  auto c = config_from_json(R"({"hidden_size": 4096, "num_attention_heads": 32})", "c.json");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->head_dim.value, 128);
  EXPECT_EQ(c->head_dim.source, "derived: dim/heads");
  EXPECT_EQ(c->kv_heads.value, 32);
  EXPECT_FALSE(config_from_json("{", "c.json").ok());
}

TEST(Config, FromGgufKeys) {
  const auto& gm = manifest()["gguf"]["model"];
  auto model = open_model(oracle("gguf/q4_0.gguf"));
  ASSERT_TRUE(model.ok());
  auto c = extract_config(*model);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->arch, "llama");
  EXPECT_EQ(c->arch_source, "gguf: general.architecture");
  EXPECT_EQ(c->dim.source, "gguf: llama.embedding_length");
  EXPECT_EQ(c->dim.value, gm["n_embd"].get<double>());
  EXPECT_EQ(c->layers.value, gm["n_layer"].get<double>());
  EXPECT_EQ(c->heads.value, gm["n_head"].get<double>());
  EXPECT_EQ(c->kv_heads.value, gm["n_head_kv"].get<double>());
  EXPECT_EQ(c->head_dim.value, gm["head_dim"].get<double>());
  EXPECT_EQ(c->vocab.value, gm["n_vocab"].get<double>());
  EXPECT_EQ(c->context.value, gm["n_ctx"].get<double>());
  EXPECT_EQ(c->ffn_dim.value, gm["n_ff"].get<double>());
  EXPECT_FALSE(c->quantization.empty());
}

TEST(Sha256, KnownVectors) {
  auto hex = [](std::string_view s) { return sha256_hex({reinterpret_cast<const uint8_t*>(s.data()), s.size()}); };
  EXPECT_EQ(hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  std::string million(1000000, 'a');
  EXPECT_EQ(hex(million), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // streaming in odd pieces gives the same digest
  Sha256 h;
  for (size_t at = 0; at < million.size(); at += 997)
    h.update({reinterpret_cast<const uint8_t*>(million.data()) + at, std::min<size_t>(997, million.size() - at)});
  EXPECT_EQ(to_hex(h.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// The CPU's SHA extensions (where it has them) and the scalar rounds give the same digests, over
// every length around the block and padding boundaries and in pieces of odd sizes.
TEST(Sha256, CpuExtensionsEqualTheScalarRounds) {
  if (!sha256_uses_cpu_extensions()) GTEST_SKIP() << "this CPU has no SHA extensions: only the scalar rounds run";
  std::vector<uint8_t> bytes(70000);
  uint32_t x = 1;
  for (auto& b : bytes) b = static_cast<uint8_t>((x = x * 1664525u + 1013904223u) >> 24);
  for (size_t n : {size_t{0}, size_t{1}, size_t{55}, size_t{56}, size_t{63}, size_t{64}, size_t{65}, size_t{119},
                   size_t{120}, size_t{128}, size_t{4097}, bytes.size()}) {
    Sha256 fast, scalar(false);
    for (size_t at = 0; at < n; at += 61) {
      const std::span<const uint8_t> piece(bytes.data() + at, std::min<size_t>(61, n - at));
      fast.update(piece);
      scalar.update(piece);
    }
    EXPECT_EQ(to_hex(fast.finish()), to_hex(scalar.finish())) << n;
  }
  Sha256 one_piece(false);
  one_piece.update(bytes);
  EXPECT_EQ(to_hex(one_piece.finish()), sha256_hex(bytes));
}

TEST(Sha256, OracleFilesMatchTheManifest) {
  for (const auto& f : manifest()["pytorch"]["files"])
    EXPECT_EQ(sha256_hex(test::read_file(oracle(f["path"]))), f["sha256"].get<std::string>()) << f["path"];
}

}   // namespace
}   // namespace akview
