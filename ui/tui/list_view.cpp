// ListCursor, ListView and ScrollView (list_view.hpp): the one implementation of moving through a
// list, shared by every pane.
#include "ui/tui/list_view.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace akview::tui {

bool ListCursor::act(Action action, int64_t count, int page) {
  page = std::max(1, page);
  switch (action) {   // navigation only; everything else is the pane's
    case Action::up: pos -= 1; break;
    case Action::down: pos += 1; break;
    case Action::page_up:
      pos -= page;
      top -= page;
      break;
    case Action::page_down:
      pos += page;
      top += page;
      break;
    case Action::home: pos = 0; break;
    case Action::end: pos = count - 1; break;
    default: return false;
  }
  clamp(count, page);
  return true;
}

void ListCursor::clamp(int64_t count, int page) {
  page = std::max(1, page);
  pos = std::clamp<int64_t>(pos, 0, std::max<int64_t>(0, count - 1));
  top = std::clamp<int64_t>(top, 0, std::max<int64_t>(0, count - page));
  if (pos < top) top = pos;
  if (pos >= top + page) top = pos - page + 1;
}

void ListCursor::scroll(int rows, int64_t count, int page) {
  top += rows;
  pos += rows;
  clamp(count, page);
}

bool ListView::click(int y, int64_t count) {
  if (y < first_y || y >= first_y + page) return false;
  const int64_t row = cursor.top + y - first_y;
  if (row >= count) return false;
  cursor.pos = row;
  return true;
}

std::string ListView::position(std::string_view noun, int64_t count) const {
  return fmt::format("{} {}/{}", noun, count == 0 ? 0 : cursor.pos + 1, count);
}

void ScrollView::fit(int64_t count, int rows) {
  page = std::max(1, rows);
  cursor.clamp(count, page);
}

bool ScrollView::act(Action action, int64_t count) {
  // The cursor stands on the edge the view moves towards, so the move scrolls at once.
  if (action == Action::up || action == Action::page_up || action == Action::home) cursor.pos = cursor.top;
  if (action == Action::down || action == Action::page_down || action == Action::end)
    cursor.pos = cursor.top + page - 1;
  return cursor.act(action, count, page);
}

}   // namespace akview::tui
