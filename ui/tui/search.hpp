// One search for every list in the TUI (the model list, Tensors, Header, Mapping): `/` opens the
// same prompt, the cursor moves to the first match as the user types (from where the search
// started), a pattern that matches nothing or does not compile says so on the prompt line, Enter
// keeps the term for n/N, Esc returns to where the search started, and the status bar says
// "match k/N". The pane says what its items are through a Target.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ui/tui/pane.hpp"
#include "ui/tui/text_search.hpp"

namespace akview::tui {

inline constexpr std::string_view kSearchPrompt = "search (text or regex; Enter keeps it for n/N)";

class Search {
 public:
  struct Target {
    std::function<int64_t()> size;      // items searched, [0, size)
    std::function<int64_t()> current;   // the item under the cursor (-1: none)
    std::function<bool(int64_t item, const Pattern&)> matches;
    std::function<void(int64_t item)> go;   // moves the cursor onto the item
    std::function<uint64_t()> version;      // changes when the items do (optional)
    int64_t live_regex_max = 200'000;       // a regex over more items waits for Enter
  };

  explicit Search(Target target) : target_(std::move(target)) {}
  // `/`: opens the prompt.
  void open(PaneHost& host);
  // n (dir 1) and N (dir -1): the next match after the cursor, wrapping.
  void next(PaneHost& host, int dir);
  // The term kept for n/N ("" when none), as a pattern for highlighting.
  const Pattern& pattern() const { return pattern_; }
  bool active() const { return !pattern_.empty() && pattern_.valid(); }
  // "match 3/12 'attn'", "12 matches 'attn'", "no match 'xyz'", or "" without a term.
  std::string status() const;

 private:
  int64_t find_from(int64_t from, int dir) const;
  const std::vector<int64_t>& matches() const;   // every matching item, counted once per term and version

  Target target_;
  Pattern pattern_;
  mutable std::vector<int64_t> matches_;
  mutable std::string counted_term_;
  mutable uint64_t counted_version_ = 0;
  mutable int64_t counted_size_ = -1;
};

// n (dir 1) and N (dir -1) in a view with its own plain-text search (Layout's region names, a long
// value's lines): `find(from, dir)` is the next line holding `term` from `from` (-1 when none), `go`
// moves there; no term or no match is flashed.
void step_plain_search(PaneHost& host, const std::string& term, int64_t current, int dir,
                       const std::function<int64_t(int64_t from, int dir)>& find,
                       const std::function<void(int64_t)>& go);

}   // namespace akview::tui
