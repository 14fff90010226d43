// The detail overlay (overlay.hpp).
#include "ui/tui/overlay.hpp"

namespace akview::tui {

bool Overlay::act(Action action, int64_t count) {
  if (action != Action::back) return view.act(action, count);
  open = false;
  return true;
}

void Overlay::draw_title(Canvas& c, const Rect& area, std::string_view title, int64_t count) {
  c.fill(area.x, area.y, area.w, Role::header);
  c.text(area.x, area.y, title, Role::header, area.w);
  view.fit(count, area.h - 1);
}

}   // namespace akview::tui
