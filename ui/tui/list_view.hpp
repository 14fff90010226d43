// The pieces of a scrolling view that every pane shares: a cursor over a list, a list on screen
// (cursor, page, click, wheel, "row k/N"), and a view scrolled by its first line (the detail overlays,
// the help).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ui/tui/keys.hpp"

namespace akview::tui {

// Cursor and scroll offset of a vertical list of `count` rows shown `page` rows at a time.
struct ListCursor {
  int64_t pos = 0;
  int64_t top = 0;
  // up/down/page_up/page_down/home/end; false for any other action.
  bool act(Action action, int64_t count, int page);
  // Keeps pos inside [0, count) and on screen.
  void clamp(int64_t count, int page);
  void scroll(int rows, int64_t count, int page);
};

// A list on screen: its cursor, the rows it shows at a time, and the pane row its first row is drawn
// on (under a column header, a settings block).
struct ListView {
  ListCursor cursor;
  int page = 1;
  int first_y = 1;

  bool act(Action action, int64_t count) { return cursor.act(action, count, page); }
  void wheel(int rows, int64_t count) { cursor.scroll(rows, count, page); }
  void clamp(int64_t count) { cursor.clamp(count, page); }
  // A click at pane row `y` on one of the `count` rows moves the cursor there; false anywhere else.
  bool click(int y, int64_t count);
  // "row 12/291" (`noun` "row"), "row 0/0" when empty.
  std::string position(std::string_view noun, int64_t count) const;
};

// A view scrolled by its first visible line: the keys move the lines, not a cursor over them.
struct ScrollView {
  ListCursor cursor;   // cursor.top: the first line shown
  int page = 1;

  // Before drawing `count` lines in `rows` rows.
  void fit(int64_t count, int rows);
  bool act(Action action, int64_t count);
  void wheel(int rows, int64_t count) { cursor.scroll(rows, count, page); }
  int64_t top() const { return cursor.top; }
  // Line `line` first on screen (as far as the lines after it fill the page).
  void show(int64_t line) { cursor.pos = cursor.top = line; }
};

}   // namespace akview::tui
