// Small text helpers shared by the printers and the TUI: sizes, counts, shapes, escaping.
#include <algorithm>

#include <fmt/format.h>

#include "ui/batch/printers.hpp"

namespace akview {

namespace {

// Code points that draw nothing yet change how the text around them reads: bidi controls (an
// override makes "gpj.exe" display as "exe.jpg"), zero-width characters and separators, the BOM,
// invisible operators and tag characters. One row per range; they are printed as \u{202e}.
struct InvisibleRange {
  char32_t first, last;
};
constexpr InvisibleRange kInvisible[] = {
    {0x00AD, 0x00AD},     // soft hyphen
    {0x061C, 0x061C},     // Arabic letter mark (bidi)
    {0x180E, 0x180E},     // Mongolian vowel separator
    {0x200B, 0x200F},     // zero-width space / non-joiner / joiner, LRM, RLM
    {0x2028, 0x2029},     // line and paragraph separators
    {0x202A, 0x202E},     // LRE, RLE, PDF, LRO, RLO
    {0x2060, 0x2064},     // word joiner, invisible operators
    {0x2066, 0x206F},     // LRI, RLI, FSI, PDI, deprecated format controls
    {0xFEFF, 0xFEFF},     // zero-width no-break space (BOM)
    {0xFFF9, 0xFFFB},     // interlinear annotation controls
    {0xE0000, 0xE007F},   // tag characters
};

bool is_invisible(char32_t cp) {
  for (const auto& r : kInvisible)
    if (cp >= r.first && cp <= r.last) return true;
  return false;
}

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF) and its code point; 0 when the bytes there are not one.
size_t utf8_sequence(std::string_view s, size_t i, char32_t& cp) {
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

}  // namespace

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
    const size_t len = utf8_sequence(s, i, cp);
    const bool control = cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);   // C0, DEL, C1
    if (len == 0 || control) {   // invalid byte, or a control: each of its bytes as \xNN
      for (size_t k = 0; k < std::max<size_t>(len, 1); ++k) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i + k]));
      i += std::max<size_t>(len, 1);
      continue;
    }
    if (is_invisible(cp))
      out += fmt::format("\\u{{{:x}}}", static_cast<uint32_t>(cp));
    else
      out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

std::string format_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.2f} {}", v, kUnits[u]);
}

std::string format_count(uint64_t n) {
  static constexpr const char* kSuffix[] = {"", "K", "M", "B", "T"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1000.0 && u < 4) {
    v /= 1000.0;
    ++u;
  }
  return u == 0 ? fmt::format("{}", n) : fmt::format("{:.1f}{}", v, kSuffix[u]);
}

std::string format_shape(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

std::string format_offset(uint64_t offset) { return fmt::format("{:#x}", offset); }

std::string dump_json(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

void print_json(std::FILE* out, const nlohmann::json& j) { fmt::print(out, "{}\n", dump_json(j)); }

}  // namespace akview
