// The Help pane, generated from the key table (help_pane.hpp).
#include "ui/tui/help_pane.hpp"

#include <fmt/format.h>

#include "ui/batch/explain_report.hpp"

namespace akview::tui {

HelpPane::HelpPane() {
  // Contexts in the order a user meets them (keys.hpp), each binding once, under its context.
  for (auto c = static_cast<uint8_t>(Context::global); c <= static_cast<uint8_t>(Context::prompt); ++c) {
    const auto ctx = static_cast<Context>(c);
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
}   // namespace

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
  view_.fit(static_cast<int64_t>(shown_.size()), area.h);
  const int keys_w = keys_width(area.w);
  for (int k = 0; k < view_.page; ++k) {
    int64_t i = view_.top() + k;
    if (i >= static_cast<int64_t>(shown_.size())) break;
    const Line& l = shown_[static_cast<size_t>(i)];
    const int y = area.y + k;
    if (l.heading) {
      c.text(area.x + 1, y, l.text, Role::header, area.w - 1);
      continue;
    }
    c.text(area.x + 3, y, l.keys, Role::status_key, keys_w);
    c.text(area.x + 4 + keys_w, y, l.text, Role::normal, area.w - keys_w - 4);
    if (search_.active()) {
      highlight_match(c, area.x + 3, y, keys_w, l.keys, search_.pattern());
      highlight_match(c, area.x + 4 + keys_w, y, area.w - keys_w - 4, l.text, search_.pattern());
    }
  }
}

Search::Target HelpPane::search_target() {
  Search::Target t;
  t.size = [this] { return static_cast<int64_t>(shown_.size()); };
  t.current = [this] { return view_.top(); };
  t.matches = [this](int64_t i, const Pattern& p) {
    const Line& l = shown_[static_cast<size_t>(i)];
    return p.matches(l.keys) || p.matches(l.text);
  };
  t.go = [this](int64_t i) { view_.show(i); };                          // the match becomes the first line shown
  t.version = [this] { return static_cast<uint64_t>(shown_width_); };   // the lines are wrapped anew at a new width
  return t;
}

bool HelpPane::act(Action action, PaneHost& host) {
  switch (action) {
    case Action::search: search_.open(host); return true;
    case Action::search_next:
    case Action::search_prev: search_.next(host, action == Action::search_next ? 1 : -1); return true;
    default: return view_.act(action, static_cast<int64_t>(shown_.size()));
  }
}

std::string HelpPane::state() const { return search_.status(); }

void HelpPane::wheel(int rows) { view_.wheel(rows, static_cast<int64_t>(shown_.size())); }

std::string HelpPane::position() const { return fmt::format("line {}/{}", view_.top() + 1, shown_.size()); }

}   // namespace akview::tui
