// The attention shape llama.cpp sizes its KV cache from, read from a GGUF's {arch}.* keys the way
// llama.cpp's loader reads them: head counts as a number or a per-layer array, head widths from
// attention.key_length / value_length (else embedding_length / head_count), the sliding window and
// its layer pattern, MLA's compressed row. Each value keeps the key it came from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/fit/arch_rules.hpp"
#include "core/model.hpp"
#include "core/result.hpp"

namespace akview::fit {

struct LayerShape {
  uint32_t kv_heads = 0;
  uint32_t k_head_dim = 0, v_head_dim = 0;   // v 0: no V row (MLA)
  bool sliding = false;
};

struct GgufAttention {
  const ArchRule* rule = nullptr;
  uint32_t n_layer = 0;
  std::vector<LayerShape> layers;
  uint64_t trained_context = 0;
  std::string context_source;
  uint32_t window = 0;
  std::string window_source;
  bool mla = false;
  std::string source;                 // the keys the layer shapes came from
  std::vector<std::string> missing;   // keys needed and absent (layers stay empty then)
};

// Reads the keys of `arch`. An error for hostile values (zero heads, a head count past 2^16, a
// context past 2^32 - 1, more layers than llama.cpp allows), naming the key and its offset.
Result<GgufAttention> read_gguf_attention(const Model& model, const std::string& arch, const ArchRule& rule);

}   // namespace akview::fit
