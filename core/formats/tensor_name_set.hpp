// A set of tensor names for duplicate detection while a format parser reads its tensor table
// (GGUF §2.4 rejects duplicate names; any multi-file format can reuse it across files).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "core/model.hpp"

namespace akview {

// Open-addressing set of tensor names: a slot packs the upper 32 bits of the name's hash (which
// also pick the home slot) with a tensor index, so a probe compares names only when those bits
// agree, and growing never rehashes a name. No node allocations; it grows with the names actually
// read, so a hostile tensor count cannot make it large. Size it for the expected count: on this
// VM first touch of fresh memory dominates, and growing touches the table twice.
class TensorNameSet {
 public:
  explicit TensorNameSet(const std::vector<Tensor>& tensors, size_t expected) : tensors_(tensors) {
    size_t cap = 16;
    while (cap < expected + expected / 4) cap <<= 1;   // load factor <= 4/5: less memory to touch
    slots_.assign(cap, 0);
  }
  static uint64_t hash(std::string_view name) { return std::hash<std::string_view>{}(name) >> 32; }
  void prefetch(uint64_t h) const { __builtin_prefetch(&slots_[h & (slots_.size() - 1)]); }
  uint32_t insert(std::string_view name, uint32_t index) { return insert(name, hash(name), index); }
  // Inserts `name` (hash `h` from hash()) as tensor `index`; returns the index of an earlier
  // tensor of that name, or kNone.
  uint32_t insert(std::string_view name, uint64_t h, uint32_t index) {
    if (5 * (size_ + 1) > 4 * slots_.size()) grow();
    const size_t mask = slots_.size() - 1;
    for (size_t at = h & mask;; at = (at + 1) & mask) {
      const uint64_t slot = slots_[at];
      if (slot == 0) {
        slots_[at] = (h << 32) | (uint64_t{index} + 1);
        ++size_;
        return kNone;
      }
      const uint32_t other = static_cast<uint32_t>(slot) - 1;
      if ((slot >> 32) == h && tensors_[other].name == name) return other;
    }
  }

 private:
  void grow() {
    std::vector<uint64_t> old(slots_.size() * 2, 0);
    old.swap(slots_);
    const size_t mask = slots_.size() - 1;
    for (uint64_t slot : old) {
      if (slot == 0) continue;
      size_t at = (slot >> 32) & mask;
      while (slots_[at] != 0) at = (at + 1) & mask;
      slots_[at] = slot;
    }
  }

  const std::vector<Tensor>& tensors_;
  std::vector<uint64_t> slots_;   // 0: empty; else hash << 32 | (index + 1)
  size_t size_ = 0;
};

}   // namespace akview
