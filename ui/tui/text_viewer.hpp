// A long value shown whole: its lines (a header string cut at its line breaks, or a GGUF array one
// element a line) each wrapped at the pane's width between words, scrolled by screen row. Lines are
// asked for only as they come on screen (a 150,000-token vocabulary opens at once, reading the
// elements of one screen), except by a search. `/` is the one search of every list (search.hpp):
// the view goes to the first matching line as the user types, matches are highlighted, n/N go on,
// and the status bar says "match k/N". The Header pane opens it with Enter on a value wider than its
// column or on a GGUF array.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ui/tui/canvas.hpp"
#include "ui/tui/keys.hpp"
#include "ui/tui/pane.hpp"
#include "ui/tui/search.hpp"

namespace akview::tui {

// `text` (escaped for the terminal) cut into lines of at most `width` columns: at each '\n', and
// where a line is wider, after its last space that leaves the line at least half full, else at the width.
std::vector<std::string> wrap_text(std::string_view text, int width);

class TextViewer {
 public:
  struct Source {
    uint64_t count = 0;
    std::function<std::string(uint64_t line)> line;   // line `line`'s text, unescaped, without '\n'
    bool elements = false;   // an array: "element k of N" in the status bar, "elements" in the title
  };
  TextViewer(std::string title, Source source);
  // A string: its lines are those between its line breaks.
  TextViewer(std::string title, std::string text);
  TextViewer(const TextViewer&) = delete;   // the search holds `this`
  TextViewer& operator=(const TextViewer&) = delete;

  void draw(Canvas& canvas, const Rect& area);
  // Scrolling, search; false for what it does not take (the pane closes it on back).
  bool act(Action action, PaneHost& host);
  void wheel(int rows);
  std::string position() const;
  std::string state() const { return search_.status(); }   // "match k/N 'term'" while a term is kept
  // Opens at `line` (the element the cursor was on).
  void go_to(uint64_t line);

  // For tests: the lines, the first line on screen and how far into its wrapped rows the screen starts.
  uint64_t line_count() const { return source_.count; }
  uint64_t top_line() const { return top_.line; }
  int top_row() const { return top_.row; }

 private:
  struct Spot {   // a screen row: a line and one of its wrapped rows
    uint64_t line = 0;
    int row = 0;
    bool operator<(const Spot& o) const { return line != o.line ? line < o.line : row < o.row; }
  };
  const std::vector<std::string>& wrapped(uint64_t line);   // at the width drawn last
  int height(uint64_t line) { return static_cast<int>(wrapped(line).size()); }
  Spot step(Spot from, int64_t rows);
  Spot last_top();   // the top that shows the last page full
  void scroll_to(Spot s);
  Search::Target search_target();

  std::string title_;
  std::string text_;             // a string's text (its lines are views into it)
  std::vector<size_t> starts_;   // where each of its lines begins
  Source source_;
  int width_ = -1;
  int page_ = 1;
  Spot top_;
  uint64_t current_ = 0;   // the line the search went to, else the first on screen (for "match k/N")
  std::unordered_map<uint64_t, std::vector<std::string>> wrap_cache_;
  bool last_top_known_ = false;
  Spot last_top_;
  Search search_{search_target()};
};

}   // namespace akview::tui
