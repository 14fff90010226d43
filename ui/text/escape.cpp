// Escaping for the terminal (escape.hpp).
#include "ui/text/escape.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/utf8.hpp"
#include "ui/text/code_points.hpp"

namespace akview {

bool printable_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) - 0x20u >= 0x5fu) return false;   // outside 0x20..0x7e
  return true;
}

size_t escaped_size(std::string_view s) { return printable_ascii(s) ? s.size() : escape_for_terminal(s).size(); }

std::string escape_for_terminal(std::string_view s) {
  if (printable_ascii(s)) return std::string(s);   // most names: nothing to escape
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    char32_t cp = 0;
    const size_t len = decode_utf8(s, i, cp);
    const bool control = cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);   // C0, DEL, C1
    if (len == 0 || control) {   // invalid byte, or a control: each of its bytes as \xNN
      for (size_t k = 0; k < std::max<size_t>(len, 1); ++k)
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i + k]));
      i += std::max<size_t>(len, 1);
      continue;
    }
    if (is_invisible(cp)) out += fmt::format("\\u{{{:x}}}", static_cast<uint32_t>(cp));
    else out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

}   // namespace akview
