// Label/value lines of a detail view (pane.hpp).
#include "ui/tui/pane.hpp"

namespace akview::tui {

void draw_detail_lines(Canvas& c, int x, int y, int w, int h, int label_w, const std::vector<DetailLine>& lines,
                       int64_t first) {
  for (int k = 0; k < h; ++k) {
    const int64_t i = first + k;
    if (i < 0 || i >= static_cast<int64_t>(lines.size())) break;
    const DetailLine& line = lines[static_cast<size_t>(i)];
    c.text(x + 1, y + k, line.label, Role::muted, label_w - 1);
    c.text(x + label_w + 1, y + k, line.value, line.role, w - label_w - 1);
  }
}

}   // namespace akview::tui
