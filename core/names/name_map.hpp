// The native -> canonical -> role map of one Model (PRODUCT.md "The canonical model"), built from
// the name rules; companion tensors (scales, biases) are not mapped, their logical tensor is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/model.hpp"
#include "core/names/name_rules.hpp"

namespace akview {

struct NameMapEntry {
  uint32_t tensor = 0;          // index into Model::tensors
  bool mapped = false;
  std::string canonical;        // empty when unmapped
  std::string_view role;        // "attention.q", "norm", ... (empty when unmapped)
  std::string_view note;        // a conversion transform to expect (llama q/k permutation, gemma +1 norms)
  uint32_t rule = 0;            // row of name_rules() when mapped
  int64_t layer = -1;
};

struct NameMap {
  std::string arch;                     // the architecture used to pick arch-specific rows
  std::vector<NameMapEntry> entries;    // one per non-companion tensor, in model order
  std::vector<uint32_t> unmapped;       // tensor indices with no rule
  std::unordered_map<std::string, uint32_t> by_canonical;   // canonical name -> entries index
};

// `arch` empty: taken from the model's config (GGUF general.architecture or config.json model_type).
NameMap build_name_map(const Model& model, std::string_view arch = {});

// The two steps of build_name_map, for callers that map one tensor at a time (a million-tensor
// listing streams its rows instead of holding a map): the architecture taken from the model's
// config, and one tensor's canonical name (nullopt for a companion or an unmapped name).
std::string name_map_arch(const Model& model);
std::optional<CanonicalName> map_tensor_name(const Tensor& t, std::string_view arch);

}  // namespace akview
