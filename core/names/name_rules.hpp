// Canonical tensor names (PRODUCT.md "The canonical model"; FORMATS.md §2.9): one data table of
// rules maps GGUF names (blk.N.attn_q) and HF / MLX / Ollama names (model.layers.N.self_attn.q_proj)
// onto one naming (layers.N.attention.q), each with a role. `{n}` stands for a layer number and
// `{e}` for an expert; a rule's stem is followed by the tensor's own suffix (.weight / .bias).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace akview {

struct NameRule {
  std::string_view arch;        // "" for every architecture, or a comma list ("gemma2,gemma3") that wins for those
  std::string_view native;      // stem pattern, e.g. "model.layers.{n}.self_attn.q_proj"
  std::string_view canonical;   // e.g. "layers.{n}.attention.q"
  std::string_view role;        // e.g. "attention.q", "norm", "embedding"
  std::string_view note;        // a conversion transform diff must expect ("" if none)
};
std::span<const NameRule> name_rules();

struct CanonicalName {
  std::string name;    // canonical name including the suffix
  uint32_t rule = 0;   // row of name_rules()
  std::string_view role;
  std::string_view note;
  int64_t layer = -1;    // {n}, or -1
  int64_t expert = -1;   // {e}, or -1
};

// The rules compiled once into a hash of "shape keys" (numeric segments replaced by '#'), so one
// match costs a split and a lookup: a million names map in a fraction of a second.
class NameMatcher {
 public:
  NameMatcher();
  // `arch` (e.g. "llama", "gemma2"; may be empty) picks architecture-specific rows where they exist.
  std::optional<CanonicalName> match(std::string_view native, std::string_view arch = {}) const;

 private:
  struct Slot {
    char kind;   // 'n', 'e' or 'l' (a literal number in the pattern)
    int64_t literal;
  };
  struct Compiled {
    uint32_t rule;
    std::vector<Slot> slots;                   // one per numeric segment of the key, in order
    std::vector<std::string_view> canonical;   // canonical pattern split at {n}/{e}: text, tag, text...
  };
  std::unordered_map<std::string, std::vector<Compiled>> by_key_;
};

const NameMatcher& name_matcher();

}   // namespace akview
