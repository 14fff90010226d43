// An open-addressing set of names stored as indices (8 bytes a slot: hash + index), for duplicate
// detection and cross-checks over a million tensor names without a node-based map.
// The names themselves live elsewhere; the caller passes `name_of(index)` to compare.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace akview {

// FNV-1a over 8-byte words: cheap, and good enough for tensor names that differ in a few digits.
inline uint64_t hash_name(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    __builtin_memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < s.size(); ++i) h = (h ^ static_cast<uint8_t>(s[i])) * 0x100000001b3ull;
  h ^= h >> 32;
  h *= 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

class NameSet {
 public:
  static constexpr uint32_t kAbsent = ~uint32_t{0};

  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < n + n / 2 + 1) cap <<= 1;
    if (count_ == 0 && cap > slots_.size()) rehash(cap);   // a hint only before the first insert
  }
  size_t size() const { return count_; }

  // Starts loading the slot `name` hashes to: a loop over a million names that prefetches a few
  // names ahead waits for one cache miss at a time instead of one per name.
  void prefetch_hashed(uint64_t h) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[h & (slots_.size() - 1)]);
  }

  // Inserts `index` under `name`; returns the index already stored under an equal name (and does
  // not insert), or kAbsent. `name_of(i)` gives the name of a stored index.
  template <typename NameOf>
  uint32_t insert(std::string_view name, uint32_t index, NameOf&& name_of) {
    return insert_hashed(hash_name(name), name, index, name_of);
  }
  // insert() with the name's hash_name() already known (a loop that prefetched by it).
  template <typename NameOf>
  uint32_t insert_hashed(uint64_t h, std::string_view name, uint32_t index, NameOf&& name_of) {
    if ((count_ + 1) * 3 > slots_.size() * 2) grow(name_of);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    const size_t mask = slots_.size() - 1;
    for (size_t at = h & mask;; at = (at + 1) & mask) {
      Slot& s = slots_[at];
      if (s.index == kAbsent) {
        s = {tag, index};
        ++count_;
        return kAbsent;
      }
      if (s.tag == tag && name_of(s.index) == name) return s.index;
    }
  }

  template <typename NameOf>
  uint32_t find(std::string_view name, NameOf&& name_of) const {
    if (slots_.empty()) return kAbsent;
    const uint64_t h = hash_name(name);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    const size_t mask = slots_.size() - 1;
    for (size_t at = h & mask;; at = (at + 1) & mask) {
      const Slot& s = slots_[at];
      if (s.index == kAbsent) return kAbsent;
      if (s.tag == tag && name_of(s.index) == name) return s.index;
    }
  }

 private:
  struct Slot {
    uint32_t tag = 0;
    uint32_t index = kAbsent;
  };

  template <typename NameOf>
  void grow(NameOf&& name_of) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    const size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.index == kAbsent) continue;
      size_t at = hash_name(name_of(s.index)) & mask;
      while (slots_[at].index != kAbsent) at = (at + 1) & mask;
      slots_[at] = s;
    }
  }
  void rehash(size_t cap) {
    // Only valid while empty (reserve before inserting); keeps the code free of a stored name_of.
    slots_.assign(cap, Slot{});
    count_ = 0;
  }

  std::vector<Slot> slots_;
  size_t count_ = 0;
};

}   // namespace akview
