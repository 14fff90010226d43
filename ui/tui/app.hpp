// The TUI shell: the screens (model list, opening, a model's panes, an error), the title bar, tabs
// and status bar, the prompt line, key and mouse dispatch through the key table, and the loop
// that draws a frame after each event or background result. Nothing here waits on the worker.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "ui/tui/canvas.hpp"
#include "ui/tui/help_pane.hpp"
#include "ui/tui/model_list.hpp"
#include "ui/tui/model_view.hpp"
#include "ui/tui/pane.hpp"
#include "ui/tui/terminal.hpp"
#include "ui/tui/worker.hpp"

namespace akview::tui {

inline constexpr int kMinWidth = 40, kMinHeight = 12;

struct AppOptions {
  std::string path;         // empty: the local stores
  std::string ref_path;     // akview A --ref B: B, opened beside each model (the Diff pane)
  bool test_sync = false;   // AKVIEW_TEST_SYNC: write the frame marker after every frame
};

class App : public PaneHost {
 public:
  explicit App(AppOptions options);
  ~App() override;
  // Runs until q or a quit signal; returns the exit code.
  int run(Terminal& terminal);

  // The pieces of the loop, also used off-screen by tests and the frame benchmark.
  void handle(const InputEvent& event);
  void apply_background_results();
  void draw(Canvas& canvas);
  // The frame drawn last is on the screen: a model's first frame starts its background work.
  void frame_shown();
  bool quit_requested() const { return quit_; }
  // Keys typed while the front pane fills (or the model opens) wait here; they are applied in order
  // once it can take them (after the background result that readies it).
  size_t queued_keys() const { return queued_keys_.size(); }
  ModelView* model_view() { return view_.get(); }

  // PaneHost
  void prompt(std::string label, std::string initial,
              std::function<void(const std::string&, PromptEvent)> on_event) override;
  void flash(std::string message) override { flash_ = std::move(message); }
  Worker& worker() override { return worker_; }

 private:
  enum class Screen { list, opening, model, error };
  struct Prompt {
    std::string label, text;
    std::function<void(const std::string&, PromptEvent)> on_event;
  };

  void start_open(std::string path);
  // For the worker to post: the error screen with `message`, unless open `gen` has been left since.
  std::function<void()> show_error(uint64_t gen, std::string message);
  void open_entry(const std::string& path);
  void back();
  void key(int32_t key);
  void apply_key(int32_t key);
  bool must_wait();   // the front pane cannot take keys yet
  void drain_keys();
  void mouse(const InputEvent& event);
  // An action of the key table's global context; `key` is the key that chose it.
  void global_action(Action action, int32_t key);
  bool help_in_front() const;   // the model's Help pane is in front
  Pane* front_pane();
  Rect pane_area(const Canvas& canvas) const;
  void draw_title(Canvas& c);
  void draw_tabs(Canvas& c);
  void draw_status(Canvas& c);
  void draw_message(Canvas& c, const Rect& area);

  AppOptions options_;
  Worker worker_;
  Screen screen_ = Screen::list;
  std::unique_ptr<ModelList> list_;
  std::unique_ptr<ModelView> view_;
  std::string view_path_;   // the path view_ was opened from (the list's entry)
  // Models left for the list, most recent last, kept whole (pane, cursor, sort, filter, folds,
  // Compute results) for when they are opened again; a few at most.
  std::vector<std::pair<std::string, std::unique_ptr<ModelView>>> parked_;
  size_t pane_before_help_ = 0;   // `?` and Esc on Help return to it
  std::deque<int32_t> queued_keys_;
  HelpPane help_;   // the help shown over the model list
  bool help_open_ = false;
  std::string opening_path_;
  size_t reopen_pane_ = 0;   // the pane to show again after R reloads
  std::string error_;
  std::optional<Prompt> prompt_;
  std::string flash_;
  bool quit_ = false;
  uint64_t generation_ = 0;   // bumped when a model is opened or left: stale open results are dropped
  std::vector<std::pair<int, int>> tab_spans_;   // x ranges of the tabs drawn last
  std::pair<int, int> title_size_{0, 0};         // x range of the model's size in the title drawn last
};

}   // namespace akview::tui
