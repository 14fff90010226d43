// Quoting names taken from files for error messages: control bytes escaped (they must never reach
// a terminal raw) and very long names shortened, so a hostile name cannot flood a message.
#pragma once

#include <string>
#include <string_view>

namespace akview {

inline std::string quote_name(std::string_view name, size_t max_bytes = 120) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  const bool cut = name.size() > max_bytes;
  if (cut) name = name.substr(0, max_bytes);
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f || c == '\\' || c == '\'') {
      out += '\\';
      out += 'x';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += cut ? "...'" : "'";
  return out;
}

}   // namespace akview
