// The off-screen canvas every pane draws into: a grid of cells (one code point + a style role).
// The terminal (terminal.cpp) shows it; the frame benchmark and tests read it directly. Text put on
// the canvas is escaped first, so a name from a file can never send a control sequence to the
// terminal, and wide characters take two cells so columns stay aligned.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/utf8.hpp"
#include "ui/text/code_points.hpp"
#include "ui/tui/theme.hpp"

namespace akview::tui {

// A sparkline's levels: the block elements from empty (0) to full (8).
inline constexpr char32_t kSpark[9] = {U' ', U'▁', U'▂', U'▃', U'▄', U'▅', U'▆', U'▇', U'█'};

struct Cell {
  char32_t ch = U' ';
  Role role = Role::normal;
  bool continuation = false;   // right half of a wide character (the terminal skips it)
};

struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
};

class Canvas {
 public:
  Canvas() = default;
  Canvas(int width, int height) { resize(width, height); }
  void resize(int width, int height);
  int width() const { return width_; }
  int height() const { return height_; }

  void clear(Role role = Role::normal);
  // Blanks `w` cells of row `y` from `x` in `role` (clipped).
  void fill(int x, int y, int w, Role role);
  void fill(const Rect& r, Role role);
  // Changes the role of cells already drawn (the selected row, the column cursor).
  void restyle(int x, int y, int w, Role role);
  // Draws `text` (UTF-8 from anywhere: escaped here) at (x, y) in at most `max_w` columns; a text
  // that does not fit ends in '…'. Returns the columns used.
  int text(int x, int y, std::string_view text, Role role, int max_w);
  // Same, but a text that does not fit is cut in the middle (elide_middle): for names, whose start
  // and end both tell rows apart ("layers.2.atte…output.weight").
  int text_middle(int x, int y, std::string_view text, Role role, int max_w);
  // Same, right-aligned in a field of `w` columns.
  void text_right(int x, int y, int w, std::string_view text, Role role);
  // One cell (a code point of width 1, e.g. a block or box character).
  void put(int x, int y, char32_t ch, Role role);

  const Cell& at(int x, int y) const { return cells_[static_cast<size_t>(y) * width_ + x]; }
  // The row as UTF-8 with trailing blanks trimmed (tests, the frame benchmark).
  std::string row_text(int y) const;

 private:
  Cell* cell(int x, int y) { return &cells_[static_cast<size_t>(y) * width_ + x]; }
  int width_ = 0, height_ = 0;
  std::vector<Cell> cells_;
};

// A displayable code point sequence: the text escaped (control characters, invalid UTF-8, bidi and
// invisible format characters, zero-width marks as \xNN or \u{NNNN}) and each code point's width.
struct Glyph {
  char32_t ch;
  uint8_t width;   // 1 or 2
};
void to_glyphs(std::string_view text, std::vector<Glyph>& out);
// Columns `text` takes once escaped.
int display_width(std::string_view text);
// `text` escaped and, when wider than `w` columns, cut in the middle: "layers.2.atte…output.weight"
// keeps a name's layer and its role, where Canvas::text's '…' at the end would keep only the first.
std::string elide_middle(std::string_view text, int w);

}   // namespace akview::tui
