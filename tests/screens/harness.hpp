// The terminal test harness: runs a program on a real pty (forkpty), feeds its output to libvterm,
// sends keys and mouse events through libvterm, and waits for the app's frame markers (STACK.md §4).
//
// The test protocol the app implements when AKVIEW_TEST_SYNC=1:
//  * after every completed frame (after refresh()/doupdate() returns, before blocking in getch()) it
//    writes  ESC ] 7777 ; frame=N;keys=K;busy=B BEL  where N counts frames from 1, K is the number of
//    input events consumed so far and B the number of background jobs running or queued (0 = idle).
//    An optional field size=COLSxROWS (the size the frame was drawn at) is honoured when present: a
//    settle then also requires it to equal the terminal's size, which closes the one race left after
//    a burst of resizes (a frame drawn at the previous size whose marker arrives after the resize).
//  * What counts as one input event (K):
//      - one key: send_key() (Esc alone is one event; a modified key is one event);
//      - one character: send_text() sends one event per Unicode character;
//      - one click: click() sends a press and a release report; the pair counts as ONE event. The app
//        counts the button release (ncurses BUTTON1_RELEASED, or BUTTON1_CLICKED when ncurses merges
//        the pair), never the press; with mouseinterval(0) ncurses delivers both reports separately;
//      - one wheel step: wheel() sends one press report of button 4 or 5 (terminals send no release
//        for the wheel) = ONE event;
//      - motion reports and resizes are not events.
//  * Mouse reports are produced by libvterm's vterm_mouse_move/vterm_mouse_button, so they use the
//    encoding the app asked for: SGR (ESC [ < b ; x ; y M/m, 1-based) when it enabled mode 1006, as
//    ncurses does for xterm-256color. click()/wheel() fail when the app has not enabled mouse reporting.
//    libvterm 0.1.4 applies only the first mode of a DEC private mode set/reset with several modes, and
//    ncurses enables the mouse with ESC [ ? 1006 ; 1000 h; the harness therefore splits such sequences
//    into one per mode before libvterm sees them (output_bytes() keeps the bytes as the app wrote them).
//
// The child runs with AKVIEW_TEST_SYNC=1, TERM=xterm-256color, LANG=LC_ALL=C.UTF-8, LINES, COLUMNS and
// NO_COLOR unset, HOME set to a fresh temp dir (home_dir()), in the working directory given to start()
// (the temp HOME when none is given); the overrides in start() apply last ({"NO_COLOR", "1"},
// {"TERM", "xterm"}, {"X", std::nullopt} to unset).
//
// "Settled" = a marker arrived with keys >= the events sent so far, busy == 0, frame > the last frame
// seen before the latest resize, and no further output is pending: the pty is drained without blocking
// after it, and when the drain brings bytes after that marker (the app began another frame, e.g. a second
// KEY_RESIZE after a burst of resizes) the wait goes on to the marker that ends them. Waits never sleep for idle time.
// A wait that runs out (10 s, or AKVIEW_SCREENS_TIMEOUT_S) throws TerminalError naming what it waited for and the
// screen text; GoogleTest reports the exception as the test's failure.
//
// A test, in short:
//   Terminal term;
//   term.start({AKVIEW_BINARY, "model.gguf"}, {120, 40}, {}, fixture_dir);  // cwd: paths stay relative
//   term.settle();                                  // the first frame
//   term.press("Down");                             // send_key + settle
//   EXPECT_NE(term.screen().find_row("blk.0"), -1);
//   EXPECT_TRUE(compare_golden(term.screen(), "tensors_120x40"));
//   term.resize(80, 24);
//   term.settle();
//   term.send_key("q");
//   EXPECT_EQ(term.wait_exit(), 0);
//   EXPECT_FALSE(term.alt_screen_active());
// Send Esc with press() (or settle before the next key): an Esc followed at once by a key reaches the
// app as one Alt-key event while the harness counted two.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/types.h>
#include <vterm.h>

#include "tests/screens/screen.hpp"

namespace akview::testing {

class TempDir;

struct TerminalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct FrameMarker {
  long frame = 0;   // 0: no marker seen yet
  long keys = 0;
  long busy = 0;
  int size_cols = -1, size_rows = -1;   // the optional size= field; -1 when absent
};

struct TermSize {
  int cols = 80;
  int rows = 24;
};

// The sizes every golden screen is taken at, and a size's name in golden file names ("120x40").
inline constexpr TermSize kGoldenSizes[] = {{120, 40}, {80, 24}, {40, 12}};
inline std::string size_name(TermSize s) { return std::to_string(s.cols) + "x" + std::to_string(s.rows); }

// Environment overrides for the child: a value sets the variable, std::nullopt unsets it.
using EnvOverrides = std::vector<std::pair<std::string, std::optional<std::string>>>;

enum class Wheel { kUp, kDown };

class Terminal {
 public:
  Terminal();
  ~Terminal();   // kills (SIGKILL) and reaps a child that is still running; removes the temp HOME
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  // Starts argv[0] (a path, or a name looked up in PATH) on a pty of `size`. Throws TerminalError.
  void start(const std::vector<std::string>& argv, TermSize size = {}, const EnvOverrides& env = {},
             const std::filesystem::path& cwd = {});

  // Input. Each call is one event, except send_text (one per character).
  void send_key(VTermKey key, VTermModifier mod = VTERM_MOD_NONE);
  // A named key: "Up" "Down" "Left" "Right" "Enter" "Tab" "Backspace" "Esc" "Home" "End" "PageUp"
  // "PageDown" "Insert" "Delete" "F1".."F12", or one character ("q", "/", "é"); prefixes "C-", "M-"
  // and "S-" add modifiers ("C-c", "S-Tab"). Throws TerminalError on an unknown name.
  void send_key(std::string_view name);
  void send_text(std::string_view utf8);
  void click(int col, int row, int button = 1);   // 0-based cell; press + release = one event
  void wheel(int col, int row, Wheel direction);
  // Raw bytes straight to the app, counted as `n_events` events (for sequences libvterm cannot make).
  void send_raw(std::string_view bytes, int n_events);
  // TIOCSWINSZ on the pty (the kernel sends SIGWINCH) plus vterm_set_size. Not an event.
  void resize(int cols, int rows);

  // Waits until settled (see above) and returns the last marker. Throws TerminalError on timeout.
  FrameMarker settle();
  FrameMarker settle(std::chrono::milliseconds timeout);
  // Conveniences: send, then settle.
  FrameMarker press(std::string_view key_name);
  FrameMarker type(std::string_view utf8);

  // Keeps reading output until pred(screen) holds (true) or the timeout passes (false).
  bool wait_until(const std::function<bool(const Screen&)>& pred, std::chrono::milliseconds timeout);
  bool wait_for_text(const std::string& needle, std::chrono::milliseconds timeout);

  // The screen as libvterm shows it now (after the reads done so far).
  Screen screen() const;
  std::vector<std::string> screen_text() const { return screen().text_rows(); }
  Cell cell(int row, int col) const;
  TermSize size() const { return size_; }

  // Reads until the child exits and the pty is closed; returns its exit code (128 + signal when a
  // signal ended it). Throws TerminalError on timeout.
  int wait_exit(std::chrono::milliseconds timeout);
  int wait_exit();
  bool running() const { return pid_ > 0 && !exit_code_; }

  // The terminal's restoration: libvterm's alternate-screen state, and the raw bytes.
  bool alt_screen_used() const { return alt_screen_used_; }
  bool alt_screen_active() const { return alt_screen_active_; }
  const std::string& output_bytes() const { return output_; }   // all bytes the child wrote
  // The bytes after the last "leave the alternate screen" sequence (ESC[?1049l, ?1047l or ?47l);
  // std::nullopt when the app never left it.
  std::optional<std::string> output_after_alt_screen() const;

  FrameMarker last_marker() const { return marker_; }
  long markers_seen() const { return markers_seen_; }
  long events_sent() const { return events_sent_; }
  int mouse_mode() const { return mouse_mode_; }   // libvterm's VTERM_PROP_MOUSE: 0 off, 1 click, 2 drag, 3 move
  const std::filesystem::path& home_dir() const { return home_; }

  // The wait limit: 10 s, or AKVIEW_SCREENS_TIMEOUT_S seconds (for slow sanitizer builds).
  static std::chrono::milliseconds default_timeout();

 private:
  bool pump(int timeout_ms);   // one poll+read; true when bytes arrived
  void drain();                // reads whatever is pending, without blocking
  void feed(const char* bytes, size_t n);
  void scan_markers();   // frame markers in output_ from marker_scan_ on
  bool settled() const;
  void require_running(const char* what) const;
  [[noreturn]] void fail(const std::string& what) const;
  void write_to_child(const char* bytes, size_t n);

  static int on_osc(const char* command, size_t len, void* user);
  static int on_settermprop(VTermProp prop, VTermValue* val, void* user);
  static void on_output(const char* bytes, size_t len, void* user);

  VTerm* vt_ = nullptr;
  VTermScreen* vscreen_ = nullptr;
  int master_fd_ = -1;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  bool pty_closed_ = false;
  TermSize size_;
  std::unique_ptr<TempDir> home_dir_;
  std::filesystem::path home_;
  std::string output_;
  std::string pending_dec_mode_;   // an unfinished ESC [ ? ... sequence held back from libvterm
  FrameMarker marker_;
  long markers_seen_ = 0;
  size_t marker_end_ = 0;    // offset in output_ just past the last marker
  size_t marker_scan_ = 0;   // where the next marker scan starts in output_
  long events_sent_ = 0;
  long frame_floor_ = 0;   // a settle after a resize needs a frame above this
  bool alt_screen_used_ = false;
  bool alt_screen_active_ = false;
  int mouse_mode_ = 0;
};

}   // namespace akview::testing
