// Natural ordering of names: digit runs compare by value, so layers.2 sorts before layers.10 (natural_order.hpp).
#include <algorithm>
#include <cctype>

#include "core/natural_order.hpp"

namespace akview {

bool natural_less(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i0 = i, j0 = j;
      while (i0 < a.size() && a[i0] == '0') ++i0;   // leading zeros do not change the value
      while (j0 < b.size() && b[j0] == '0') ++j0;
      size_t i1 = i0, j1 = j0;
      while (i1 < a.size() && std::isdigit(static_cast<unsigned char>(a[i1]))) ++i1;
      while (j1 < b.size() && std::isdigit(static_cast<unsigned char>(b[j1]))) ++j1;
      if (i1 - i0 != j1 - j0) return i1 - i0 < j1 - j0;
      int c = a.substr(i0, i1 - i0).compare(b.substr(j0, j1 - j0));
      if (c != 0) return c < 0;
      i = i1;
      j = j1;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

size_t natural_key_size(std::string_view name) {
  size_t n = 0, i = 0;
  while (i < name.size()) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) {
      ++n;
      ++i;
      continue;
    }
    while (i < name.size() && name[i] == '0') ++i;
    const size_t start = i;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
    n += (i - start < 9 ? 1 : 2) + (i - start);
  }
  return n;
}

void append_natural_key(std::string& out, std::string_view name) {
  size_t i = 0;
  while (i < name.size()) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) {
      out += name[i++];
      continue;
    }
    while (i < name.size() && name[i] == '0') ++i;
    const size_t start = i;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
    const size_t len = i - start;
    if (len < 9) {
      out += static_cast<char>('0' + len);
    } else {
      out += '9';
      out += static_cast<char>(std::min<size_t>(len - 9, 255));
    }
    out.append(name.substr(start, len));
  }
}

}   // namespace akview
