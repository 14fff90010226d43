// Pane 7, Help: every binding of the key table, grouped by where it applies, each text wrapped at the
// pane's width beside its keys; and the panes that belong to a later issue, which say so in one line.
#pragma once

#include <string>
#include <vector>

#include "ui/tui/pane.hpp"

namespace akview::tui {

class HelpPane : public Pane {
 public:
  HelpPane();
  std::string_view title() const override { return "Help"; }
  Context context() const override { return Context::nav; }
  void draw(Canvas& canvas, const Rect& area) override;
  bool act(Action action, PaneHost& host) override;
  void wheel(int rows) override;
  std::string position() const override;

 private:
  struct Line {
    std::string keys, text;
    bool heading = false;
  };
  void layout(int width);

  std::vector<Line> lines_;
  std::vector<Line> shown_;   // lines_ wrapped at shown_width_: continuation lines have no keys
  int shown_width_ = -1;
  ListCursor cursor_;
  int page_ = 1;
};

class NotBuiltPane : public Pane {
 public:
  NotBuiltPane(std::string_view title, std::string_view what) : title_(title), what_(what) {}
  std::string_view title() const override { return title_; }
  Context context() const override { return Context::nav; }
  void draw(Canvas& canvas, const Rect& area) override;

 private:
  std::string_view title_, what_;
};

}  // namespace akview::tui
