// The native -> canonical -> role map of one Model (PRODUCT.md "The canonical model"), built from
// the name rules; companion tensors (scales, biases) are not mapped, their logical tensor is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.hpp"
#include "core/names/name_rules.hpp"

namespace akview {

// One tensor's row of the map, as read (NameMap::entries hands these out by value; it stores 24
// bytes a row, so a million-tensor map costs ~24 MB plus its canonical names).
struct NameMapEntry {
  uint32_t tensor = 0;   // index into Model::tensors
  uint32_t rule = 0;     // row of name_rules() when mapped
  int64_t layer = -1;
  std::string_view canonical;   // empty when unmapped; the text lives in the NameMap that holds the entry
  std::string_view role;        // "attention.q", "norm", ... (empty when unmapped)
  std::string_view note;        // a conversion transform to expect (llama q/k permutation, gemma +1 norms)
  bool mapped = false;
};

// The entries of a NameMap, packed; reads like a vector of NameMapEntry (values, not references).
class NameMapEntries {
 public:
  size_t size() const { return rows_.size(); }
  bool empty() const { return rows_.empty(); }
  NameMapEntry operator[](size_t i) const;
  bool mapped(size_t i) const { return rows_[i].rule != kUnmapped; }
  std::string_view canonical(size_t i) const;

  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = NameMapEntry;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = NameMapEntry;
    iterator(const NameMapEntries* c, size_t i) : c_(c), i_(i) {}
    NameMapEntry operator*() const { return (*c_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    iterator operator++(int) {
      iterator was = *this;
      ++i_;
      return was;
    }
    bool operator==(const iterator& o) const { return i_ == o.i_; }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }

   private:
    const NameMapEntries* c_;
    size_t i_;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, rows_.size()}; }

 private:
  friend class NameMap;
  static constexpr uint32_t kUnmapped = ~uint32_t{0};
  static constexpr uint32_t kHasNote = 1u << 31;   // in `rule`: the rule's note applies to this arch
  struct Row {
    uint32_t tensor;
    uint32_t rule;   // kUnmapped, or the rule's row | kHasNote
    int32_t layer;
    uint32_t block;   // canonical name: blocks_[block] + at, `size` bytes
    uint32_t at;
    uint32_t size;
  };
  std::vector<Row> rows_;
  std::vector<std::unique_ptr<char[]>> blocks_;
};

// A million-tensor model's map costs about 50 bytes a tensor: packed rows, the canonical names in
// blocks that never move (an entry's string_view stays valid when the map is moved, never copied),
// and an open-addressing index by canonical name of entry numbers.
class NameMap {
 public:
  NameMap() = default;
  NameMap(NameMap&&) noexcept = default;
  NameMap& operator=(NameMap&&) noexcept = default;
  NameMap(const NameMap&) = delete;
  NameMap& operator=(const NameMap&) = delete;

  std::string arch;                 // the architecture used to pick arch-specific rows
  NameMapEntries entries;           // one per non-companion tensor, in model order
  std::vector<uint32_t> unmapped;   // tensor indices with no rule

  // The entries index of the tensor with this canonical name, or kNone.
  uint32_t find(std::string_view canonical) const;

  // Building: appends an entry (its canonical name copied into the map's blocks; role and note are
  // the rule's, the note kept when `entry.note` is not empty) and indexes it.
  void reserve(size_t n) { entries.rows_.reserve(n); }
  void add(const NameMapEntry& entry);
  void finish_index();   // after the last add: builds the index

 private:
  size_t block_used_ = 0, block_size_ = 0;
  std::vector<uint32_t> slots_;   // entry index + 1; 0 = empty; size a power of two
};

// `arch` empty: taken from the model's config (GGUF general.architecture or config.json model_type).
NameMap build_name_map(const Model& model, std::string_view arch = {});

// The two steps of build_name_map, for callers that map one tensor at a time (a million-tensor
// listing streams its rows instead of holding a map): the architecture taken from the model's
// config, and one tensor's canonical name (nullopt for a companion or an unmapped name).
std::string name_map_arch(const Model& model);
std::optional<CanonicalName> map_tensor_name(const Tensor& t, std::string_view arch);

}   // namespace akview
