// A long value shown whole (text_viewer.hpp).
#include "ui/tui/text_viewer.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ui/tui/search.hpp"
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

void TextViewer::draw(Canvas& c, const Rect& area) {
  c.fill(area, Role::normal);
  if (area.w <= 0 || area.h <= 0) return;
  if (width_ != area.w) {
    // Keep the first line on screen on the same text after a resize: by its share of the lines.
    const double share = lines_.empty() ? 0.0 : static_cast<double>(cursor_.top) / static_cast<double>(lines_.size());
    lines_ = wrap_text(text_, area.w);
    width_ = area.w;
    cursor_.top = cursor_.pos = static_cast<int64_t>(share * static_cast<double>(lines_.size()));
  }
  c.fill(area.x, area.y, area.w, Role::header);
  c.text(area.x, area.y, fmt::format("{}  ({} lines · / search · Esc closes)", title_, lines_.size()), Role::header,
         area.w);
  page_ = std::max(1, area.h - 1);
  cursor_.clamp(static_cast<int64_t>(lines_.size()), page_);
  cursor_.pos = cursor_.top;
  for (int k = 0; k < page_; ++k) {
    const int64_t i = cursor_.top + k;
    if (i >= static_cast<int64_t>(lines_.size())) break;
    const std::string& line = lines_[static_cast<size_t>(i)];
    c.text(area.x, area.y + 1 + k, line, Role::string, area.w);
    if (!search_.empty()) highlight_match(c, area.x, area.y + 1 + k, area.w, line, search_);
  }
}

void TextViewer::show(int64_t line) {
  cursor_.top = cursor_.pos = line;
  cursor_.clamp(static_cast<int64_t>(lines_.size()), page_);
}

int64_t TextViewer::find(int64_t from, int dir) const {
  const int64_t n = static_cast<int64_t>(lines_.size());
  if (n == 0 || search_.empty()) return -1;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = ((from + (dir >= 0 ? k : -k)) % n + n) % n;
    if (find_ignore_case(lines_[static_cast<size_t>(i)], search_) != std::string_view::npos) return i;
  }
  return -1;
}

bool TextViewer::act(Action action, PaneHost& host) {
  const int64_t n = static_cast<int64_t>(lines_.size());
  switch (action) {   // the view scrolls by its first line
    case Action::up: show(cursor_.top - 1); return true;
    case Action::down: show(std::min(cursor_.top + 1, std::max<int64_t>(0, n - page_))); return true;
    case Action::page_up: show(cursor_.top - page_); return true;
    case Action::page_down: show(std::min(cursor_.top + page_, std::max<int64_t>(0, n - page_))); return true;
    case Action::home: show(0); return true;
    case Action::end: show(std::max<int64_t>(0, n - page_)); return true;
    case Action::search: {
      const int64_t start = cursor_.top;
      host.prompt("search", "", [this, start, &host](const std::string& text, PromptEvent ev) {
        search_ = ev == PromptEvent::cancel ? std::string() : lower_ascii(text);
        const int64_t at = find(start, 1);
        show(at >= 0 ? at : start);
        if (ev == PromptEvent::accept && at < 0 && !text.empty()) host.flash(fmt::format("no match for '{}'", text));
      });
      return true;
    }
    case Action::search_next:
    case Action::search_prev:
      step_plain_search(
          host, search_, cursor_.top, action == Action::search_next ? 1 : -1,
          [this](int64_t from, int dir) { return find(from, dir); }, [this](int64_t line) { show(line); });
      return true;
    default: return false;
  }
}

void TextViewer::wheel(int rows) {
  show(std::clamp<int64_t>(cursor_.top + rows, 0, std::max<int64_t>(0, static_cast<int64_t>(lines_.size()) - page_)));
}

std::string TextViewer::position() const {
  return fmt::format("line {}/{}", lines_.empty() ? 0 : cursor_.top + 1, lines_.size());
}

}   // namespace akview::tui
