// The native -> canonical -> role map of one Model (PRODUCT.md "The canonical model"), built from
// the name rules; companion tensors (scales, biases) are not mapped, their logical tensor is.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.hpp"
#include "core/names/name_rules.hpp"

namespace akview {

struct NameMapEntry {
  uint32_t tensor = 0;          // index into Model::tensors
  uint32_t rule = 0;            // row of name_rules() when mapped
  int64_t layer = -1;
  std::string_view canonical;   // empty when unmapped; the text lives in the NameMap that holds the entry
  std::string_view role;        // "attention.q", "norm", ... (empty when unmapped)
  std::string_view note;        // a conversion transform to expect (llama q/k permutation, gemma +1 norms)
  bool mapped = false;
};

// A million-tensor model's map costs about 100 bytes a tensor: the canonical names are packed in
// blocks that never move (an entry's string_view stays valid when the map is moved, never copied),
// and the index by canonical name is an open-addressing table of entry numbers.
class NameMap {
 public:
  NameMap() = default;
  NameMap(NameMap&&) noexcept = default;
  NameMap& operator=(NameMap&&) noexcept = default;
  NameMap(const NameMap&) = delete;
  NameMap& operator=(const NameMap&) = delete;

  std::string arch;                     // the architecture used to pick arch-specific rows
  std::vector<NameMapEntry> entries;    // one per non-companion tensor, in model order
  std::vector<uint32_t> unmapped;       // tensor indices with no rule

  // The entries index of the tensor with this canonical name, or kNone.
  uint32_t find(std::string_view canonical) const;

  // Building: appends an entry (its canonical name copied into the map's blocks) and indexes it.
  void add(NameMapEntry entry, std::string_view canonical);
  void finish_index();   // after the last add: builds the index

 private:
  std::string_view keep(std::string_view text);
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0, block_size_ = 0;
  std::vector<uint32_t> slots_;         // entry index + 1; 0 = empty; size a power of two
};

// `arch` empty: taken from the model's config (GGUF general.architecture or config.json model_type).
NameMap build_name_map(const Model& model, std::string_view arch = {});

// The two steps of build_name_map, for callers that map one tensor at a time (a million-tensor
// listing streams its rows instead of holding a map): the architecture taken from the model's
// config, and one tensor's canonical name (nullopt for a companion or an unmapped name).
std::string name_map_arch(const Model& model);
std::optional<CanonicalName> map_tensor_name(const Tensor& t, std::string_view arch);

}  // namespace akview
