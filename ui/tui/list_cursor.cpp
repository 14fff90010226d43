// ListCursor (pane.hpp): the one implementation of moving through a list, shared by every pane.
#include <algorithm>

#include "ui/tui/pane.hpp"

namespace akview::tui {

bool ListCursor::act(Action action, int64_t count, int page) {
  page = std::max(1, page);
  switch (action) {   // navigation only; everything else is the pane's
    case Action::up: pos -= 1; break;
    case Action::down: pos += 1; break;
    case Action::page_up: pos -= page; top -= page; break;
    case Action::page_down: pos += page; top += page; break;
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

}  // namespace akview::tui
