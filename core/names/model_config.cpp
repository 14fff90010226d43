// ModelConfig extraction: one table row per field and source key (config.json names across model
// families; GGUF {arch}.* keys from FORMATS.md §2.8), then derived values.
#include "core/names/model_config.hpp"

#include <array>
#include <cmath>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/formats/gguf.hpp"
#include "core/formats/gguf_meta.hpp"

namespace akview {
namespace {

using F = ConfigValue ModelConfig::*;

constexpr std::array kFields = {
    ConfigFieldRow{"dim", &ModelConfig::dim},
    ConfigFieldRow{"layers", &ModelConfig::layers},
    ConfigFieldRow{"heads", &ModelConfig::heads},
    ConfigFieldRow{"kv_heads", &ModelConfig::kv_heads},
    ConfigFieldRow{"head_dim", &ModelConfig::head_dim},
    ConfigFieldRow{"ffn_dim", &ModelConfig::ffn_dim},
    ConfigFieldRow{"vocab", &ModelConfig::vocab},
    ConfigFieldRow{"context", &ModelConfig::context},
    ConfigFieldRow{"norm_eps", &ModelConfig::norm_eps},
    ConfigFieldRow{"rope_theta", &ModelConfig::rope_theta},
    ConfigFieldRow{"sliding_window", &ModelConfig::sliding_window},
};

// config.json keys, first present wins (HF names first, then GPT-2 / Mistral / Whisper spellings).
struct JsonKeyRow {
  F field;
  std::string_view key;
};
constexpr std::array kJsonKeys = {
    JsonKeyRow{&ModelConfig::dim, "hidden_size"},
    JsonKeyRow{&ModelConfig::dim, "n_embd"},
    JsonKeyRow{&ModelConfig::dim, "d_model"},
    JsonKeyRow{&ModelConfig::dim, "dim"},
    JsonKeyRow{&ModelConfig::layers, "num_hidden_layers"},
    JsonKeyRow{&ModelConfig::layers, "n_layer"},
    JsonKeyRow{&ModelConfig::layers, "n_layers"},
    JsonKeyRow{&ModelConfig::layers, "num_layers"},
    JsonKeyRow{&ModelConfig::layers, "encoder_layers"},
    JsonKeyRow{&ModelConfig::heads, "num_attention_heads"},
    JsonKeyRow{&ModelConfig::heads, "n_head"},
    JsonKeyRow{&ModelConfig::heads, "n_heads"},
    JsonKeyRow{&ModelConfig::heads, "encoder_attention_heads"},
    JsonKeyRow{&ModelConfig::kv_heads, "num_key_value_heads"},
    JsonKeyRow{&ModelConfig::kv_heads, "n_kv_heads"},
    JsonKeyRow{&ModelConfig::kv_heads, "multi_query_group_num"},
    JsonKeyRow{&ModelConfig::head_dim, "head_dim"},
    JsonKeyRow{&ModelConfig::ffn_dim, "intermediate_size"},
    JsonKeyRow{&ModelConfig::ffn_dim, "n_inner"},
    JsonKeyRow{&ModelConfig::ffn_dim, "ffn_dim"},
    JsonKeyRow{&ModelConfig::ffn_dim, "hidden_dim"},
    JsonKeyRow{&ModelConfig::ffn_dim, "encoder_ffn_dim"},
    JsonKeyRow{&ModelConfig::vocab, "vocab_size"},
    JsonKeyRow{&ModelConfig::context, "max_position_embeddings"},
    JsonKeyRow{&ModelConfig::context, "n_positions"},
    JsonKeyRow{&ModelConfig::context, "max_seq_len"},
    JsonKeyRow{&ModelConfig::context, "seq_length"},
    JsonKeyRow{&ModelConfig::norm_eps, "rms_norm_eps"},
    JsonKeyRow{&ModelConfig::norm_eps, "layer_norm_eps"},
    JsonKeyRow{&ModelConfig::norm_eps, "layer_norm_epsilon"},
    JsonKeyRow{&ModelConfig::norm_eps, "norm_eps"},
    JsonKeyRow{&ModelConfig::rope_theta, "rope_theta"},
    JsonKeyRow{&ModelConfig::rope_theta, "rope_freq_base"},
    JsonKeyRow{&ModelConfig::sliding_window, "sliding_window"},
};

// GGUF keys under "{arch}." (readers must accept any integer type, §2.8).
struct GgufKeyRow {
  F field;
  std::string_view suffix;
};
constexpr std::array kGgufKeys = {
    GgufKeyRow{&ModelConfig::dim, "embedding_length"},
    GgufKeyRow{&ModelConfig::layers, "block_count"},
    GgufKeyRow{&ModelConfig::heads, "attention.head_count"},
    GgufKeyRow{&ModelConfig::kv_heads, "attention.head_count_kv"},
    GgufKeyRow{&ModelConfig::head_dim, "attention.key_length"},
    GgufKeyRow{&ModelConfig::ffn_dim, "feed_forward_length"},
    GgufKeyRow{&ModelConfig::vocab, "vocab_size"},
    GgufKeyRow{&ModelConfig::context, "context_length"},
    GgufKeyRow{&ModelConfig::norm_eps, "attention.layer_norm_rms_epsilon"},
    GgufKeyRow{&ModelConfig::norm_eps, "attention.layer_norm_epsilon"},
    GgufKeyRow{&ModelConfig::rope_theta, "rope.freq_base"},
    GgufKeyRow{&ModelConfig::sliding_window, "attention.sliding_window"},
};

// general.file_type (LlamaFileType, FORMATS.md §2.8).
struct FileTypeRow {
  int64_t id;
  std::string_view name;
};
constexpr std::array kFileTypes = {
    FileTypeRow{0, "ALL_F32"},    FileTypeRow{1, "MOSTLY_F16"}, FileTypeRow{2, "Q4_0"},    FileTypeRow{3, "Q4_1"},
    FileTypeRow{7, "Q8_0"},       FileTypeRow{8, "Q5_0"},       FileTypeRow{9, "Q5_1"},    FileTypeRow{10, "Q2_K"},
    FileTypeRow{11, "Q3_K_S"},    FileTypeRow{12, "Q3_K_M"},    FileTypeRow{13, "Q3_K_L"}, FileTypeRow{14, "Q4_K_S"},
    FileTypeRow{15, "Q4_K_M"},    FileTypeRow{16, "Q5_K_S"},    FileTypeRow{17, "Q5_K_M"}, FileTypeRow{18, "Q6_K"},
    FileTypeRow{19, "IQ2_XXS"},   FileTypeRow{20, "IQ2_XS"},    FileTypeRow{21, "Q2_K_S"}, FileTypeRow{22, "IQ3_XS"},
    FileTypeRow{23, "IQ3_XXS"},   FileTypeRow{24, "IQ1_S"},     FileTypeRow{25, "IQ4_NL"}, FileTypeRow{26, "IQ3_S"},
    FileTypeRow{27, "IQ3_M"},     FileTypeRow{28, "IQ2_S"},     FileTypeRow{29, "IQ2_M"},  FileTypeRow{30, "IQ4_XS"},
    FileTypeRow{31, "IQ1_M"},     FileTypeRow{32, "BF16"},      FileTypeRow{36, "TQ1_0"},  FileTypeRow{37, "TQ2_0"},
    FileTypeRow{38, "MXFP4_MOE"}, FileTypeRow{39, "NVFP4"},     FileTypeRow{40, "Q1_0"},   FileTypeRow{1024, "GUESSED"},
};

void set(ConfigValue& v, double value, std::string source) {
  v.present = true;
  v.value = value;
  v.source = std::move(source);
}

std::string describe_quant(const nlohmann::json& q) {
  auto num = [&](const nlohmann::json& o, const char* k, int64_t d) {
    return o.contains(k) && o[k].is_number() ? o[k].get<int64_t>() : d;
  };
  std::string mode = q.contains("mode") && q["mode"].is_string() ? q["mode"].get<std::string>() : "affine";
  if (q.contains("quant_method") && q["quant_method"].is_string() && !q.contains("bits"))
    return q["quant_method"].get<std::string>();
  std::string out = fmt::format("mlx {} {}-bit g{}", mode, num(q, "bits", 4), num(q, "group_size", 64));
  std::string overrides;
  for (auto it = q.begin(); it != q.end(); ++it) {
    if (it.value().is_object())
      overrides += fmt::format("{}{}: {}-bit g{}", overrides.empty() ? "" : ", ", it.key(), num(it.value(), "bits", 4),
                               num(it.value(), "group_size", 64));
    else if (it.value().is_boolean() && !it.value().get<bool>())
      overrides += fmt::format("{}{}: not quantized", overrides.empty() ? "" : ", ", it.key());
  }
  return overrides.empty() ? out : out + " (" + overrides + ")";
}

void derive(ModelConfig& c) {
  if (!c.head_dim.present && c.dim.present && c.heads.present && c.heads.value > 0)
    set(c.head_dim, std::floor(c.dim.value / c.heads.value), "derived: dim/heads");
  if (!c.kv_heads.present && c.heads.present)
    set(c.kv_heads, c.heads.value, "derived: heads (no separate kv head count)");
}

}   // namespace

std::span<const ConfigFieldRow> config_fields() { return kFields; }

Result<ModelConfig> config_from_json(std::string_view json_text, std::string_view file, std::string_view source_name) {
  nlohmann::json j = nlohmann::json::parse(json_text.begin(), json_text.end(), nullptr, false);
  if (j.is_discarded()) return make_error(ErrorCode::bad_json, file, kNoOffset, "config is not valid JSON");
  if (!j.is_object()) return make_error(ErrorCode::schema, file, kNoOffset, "config is not a JSON object");
  ModelConfig c;
  if (j.contains("model_type") && j["model_type"].is_string()) {
    c.arch = j["model_type"].get<std::string>();
    c.arch_source = fmt::format("{}: model_type", source_name);
  }
  // Multimodal configs keep the language model's numbers under text_config; the top level wins.
  for (const char* scope : {"", "text_config"}) {
    const nlohmann::json* obj = &j;
    if (*scope) {
      if (!j.contains(scope) || !j[scope].is_object()) continue;
      obj = &j[scope];
    }
    for (const auto& row : kJsonKeys) {
      ConfigValue& v = c.*row.field;
      std::string key(row.key);
      if (v.present || !obj->contains(key) || !(*obj)[key].is_number()) continue;
      set(v, (*obj)[key].get<double>(), fmt::format("{}: {}{}{}", source_name, scope, *scope ? "." : "", key));
    }
    for (const char* k : {"sliding_window_pattern", "layer_types"}) {
      if (c.sliding_window_pattern.empty() && obj->contains(k)) {
        c.sliding_window_pattern = (*obj)[k].dump();
        c.sliding_window_pattern_source = fmt::format("{}: {}{}{}", source_name, scope, *scope ? "." : "", k);
      }
    }
  }
  for (const char* k : {"quantization", "quantization_config"}) {
    if (j.contains(k) && j[k].is_object()) {
      c.quantization = describe_quant(j[k]);
      c.quantization_source = fmt::format("{}: {}", source_name, k);
      break;
    }
  }
  derive(c);
  return c;
}

ModelConfig config_from_gguf(const Model& model) {
  ModelConfig c;
  const MetaEntry* arch = model.find_meta("general.architecture");
  if (!arch || arch->value.type != MetaType::string) return c;
  c.arch = std::string(arch->value.str);
  c.arch_source = "gguf: general.architecture";
  for (const auto& row : kGgufKeys) {
    ConfigValue& v = c.*row.field;
    if (v.present) continue;
    const std::string key = c.arch + "." + std::string(row.suffix);
    const MetaEntry* e = model.find_meta(key);
    if (!e) continue;
    const MetaValue& mv = e->value;
    if (mv.type == MetaType::f32 || mv.type == MetaType::f64) set(v, mv.num.f, "gguf: " + key);
    else if (auto i = meta_integer(mv)) set(v, static_cast<double>(*i), "gguf: " + key);
    else if (mv.type == MetaType::array) {
      // per-layer arrays (head counts, ffn lengths): show the first layer's value and say so
      auto elems = read_gguf_array(model, *e, mv, 1);
      if (elems && !elems->empty()) {
        const MetaValue& first = elems->front();
        if (auto fi = meta_integer(first))
          set(v, static_cast<double>(*fi), fmt::format("gguf: {}[0] (per-layer array of {})", key, mv.count));
      }
      if (row.field == &ModelConfig::sliding_window && c.sliding_window_pattern.empty()) {
        c.sliding_window_pattern = fmt::format("per-layer array of {}", mv.count);
        c.sliding_window_pattern_source = "gguf: " + key;
      }
    }
  }
  if (!c.vocab.present) {
    if (const MetaEntry* t = model.find_meta("tokenizer.ggml.tokens"); t && t->value.type == MetaType::array)
      set(c.vocab, static_cast<double>(t->value.count), "gguf: tokenizer.ggml.tokens (count)");
  }
  if (const MetaEntry* ft = model.find_meta("general.file_type")) {
    if (auto id = meta_integer(ft->value)) {
      for (const auto& row : kFileTypes)
        if (row.id == *id) c.quantization = std::string(row.name);
      if (c.quantization.empty()) c.quantization = fmt::format("file type {}", *id);
      c.quantization_source = "gguf: general.file_type";
    }
  }
  derive(c);
  return c;
}

Result<ModelConfig> extract_config(const Model& model) {
  if (model.find_meta("general.architecture")) return config_from_gguf(model);
  for (const auto& f : model.files) {
    if (f.role != "config") continue;
    auto b = f.map.bytes();
    return config_from_json({reinterpret_cast<const char*>(b.data()), b.size()}, f.path);
  }
  const std::string& dir = model.disk_path.empty() ? model.path : model.disk_path;
  std::ifstream probe(dir + "/config.json", std::ios::binary);
  if (!probe) return ModelConfig{};
  std::string text((std::istreambuf_iterator<char>(probe)), {});
  return config_from_json(text, dir + "/config.json");
}

}   // namespace akview
