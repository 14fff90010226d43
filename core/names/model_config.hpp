// ModelConfig (PRODUCT.md "The canonical model"): the architecture numbers of a model, from
// config.json (Hugging Face / MLX / Ollama safetensors) or from GGUF keys (FORMATS.md §2.8),
// each value carrying where it came from ("config.json: hidden_size", "gguf: llama.embedding_length",
// "derived: dim/heads").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/model.hpp"
#include "core/result.hpp"

namespace akview {

struct ConfigValue {
  bool present = false;
  double value = 0;   // integers are exact up to 2^53
  std::string source;
};

struct ModelConfig {
  std::string arch;   // "llama", "qwen3", ... ("" when unknown)
  std::string arch_source;
  ConfigValue dim, layers, heads, kv_heads, head_dim, ffn_dim, vocab, context, norm_eps, rope_theta, sliding_window;
  std::string sliding_window_pattern;   // e.g. "every 6th layer global" or a per-layer list, as given
  std::string sliding_window_pattern_source;
  std::string quantization;   // "mlx affine 4-bit g64 (lm_head: 8-bit g64)", "Q4_K_M", ...
  std::string quantization_source;
};

// The fields in display order, for printers: {"dim", &ModelConfig::dim}, ...
struct ConfigFieldRow {
  std::string_view name;
  ConfigValue ModelConfig::*field;
};
std::span<const ConfigFieldRow> config_fields();

// From the text of a config.json (`source_name` prefixes each source, e.g. "config.json").
Result<ModelConfig> config_from_json(std::string_view json_text, std::string_view file,
                                     std::string_view source_name = "config.json");
// From a GGUF model's metadata ({arch}.* keys, tokenizer token count).
ModelConfig config_from_gguf(const Model& model);
// Whatever the model carries: GGUF keys, a SourceFile with role "config", or <dir>/config.json.
// An empty config (arch "") when nothing is found.
Result<ModelConfig> extract_config(const Model& model);

}   // namespace akview
