// The Help pane: every binding of the key table, grouped by where it applies, each text wrapped at the
// pane's width beside its keys.
#pragma once

#include <string>
#include <vector>

#include "ui/tui/pane.hpp"
#include "ui/tui/search.hpp"

namespace akview::tui {

class HelpPane : public Pane {
 public:
  HelpPane();
  Context context() const override { return Context::help; }
  void draw(Canvas& canvas, const Rect& area) override;
  bool act(Action action, PaneHost& host) override;
  void wheel(int rows) override;
  std::string position() const override;
  std::string state() const override;

 private:
  struct Line {
    std::string keys, text;
    bool heading = false;
  };
  void layout(int width);
  Search::Target search_target();

  std::vector<Line> lines_;
  std::vector<Line> shown_;   // lines_ wrapped at shown_width_: continuation lines have no keys
  int shown_width_ = -1;
  ScrollView view_;                  // the help scrolls by its first line
  Search search_{search_target()};   // `/` over the keys and their texts
};

}   // namespace akview::tui
