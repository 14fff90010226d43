// The terminal: the one place that talks to curses (terminal.cpp). It sets the terminal up and
// restores it, turns curses input into akview's key codes and mouse events, and shows a canvas.
#pragma once

#include <memory>
#include <string_view>

#include "ui/tui/canvas.hpp"

namespace akview::tui {

struct InputEvent {
  enum class Kind { none, key, mouse, resize, quit_signal } kind = Kind::none;
  int32_t key = 0;   // Key code (keys.hpp) for Kind::key
  enum class Mouse { press, release, wheel_up, wheel_down, other } mouse = Mouse::other;
  int x = 0, y = 0;   // cell of a mouse event
};

class Terminal {
 public:
  // A terminal when stdin and stdout are terminals and TERM can address the cursor; nullptr
  // otherwise (then akview prints batch output). `color`: false for --no-color / NO_COLOR.
  static std::unique_ptr<Terminal> open(bool color);
  ~Terminal();   // restores the terminal (also when unwinding after an error)
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  int width() const;
  int height() const;
  int colors() const { return colors_; }   // 256, 8 or 0
  // Waits up to `timeout_ms` for input (the timeout also covers curses' SIGWINCH race, STACK.md §4).
  InputEvent read(int timeout_ms);
  void present(const Canvas& canvas);
  // Bytes written straight to the terminal after a frame (the test-mode frame marker).
  void write_raw(std::string_view bytes);

 private:
  Terminal() = default;
  int colors_ = 0;
};

// Installs SIGINT/SIGTERM/SIGHUP handlers that ask the TUI to quit cleanly (read() returns
// quit_signal), so the terminal is restored on every way out.
void install_quit_signals();
// The signal that ended the TUI (SIGINT, SIGTERM, SIGHUP), 0 when none came: the caller exits with
// 128 + it, as a shell reports a process a signal ended.
int quit_signal_received();

}   // namespace akview::tui
