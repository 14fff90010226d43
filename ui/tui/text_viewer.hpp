// A long value shown whole: a header string (a chat template, a JSON document) wrapped at the width
// of the pane, between words where a line has a space to break at, scrolled by its first visible
// line, with `/` searching its lines (matches highlighted) and n/N going on. The Header pane opens it
// with Enter on a value wider than its column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ui/tui/canvas.hpp"
#include "ui/tui/keys.hpp"
#include "ui/tui/pane.hpp"

namespace akview::tui {

// `text` (escaped for the terminal) cut into lines of at most `width` columns: at each '\n', and
// where a line is wider, after its last space that leaves the line at least half full, else at the width.
std::vector<std::string> wrap_text(std::string_view text, int width);

class TextViewer {
 public:
  TextViewer(std::string title, std::string text) : title_(std::move(title)), text_(std::move(text)) {}

  void draw(Canvas& canvas, const Rect& area);
  // Scrolling, search; false for what it does not take (the pane closes it on back).
  bool act(Action action, PaneHost& host);
  void wheel(int rows);
  std::string position() const;
  const std::string& search() const { return search_; }
  // For tests: the first line on screen and the lines at the last width drawn.
  int64_t top() const { return cursor_.top; }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  int64_t find(int64_t from, int dir) const;   // the next line holding search_, wrapping; -1 when none
  void show(int64_t line);

  std::string title_, text_;
  std::vector<std::string> lines_;
  int width_ = -1;
  int page_ = 1;
  ListCursor cursor_;    // pos is kept at top: the view scrolls, it has no row cursor
  std::string search_;   // lower case
};

}   // namespace akview::tui
