// What a pane is to the shell: it draws from its state into a rectangle of the canvas, takes the
// actions the key table maps to its context, and says where it is for the status bar. Panes never
// wait for long work: they submit jobs through the host's worker.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ui/tui/canvas.hpp"
#include "ui/tui/keys.hpp"
#include "ui/tui/lifeline.hpp"
#include "ui/tui/list_view.hpp"
#include "ui/tui/worker.hpp"

namespace akview::tui {

enum class PromptEvent { edit, accept, cancel };

// The shell's services for panes.
class PaneHost {
 public:
  virtual ~PaneHost() = default;
  // Opens the one-line prompt at the bottom (filter, search). `on_event` runs on every edit and once
  // more on Enter (accept) or Esc (cancel).
  virtual void prompt(std::string label, std::string initial,
                      std::function<void(const std::string& text, PromptEvent event)> on_event) = 0;
  // A short message in the status bar until the next key.
  virtual void flash(std::string message) = 0;
  virtual Worker& worker() = 0;
};

class Pane {
 public:
  virtual ~Pane() = default;
  virtual Context context() const = 0;   // the key-table context of its own bindings
  virtual void draw(Canvas& canvas, const Rect& area) = 0;
  // An action bound in the pane's context, or a navigation action; false when not handled (the
  // shell then tries the global bindings).
  virtual bool act(Action action, PaneHost& host) { return false; }
  // A left click or the wheel at (x, y) relative to the pane's rectangle.
  virtual void click(int x, int y, PaneHost& host) {}
  virtual void wheel(int rows) {}
  virtual std::string position() const { return {}; }   // status bar: "row 12/291"
  virtual std::string state() const { return {}; }      // status bar: "sort bytes ↓ · filter attn"
  virtual std::string hints() const { return {}; }      // status bar: "Enter detail  \\ filter"
  // Called before each frame on the UI thread (e.g. to ask the worker for what became visible).
  virtual void before_frame(PaneHost& host) {}
  // False while the pane fills from the worker and has nothing its keys could move over yet: the
  // shell then holds keys back and gives them to the pane, in order, once it is ready.
  virtual bool ready() const { return true; }
};

// One label/value line of a detail view (a tensor's fields, the selected model of the list).
struct DetailLine {
  std::string label;
  std::string value;
  Role role = Role::normal;
};
// Draws lines [first, first + h) at (x, y): labels muted in a column of `label_w`, values after it.
void draw_detail_lines(Canvas& c, int x, int y, int w, int h, int label_w, const std::vector<DetailLine>& lines,
                       int64_t first = 0);

}   // namespace akview::tui
