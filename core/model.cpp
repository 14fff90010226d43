// Model bookkeeping: shapes, interned strings, and an open-addressing name index
// (4 bytes a slot, so a million tensors cost 8 MB of index rather than a node-based map).
#include "core/model.hpp"

#include <algorithm>
#include <array>
#include <functional>

#include "core/huge_pages.hpp"
#include "core/name_set.hpp"

namespace akview {

Model::Model() = default;
Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

std::string_view meta_type_name(MetaType t) {
  static constexpr std::array<std::string_view, 14> kNames = {"UINT8",  "INT8",    "UINT16",  "INT16",  "UINT32",
                                                              "INT32",  "FLOAT32", "BOOL",    "STRING", "ARRAY",
                                                              "UINT64", "INT64",   "FLOAT64", "JSON"};
  auto i = static_cast<size_t>(t);
  return i < kNames.size() ? kNames[i] : "?";
}

uint64_t Model::n_elements(const Tensor& t) const {
  uint64_t n = 1;
  for (int64_t d : shape(t)) n *= static_cast<uint64_t>(d);
  return n;
}

std::span<const uint8_t> Model::data(const Tensor& t) const {
  if (t.file >= files.size()) return {};
  return files[t.file].map.range(t.offset, t.nbytes);
}

uint32_t Model::add_tensor(Tensor t, std::span<const int64_t> shape) {
  t.dims_at = static_cast<uint32_t>(dims.size());
  t.rank = static_cast<uint8_t>(shape.size());
  dims.insert(dims.end(), shape.begin(), shape.end());
  tensors.push_back(t);
  return static_cast<uint32_t>(tensors.size() - 1);
}

std::string_view Model::intern(std::string s) {
  strings_.push_back(std::move(s));
  return strings_.back();
}

void Model::pack_names() {
  size_t total = 0;
  for (const Tensor& t : tensors) total += t.name.size();
  // Not zeroed, and in huge pages where the system gives them on request: a million names (~25 MB)
  // would otherwise cost thousands of first-touch page faults before the view's first frame.
  std::unique_ptr<char[]> block(new char[total + 1]);
  advise_huge_pages(block.get(), total + 1);
  char* at = block.get();
  for (Tensor& t : tensors) {
    std::copy(t.name.begin(), t.name.end(), at);
    t.name = std::string_view(at, t.name.size());
    at += t.name.size();
  }
  names_ = std::move(block);   // a second pack copies from the first block before dropping it
}

constexpr uint64_t kEmptySlot = ~uint64_t{0};

// Each slot keeps 32 bits of the name's hash beside the index, so a probe compares names only when
// the tags agree: a million lookups then touch the slot array, not a million random names.
uint32_t Model::build_index(int threads) {
  uint32_t first_duplicate = kNone;
  size_t cap = 16;
  while (cap < tensors.size() * 2) cap <<= 1;
  if (slots_.capacity() < cap) {
    // Fresh memory in huge pages where it is large (8 MB for 5*10^5 names): first-touch faults
    // cost more here than the fill.
    std::vector<uint64_t>().swap(slots_);
    slots_.reserve(cap);
    advise_huge_pages(slots_.data(), cap * sizeof(uint64_t));
    if (threads > 1) populate_on_threads(slots_.data(), cap * sizeof(uint64_t), threads);
  }
  slots_.assign(cap, kEmptySlot);
  const size_t mask = cap - 1;
  constexpr uint32_t kAhead = 16;   // slots prefetched this many names ahead (NameSet::prefetch)
  uint64_t ahead[kAhead];           // the hashes of names i .. i+kAhead-1, each computed once
  const auto n = static_cast<uint32_t>(tensors.size());
  for (uint32_t i = 0; i < kAhead && i < n; ++i) ahead[i] = hash_name(tensors[i].name);
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t h = ahead[i % kAhead];
    if (i + kAhead < n) {
      ahead[i % kAhead] = hash_name(tensors[i + kAhead].name);
      __builtin_prefetch(&slots_[ahead[i % kAhead] & mask]);
    }
    const uint64_t tag = h >> 32;
    size_t at = h & mask;
    bool duplicate = false;
    while (slots_[at] != kEmptySlot) {
      if ((slots_[at] >> 32) == tag && tensors[slots_[at] & 0xffffffffu].name == tensors[i].name) {
        duplicate = true;   // keep the first of duplicates
        break;
      }
      at = (at + 1) & mask;
    }
    if (!duplicate) slots_[at] = tag << 32 | i;
    else if (first_duplicate == kNone) first_duplicate = i;
  }
  indexed_ = tensors.size();
  return first_duplicate;
}

bool Model::has_index() const { return !slots_.empty() && indexed_ == tensors.size(); }

void Model::drop_index() {
  slots_.clear();
  slots_.shrink_to_fit();
  indexed_ = 0;
}

const Tensor* Model::find(std::string_view name) const {
  if (slots_.empty()) {
    for (const auto& t : tensors)
      if (t.name == name) return &t;
    return nullptr;
  }
  return find_hashed(name, hash_name(name));
}

const Tensor* Model::find_hashed(std::string_view name, uint64_t h) const {
  if (slots_.empty()) return find(name);
  const size_t mask = slots_.size() - 1;
  const uint64_t tag = h >> 32;
  for (size_t at = h & mask; slots_[at] != kEmptySlot; at = (at + 1) & mask) {
    const Tensor& t = tensors[slots_[at] & 0xffffffffu];
    if ((slots_[at] >> 32) == tag && t.name == name) return &t;
  }
  return nullptr;
}

const MetaEntry* Model::find_meta(std::string_view key) const {
  for (const auto& m : meta)
    if (m.key == key) return &m;
  return nullptr;
}

uint64_t Model::total_bytes() const {
  uint64_t sum = 0;
  for (const auto& t : tensors)
    if (!(t.flags & kTensorCompanion)) sum += t.nbytes;
  return sum;
}

uint64_t Model::total_parameters() const {
  uint64_t sum = 0;
  for (const auto& t : tensors)
    if (!(t.flags & kTensorCompanion)) sum += n_elements(t);
  return sum;
}

}   // namespace akview
