// The Tensors table's rows as a list of indices that is either stored or virtual: in the model's own
// order, with nothing filtered or grouped, row r is tensor r and nothing is stored, so a model of a
// million tensors reaches its first frame without an index per tensor to allocate (on a machine
// where fresh pages are dear, 4 MB of them cost tens of milliseconds).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace akview::tui {

class RowList {
 public:
  // Rows 0..n-1, each its own index; nothing stored.
  void set_identity(size_t n) {
    stored_.clear();
    identity_ = n;
    virtual_ = true;
  }
  // Cleared and stored from now on: the caller fills it.
  std::vector<uint32_t>& store() {
    stored_.clear();
    identity_ = 0;
    virtual_ = false;
    return stored_;
  }
  bool is_virtual() const { return virtual_; }

  size_t size() const { return virtual_ ? identity_ : stored_.size(); }
  bool empty() const { return size() == 0; }
  uint32_t operator[](size_t i) const { return virtual_ ? static_cast<uint32_t>(i) : stored_[i]; }
  uint32_t front() const { return (*this)[0]; }
  // The first row holding `value`, or -1.
  int64_t find(uint32_t value) const {
    if (virtual_) return value < identity_ ? static_cast<int64_t>(value) : -1;
    auto it = std::find(stored_.begin(), stored_.end(), value);
    return it == stored_.end() ? -1 : it - stored_.begin();
  }
  std::vector<uint32_t> to_vector() const {
    if (!virtual_) return stored_;
    std::vector<uint32_t> v(identity_);
    for (size_t i = 0; i < identity_; ++i) v[i] = static_cast<uint32_t>(i);
    return v;
  }

  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = uint32_t;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = uint32_t;
    Iterator() = default;
    Iterator(const RowList* list, size_t at) : list_(list), at_(at) {}
    uint32_t operator*() const { return (*list_)[at_]; }
    Iterator& operator++() {
      ++at_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator was = *this;
      ++at_;
      return was;
    }
    bool operator==(const Iterator& o) const { return at_ == o.at_; }

   private:
    const RowList* list_ = nullptr;
    size_t at_ = 0;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }

  friend bool operator==(const RowList& a, const RowList& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  std::vector<uint32_t> stored_;
  size_t identity_ = 0;
  bool virtual_ = true;
};

}   // namespace akview::tui
