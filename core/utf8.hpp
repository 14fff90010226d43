// UTF-8 (RFC 3629): the one encoder of the project and a decoder of one well-formed sequence. The
// JSON reader, the TUI's canvas and text, the batch printers' escaping and the test harness use them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace akview {

// Appends `cp` (at most U+10FFFF) as UTF-8.
inline void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// The length of the well-formed UTF-8 sequence at s[i] (no overlong forms, no surrogates, nothing
// above U+10FFFF), with its code point in `cp`; 0 when the bytes there are not one. Inline: the
// canvas decodes every code point it draws with it.
inline size_t decode_utf8(std::string_view s, size_t i, char32_t& cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = byte(0);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  const size_t len = c >= 0xc2 && c <= 0xdf ? 2 : (c >> 4) == 0xe ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  cp = c & (0x7f >> len);
  for (size_t k = 1; k < len; ++k) {
    if ((byte(k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(k) & 0x3f);
  }
  const char32_t min_cp = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

// The code point at s[i], advancing i past it; U+FFFD (advancing one byte) where the bytes are not
// well-formed UTF-8.
inline char32_t next_code_point(std::string_view s, size_t& i) {
  char32_t cp = 0;
  const size_t len = decode_utf8(s, i, cp);
  i += len == 0 ? 1 : len;
  return len == 0 ? U'\uFFFD' : cp;
}

}   // namespace akview
