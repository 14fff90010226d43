// The off-screen canvas (canvas.hpp): escaping, widths and clipping of text into cells.
#include "ui/tui/canvas.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ui/text/escape.hpp"

namespace akview::tui {
void to_glyphs(std::string_view text, std::vector<Glyph>& out) {
  out.clear();
  const std::string safe = escape_for_terminal(text);
  for (size_t i = 0; i < safe.size();) {
    char32_t cp = next_code_point(safe, i);   // escape_for_terminal left only well-formed UTF-8
    int w = char_width(cp);
    if (w == 0) {
      for (char c : fmt::format("\\u{{{:04x}}}", static_cast<uint32_t>(cp)))
        out.push_back({static_cast<char32_t>(c), 1});
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

}   // namespace akview::tui

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

}   // namespace akview::tui
