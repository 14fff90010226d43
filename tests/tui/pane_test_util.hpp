// Helpers for the pane tests: a PaneHost whose prompt the test types into, drawing a pane into an
// off-screen canvas to read its rows back, and a model opened into a session.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "ui/tui/canvas.hpp"
#include "ui/tui/pane.hpp"
#include "ui/tui/session.hpp"

namespace akview::testing {

class FakeHost : public tui::PaneHost {
 public:
  void prompt(std::string label, std::string initial,
              std::function<void(const std::string&, tui::PromptEvent)> on_event) override {
    label_ = std::move(label);
    text_ = std::move(initial);
    on_event_ = std::move(on_event);
  }
  void flash(std::string message) override { flashes.push_back(std::move(message)); }
  tui::Worker& worker() override {
    if (!worker_) worker_ = std::make_unique<tui::Worker>();
    return *worker_;
  }

  bool prompting() const { return static_cast<bool>(on_event_); }
  const std::string& label() const { return label_; }
  // Types `text` a character at a time (an edit event per character), as the shell's prompt does.
  void type(std::string_view text) {
    for (char c : text) {
      text_ += c;
      on_event_(text_, tui::PromptEvent::edit);
    }
  }
  void erase_all() {
    text_.clear();
    on_event_(text_, tui::PromptEvent::edit);
  }
  void accept() { finish(tui::PromptEvent::accept); }
  void cancel() { finish(tui::PromptEvent::cancel); }

  std::vector<std::string> flashes;

 private:
  void finish(tui::PromptEvent event) {
    auto callback = std::move(on_event_);
    on_event_ = nullptr;
    callback(text_, event);
  }
  std::string label_, text_;
  std::function<void(const std::string&, tui::PromptEvent)> on_event_;
  std::unique_ptr<tui::Worker> worker_;
};

inline tui::Canvas draw_pane(tui::Pane& pane, FakeHost& host, int w, int h) {
  tui::Canvas canvas(w, h);
  pane.before_frame(host);
  pane.draw(canvas, tui::Rect{0, 0, w, h});
  return canvas;
}

inline std::string screen_text(const tui::Canvas& canvas) {
  std::string out;
  for (int y = 0; y < canvas.height(); ++y) out += canvas.row_text(y) + "\n";
  return out;
}

// The first row containing every one of `parts`, or -1.
inline int find_row(const tui::Canvas& canvas, std::initializer_list<std::string_view> parts) {
  for (int y = 0; y < canvas.height(); ++y) {
    const std::string row = canvas.row_text(y);
    bool all = true;
    for (std::string_view p : parts) all = all && row.find(p) != std::string::npos;
    if (all) return y;
  }
  return -1;
}

inline bool row_has_role(const tui::Canvas& canvas, int y, tui::Role role) {
  for (int x = 0; x < canvas.width(); ++x)
    if (canvas.at(x, y).role == role) return true;
  return false;
}

// The model at `path` opened into a session as the view opens it (a failure fails the test).
inline std::shared_ptr<tui::ModelSession> open_session(const std::string& path) {
  auto model = open_model(path);
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().to_string());
  return tui::make_session(std::move(*model));
}

}   // namespace akview::testing
