// A detail overlay over a pane (a tensor's fields, a pair side by side, a group's step-through): open
// or not, a title bar, and lines under it scrolled by the first one shown; back (Esc) closes it.
#pragma once

#include <cstdint>
#include <string_view>

#include "ui/tui/canvas.hpp"
#include "ui/tui/keys.hpp"
#include "ui/tui/list_view.hpp"

namespace akview::tui {

struct Overlay {
  bool open = false;
  ScrollView view;

  // Opens it at its first line.
  void show() {
    open = true;
    view = {};
  }
  // back closes it, the navigation keys scroll its `count` lines; false for any other action.
  bool act(Action action, int64_t count);
  // The title bar on the first row of `area`, the view fitted to `count` lines in the rows under it.
  void draw_title(Canvas& c, const Rect& area, std::string_view title, int64_t count);
};

}   // namespace akview::tui
