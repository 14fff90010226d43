// The off-screen canvas (canvas.hpp): escaping, widths and clipping of text into cells.
#include "ui/tui/canvas.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "ui/batch/printers.hpp"

namespace akview::tui {
namespace {

struct Range {
  char32_t lo, hi;
};

// East Asian Wide and Fullwidth blocks (the ranges terminals agree on: CJK, Hangul, kana, fullwidth
// forms, the common emoji blocks).
constexpr std::array<Range, 17> kWide = {{
    {0x1100, 0x115f}, {0x2329, 0x232a}, {0x2e80, 0x303e}, {0x3041, 0x33ff}, {0x3400, 0x4dbf},
    {0x4e00, 0x9fff}, {0xa000, 0xa4cf}, {0xac00, 0xd7a3}, {0xf900, 0xfaff}, {0xfe10, 0xfe19},
    {0xfe30, 0xfe6f}, {0xff00, 0xff60}, {0xffe0, 0xffe6}, {0x1f300, 0x1f64f}, {0x1f900, 0x1f9ff},
    {0x20000, 0x2fffd}, {0x30000, 0x3fffd},
}};

// Combining marks and invisible format characters: bidi embeddings/overrides/isolates, zero-width
// spaces and joiners, line/paragraph separators, the BOM, soft hyphen. A terminal would draw them
// as nothing (or reorder the line), so akview shows them escaped.
constexpr std::array<Range, 22> kZeroWidth = {{
    {0x00ad, 0x00ad}, {0x0300, 0x036f}, {0x0483, 0x0489}, {0x0591, 0x05c7}, {0x0610, 0x061c},
    {0x064b, 0x065f}, {0x0670, 0x0670}, {0x06d6, 0x06ed}, {0x0e31, 0x0e31}, {0x0e34, 0x0e3a},
    {0x0e47, 0x0e4e}, {0x1ab0, 0x1aff}, {0x1dc0, 0x1dff}, {0x200b, 0x200f}, {0x2028, 0x202e},
    {0x2060, 0x206f}, {0x20d0, 0x20ff}, {0xfe00, 0xfe0f}, {0xfe20, 0xfe2f}, {0xfeff, 0xfeff},
    {0xfff9, 0xfffb}, {0xe0000, 0xe0fff},
}};

template <size_t N>
bool in(const std::array<Range, N>& table, char32_t c) {
  auto it = std::upper_bound(table.begin(), table.end(), c, [](char32_t v, const Range& r) { return v < r.lo; });
  return it != table.begin() && c <= std::prev(it)->hi;
}

// Decodes one code point of valid UTF-8 (escape_for_terminal has replaced every invalid byte).
char32_t next_code_point(std::string_view s, size_t& i) {
  auto c = static_cast<unsigned char>(s[i]);
  int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : 4;
  char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
  for (int k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
  i += static_cast<size_t>(len);
  return cp;
}

}  // namespace

void append_utf8(std::string& s, char32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xc0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xe0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    s += static_cast<char>(0xf0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

int char_width(char32_t ch) {
  if (in(kZeroWidth, ch)) return 0;
  return in(kWide, ch) ? 2 : 1;
}

void to_glyphs(std::string_view text, std::vector<Glyph>& out) {
  out.clear();
  const std::string safe = escape_for_terminal(text);
  for (size_t i = 0; i < safe.size();) {
    char32_t cp = next_code_point(safe, i);
    int w = char_width(cp);
    if (w == 0) {
      for (char c : fmt::format("\\u{{{:04x}}}", static_cast<uint32_t>(cp))) out.push_back({static_cast<char32_t>(c), 1});
      continue;
    }
    out.push_back({cp, static_cast<uint8_t>(w)});
  }
}

int display_width(std::string_view text) {
  thread_local std::vector<Glyph> glyphs;
  to_glyphs(text, glyphs);
  int w = 0;
  for (const Glyph& g : glyphs) w += g.width;
  return w;
}

void Canvas::resize(int width, int height) {
  width_ = std::max(0, width);
  height_ = std::max(0, height);
  cells_.assign(static_cast<size_t>(width_) * height_, Cell{});
}

void Canvas::clear(Role role) { std::fill(cells_.begin(), cells_.end(), Cell{U' ', role, false}); }

void Canvas::fill(int x, int y, int w, Role role) {
  if (y < 0 || y >= height_) return;
  for (int k = std::max(0, x); k < std::min(width_, x + w); ++k) *cell(k, y) = Cell{U' ', role, false};
}

void Canvas::fill(const Rect& r, Role role) {
  for (int y = r.y; y < r.y + r.h; ++y) fill(r.x, y, r.w, role);
}

void Canvas::restyle(int x, int y, int w, Role role) {
  if (y < 0 || y >= height_) return;
  for (int k = std::max(0, x); k < std::min(width_, x + w); ++k) cell(k, y)->role = role;
}

void Canvas::put(int x, int y, char32_t ch, Role role) {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
  *cell(x, y) = Cell{ch, role, false};
}

int Canvas::text(int x, int y, std::string_view s, Role role, int max_w) {
  if (y < 0 || y >= height_ || max_w <= 0) return 0;
  max_w = std::min(max_w, width_ - x);
  thread_local std::vector<Glyph> glyphs;
  to_glyphs(s, glyphs);
  int total = 0;
  for (const Glyph& g : glyphs) total += g.width;
  const bool cut = total > max_w;
  const int room = cut ? max_w - 1 : max_w;   // leave a cell for the ellipsis
  int col = 0;
  for (const Glyph& g : glyphs) {
    if (col + g.width > room) break;
    if (x + col >= 0) {
      *cell(x + col, y) = Cell{g.ch, role, false};
      if (g.width == 2) *cell(x + col + 1, y) = Cell{U' ', role, true};
    }
    col += g.width;
  }
  if (cut && room >= 0) {
    put(x + col, y, U'…', role);
    ++col;
  }
  return col;
}

int Canvas::text_middle(int x, int y, std::string_view s, Role role, int max_w) {
  if (y < 0 || y >= height_ || max_w <= 0) return 0;
  max_w = std::min(max_w, width_ - x);
  return text(x, y, elide_middle(s, max_w), role, max_w);
}

void Canvas::text_right(int x, int y, int w, std::string_view s, Role role) {
  int dw = display_width(s);
  if (dw >= w) {
    text(x, y, s, role, w);
    return;
  }
  text(x + w - dw, y, s, role, dw);
}

std::string Canvas::row_text(int y) const {
  std::string out;
  for (int x = 0; x < width_; ++x) {
    const Cell& c = at(x, y);
    if (c.continuation) continue;
    append_utf8(out, c.ch);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace akview::tui

namespace akview::tui {

std::string elide_middle(std::string_view text, int w) {
  std::vector<Glyph> glyphs;
  to_glyphs(text, glyphs);
  int total = 0;
  for (const Glyph& g : glyphs) total += g.width;
  std::string out;
  if (total <= w) {
    for (const Glyph& g : glyphs) append_utf8(out, g.ch);
    return out;
  }
  if (w <= 0) return out;
  // Half each side (the start one more when odd): the start holds the layer and the first letters of
  // the part after it ("layers.0.a…" against "layers.0.f…"), the end the role ("…up.weight").
  const int head_w = w / 2, tail_w = w - 1 - head_w;
  size_t head = 0;
  for (int used = 0; head < glyphs.size() && used + glyphs[head].width <= head_w; ++head) used += glyphs[head].width;
  size_t tail = glyphs.size();
  for (int used = 0; tail > head && used + glyphs[tail - 1].width <= tail_w; --tail) used += glyphs[tail - 1].width;
  for (size_t i = 0; i < head; ++i) append_utf8(out, glyphs[i].ch);
  out += "…";
  for (size_t i = tail; i < glyphs.size(); ++i) append_utf8(out, glyphs[i].ch);
  return out;
}

}  // namespace akview::tui
