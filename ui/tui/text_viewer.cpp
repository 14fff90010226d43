// A long value shown whole (text_viewer.hpp).
#include "ui/tui/text_viewer.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ui/tui/text_search.hpp"

namespace akview::tui {

std::vector<std::string> wrap_text(std::string_view text, int width) {
  std::vector<std::string> out;
  width = std::max(width, 4);
  std::vector<Glyph> glyphs;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    to_glyphs(line, glyphs);
    size_t at = 0;
    do {
      // As many glyphs as fit; then back to the last space if that keeps half the width.
      size_t end = at;
      int used = 0;
      while (end < glyphs.size() && used + glyphs[end].width <= width) used += glyphs[end++].width;
      if (end < glyphs.size()) {
        size_t space = end;
        while (space > at && glyphs[space - 1].ch != U' ') --space;
        int kept = 0;
        for (size_t k = at; k < space; ++k) kept += glyphs[k].width;
        if (space > at && kept >= width / 2) end = space;
      }
      if (end == at && at < glyphs.size()) end = at + 1;   // a glyph wider than the width
      std::string piece;
      for (size_t k = at; k < end; ++k) append_utf8(piece, glyphs[k].ch);
      out.push_back(std::move(piece));
      at = end;
    } while (at < glyphs.size());
    if (nl == text.size()) break;
    start = nl + 1;
  }
  return out;
}

TextViewer::TextViewer(std::string title, Source source) : title_(std::move(title)), source_(std::move(source)) {}

TextViewer::TextViewer(std::string title, std::string text) : title_(std::move(title)), text_(std::move(text)) {
  starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') starts_.push_back(i + 1);
  if (starts_.size() > 1 && starts_.back() == text_.size())
    starts_.pop_back();   // a final line break ends the last line
  source_.count = starts_.size();
  source_.line = [this](uint64_t k) {
    const size_t begin = starts_[k];
    const size_t end = k + 1 < starts_.size() ? starts_[k + 1] - 1 : text_.size();
    return text_.substr(begin, end - begin);
  };
}

const std::vector<std::string>& TextViewer::wrapped(uint64_t line) {
  auto it = wrap_cache_.find(line);
  if (it != wrap_cache_.end()) return it->second;
  if (wrap_cache_.size() >= 4096) wrap_cache_.clear();   // what scrolled by is wrapped again if it comes back
  std::vector<std::string> rows = wrap_text(source_.line(line), std::max(width_, 4));
  if (rows.empty()) rows.emplace_back();
  return wrap_cache_.emplace(line, std::move(rows)).first->second;
}

TextViewer::Spot TextViewer::step(Spot s, int64_t rows) {
  if (source_.count == 0) return {};
  for (; rows > 0; --rows) {
    if (s.row + 1 < height(s.line)) ++s.row;
    else if (s.line + 1 < source_.count) s = {s.line + 1, 0};
    else break;
  }
  for (; rows < 0; ++rows) {
    if (s.row > 0) --s.row;
    else if (s.line > 0) s = {s.line - 1, height(s.line - 1) - 1};
    else break;
  }
  return s;
}

TextViewer::Spot TextViewer::last_top() {
  if (!last_top_known_) {
    last_top_ = source_.count == 0 ? Spot{} : Spot{source_.count - 1, height(source_.count - 1) - 1};
    last_top_ = step(last_top_, -(page_ - 1));
    last_top_known_ = true;
  }
  return last_top_;
}

void TextViewer::scroll_to(Spot s) {
  if (source_.count == 0) {
    top_ = {};
    return;
  }
  s.line = std::min(s.line, source_.count - 1);
  s.row = std::clamp(s.row, 0, height(s.line) - 1);
  top_ = std::min(s, last_top());
  current_ = top_.line;
}

void TextViewer::go_to(uint64_t line) {
  scroll_to({line, 0});
  current_ = std::min(line, source_.count ? source_.count - 1 : 0);
}

void TextViewer::draw(Canvas& c, const Rect& area) {
  c.fill(area, Role::normal);
  if (area.w <= 0 || area.h <= 0) return;
  const int page = std::max(1, area.h - 1);
  if (width_ != area.w || page != page_) {
    if (width_ != area.w) wrap_cache_.clear();   // the first line on screen stays first
    width_ = area.w;
    page_ = page;
    last_top_known_ = false;
    const uint64_t current = current_;
    scroll_to({top_.line, top_.row});
    current_ = current;
  }
  c.fill(area.x, area.y, area.w, Role::header);
  c.text(area.x, area.y,
         fmt::format("{}  ({} {} · / search · Esc closes)", title_, source_.count,
                     source_.elements ? "elements" : "lines"),
         Role::header, area.w);
  Spot s = top_;
  for (int k = 0; k < page_ && s.line < source_.count;) {
    const std::vector<std::string>& rows = wrapped(s.line);
    for (int r = s.row; r < static_cast<int>(rows.size()) && k < page_; ++r, ++k) {
      const int y = area.y + 1 + k;
      c.text(area.x, y, rows[static_cast<size_t>(r)], Role::string, area.w);
      if (search_.active()) highlight_match(c, area.x, y, area.w, rows[static_cast<size_t>(r)], search_.pattern());
    }
    s = {s.line + 1, 0};
  }
}

Search::Target TextViewer::search_target() {
  Search::Target t;
  t.size = [this] { return static_cast<int64_t>(source_.count); };
  t.current = [this] { return source_.count ? static_cast<int64_t>(current_) : -1; };
  t.matches = [this](int64_t i, const Pattern& p) { return p.matches(source_.line(static_cast<uint64_t>(i))); };
  t.go = [this](int64_t i) { go_to(static_cast<uint64_t>(i)); };
  return t;
}

bool TextViewer::act(Action action, PaneHost& host) {
  switch (action) {   // the view scrolls by screen rows
    case Action::up: scroll_to(step(top_, -1)); return true;
    case Action::down: scroll_to(step(top_, 1)); return true;
    case Action::page_up: scroll_to(step(top_, -page_)); return true;
    case Action::page_down: scroll_to(step(top_, page_)); return true;
    case Action::home: scroll_to({}); return true;
    case Action::end: scroll_to(last_top()); return true;
    case Action::search: search_.open(host); return true;
    case Action::search_next:
    case Action::search_prev: search_.next(host, action == Action::search_next ? 1 : -1); return true;
    default: return false;
  }
}

void TextViewer::wheel(int rows) { scroll_to(step(top_, rows)); }

std::string TextViewer::position() const {
  if (source_.elements) return fmt::format("[{}] of {}", top_.line, source_.count);
  return fmt::format("line {}/{}", source_.count ? top_.line + 1 : 0, source_.count);
}

}   // namespace akview::tui
