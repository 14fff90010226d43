// The Help pane, generated from the key table (help_pane.hpp).
#include "ui/tui/help_pane.hpp"

#include <fmt/format.h>

#include "ui/batch/explain_report.hpp"

namespace akview::tui {

HelpPane::HelpPane() {
  // Contexts in the order a user meets them; each binding once, under its context.
  for (Context ctx : {Context::global, Context::nav, Context::model_list, Context::tensors, Context::detail,
                      Context::header, Context::layout, Context::groups, Context::mapping, Context::compute,
                      Context::diff, Context::prompt}) {
    lines_.push_back({"", std::string(context_title(ctx)), true});
    for (const KeyBinding& b : key_table()) {
      if (b.context != ctx) continue;
      std::string keys;
      for (int32_t k : b.keys) keys += (keys.empty() ? "" : " ") + key_label(k);
      lines_.push_back({keys, std::string(b.help), false});
    }
  }
  layout(80);   // until the first draw gives the width
}

namespace {
int keys_width(int width) { return std::min(16, width / 3); }
}  // namespace

void HelpPane::layout(int width) {
  if (width == shown_width_) return;
  shown_.clear();
  shown_width_ = width;
  const int text_w = std::max(8, width - keys_width(width) - 4);
  for (const Line& l : lines_) {
    if (l.heading) {
      shown_.push_back(l);
      continue;
    }
    bool first_part = true;
    for (std::string& part : wrap_words(l.text, static_cast<size_t>(text_w))) {
      shown_.push_back({first_part ? l.keys : std::string(), std::move(part), false});
      first_part = false;
    }
  }
}

void HelpPane::draw(Canvas& c, const Rect& area) {
  layout(area.w);
  page_ = std::max(1, area.h);
  cursor_.clamp(static_cast<int64_t>(shown_.size()), page_);
  const int keys_w = keys_width(area.w);
  for (int k = 0; k < page_; ++k) {
    int64_t i = cursor_.top + k;
    if (i >= static_cast<int64_t>(shown_.size())) break;
    const Line& l = shown_[static_cast<size_t>(i)];
    const int y = area.y + k;
    if (l.heading) {
      c.text(area.x + 1, y, l.text, Role::header, area.w - 1);
      continue;
    }
    c.text(area.x + 3, y, l.keys, Role::status_key, keys_w);
    c.text(area.x + 4 + keys_w, y, l.text, Role::normal, area.w - keys_w - 4);
  }
}

bool HelpPane::act(Action action, PaneHost&) {
  // The help scrolls: the cursor is the first line shown.
  cursor_.pos = action == Action::down || action == Action::page_down || action == Action::end ? cursor_.top + page_ - 1 : cursor_.top;
  return cursor_.act(action, static_cast<int64_t>(shown_.size()), page_);
}

void HelpPane::wheel(int rows) { cursor_.scroll(rows, static_cast<int64_t>(shown_.size()), page_); }

std::string HelpPane::position() const {
  return fmt::format("line {}/{}", cursor_.top + 1, shown_.size());
}

void NotBuiltPane::draw(Canvas& c, const Rect& area) {
  c.text(area.x + 1, area.y + 1, fmt::format("The {} pane is not built yet: {}", title_, what_), Role::muted, area.w - 2);
}

}  // namespace akview::tui
