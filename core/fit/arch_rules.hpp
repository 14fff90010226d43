// How llama.cpp caches attention for each architecture the `fit` estimate knows: one table row per
// GGUF general.architecture, read from llama.cpp's per-architecture hparams loaders (which layers
// use a sliding window and with what defaults, whether the K/V rows are MLA's compressed latent).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace akview::fit {

enum class KvKind : uint8_t {
  standard,   // K and V per layer: head_dim x kv_heads each
  mla,        // DeepSeek MLA when key_length_mla is present: one compressed row (latent + rope), no V
};

enum class SwaRule : uint8_t {
  none,            // every layer caches the full context
  always,          // sliding-window layers by the period below; the window defaults to `default_window`
  if_window_key,   // as `always`, but only when {arch}.attention.sliding_window is present and non-zero
  read_ignored,    // llama.cpp reads the window key, then caches every layer in full (phi3)
};

struct ArchRule {
  std::string_view arch;
  KvKind kv = KvKind::standard;
  SwaRule swa = SwaRule::none;
  uint32_t default_window = 0;   // used when the key is absent (SwaRule::always)
  uint32_t default_period = 0;   // layer il slides unless il % period == period - 1 (0: every layer)
  std::string_view note;         // shown with the estimate
};

// The row for `arch`, or nullptr when llama.cpp's cache for it is not modelled here.
const ArchRule* find_arch_rule(std::string_view arch);
std::span<const ArchRule> arch_rules();

}   // namespace akview::fit
