// The TUI's text path: input decoding is ncurses' (wget_wch in ui/tui/terminal.cpp), so what
// akview itself does with hostile bytes is escape and measure them for the canvas. For any bytes:
// to_glyphs leaves no control (C0, DEL, C1), bidi or other zero-width code point and no surrogate
// or out-of-range value; display_width is the sum of glyph widths; Canvas::text writes only inside
// [x, x + max_w) of its row, returns at most max_w columns, and leaves no control in any cell.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "ui/tui/canvas.hpp"

namespace {

bool forbidden(char32_t c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff ||
         akview::char_width(c) == 0;   // bidi controls, zero-width marks, BOM, ...
}

}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace akview::tui;
  if (size < 3) return 0;
  size = std::min<size_t>(size, 4099);   // a name's worth (the replay test cuts files there: CMakeLists.txt)
  const int width = 1 + data[0] % 40;
  const int x = static_cast<int>(data[1] % (width + 8)) - 4;
  const int max_w = static_cast<int>(data[2] % (width + 8)) - 2;
  const std::string_view text(reinterpret_cast<const char*>(data + 3), size - 3);

  std::vector<Glyph> glyphs;
  to_glyphs(text, glyphs);
  int total = 0;
  for (const Glyph& g : glyphs) {
    if (forbidden(g.ch) || (g.width != 1 && g.width != 2) || g.width != akview::char_width(g.ch)) std::abort();
    total += g.width;
  }
  if (total != display_width(text)) std::abort();
  if (!text.empty() && glyphs.empty()) std::abort();   // nothing dropped silently

  Canvas canvas(width, 3);
  canvas.clear();
  const int used = canvas.text(x, 1, text, Role::normal, max_w);
  if (used < 0 || used > std::max(0, max_w)) std::abort();
  for (int y = 0; y < 3; ++y)
    for (int c = 0; c < width; ++c) {
      const Cell& cell = canvas.at(c, y);
      if (forbidden(cell.ch)) std::abort();
      const bool inside = y == 1 && c >= x && c < x + std::max(0, max_w);
      if (!inside && (cell.ch != U' ' || cell.continuation)) std::abort();   // drawn outside its field
    }
  return 0;
}
