// The only file that includes curses (ncursesw, STACK.md §5): newterm rather than initscr (no
// exit() on an unknown TERM), refuse terminals without cursor addressing, 256/8/no colours from the
// theme table, wide characters through cchar_t, xterm mouse, and getch with a timeout.
#include "ui/tui/terminal.hpp"

#include <unistd.h>
#include <clocale>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include <curses.h>
#include <term.h>

#include "ui/tui/keys.hpp"
#include "ui/tui/theme.hpp"

namespace akview::tui {
namespace {

volatile std::sig_atomic_t g_quit_signal = 0;
SCREEN* g_screen = nullptr;

void on_quit_signal(int sig) { g_quit_signal = sig; }

// What libraries write to stderr while the terminal is open (PoCL's compiler prints "N warnings
// generated." the first time it builds a kernel on some CPUs) would land in the middle of the
// screen and scroll it: while the TUI draws, fd 2 goes to an unnamed temporary file, and when the
// terminal closes its last 64 KiB are written to the real stderr.
struct StderrCapture {
  FILE* file = nullptr;
  int saved = -1;

  void begin() {
    if (file || !isatty(STDERR_FILENO)) return;
    FILE* f = std::tmpfile();
    if (!f) return;
    std::fflush(stderr);
    saved = dup(STDERR_FILENO);
    if (saved < 0 || dup2(fileno(f), STDERR_FILENO) < 0) {
      if (saved >= 0) close(saved);
      saved = -1;
      std::fclose(f);
      return;
    }
    file = f;
  }
  void end() {
    if (!file) return;
    std::fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    saved = -1;
    const off_t size = lseek(fileno(file), 0, SEEK_END);
    constexpr off_t kReplay = 64 * 1024;
    char buf[4096];
    for (off_t at = size > kReplay ? size - kReplay : 0; at < size;) {
      const ssize_t n = pread(fileno(file), buf, sizeof buf, at);
      if (n <= 0) break;
      if (write(STDERR_FILENO, buf, static_cast<size_t>(n)) < 0) break;
      at += n;
    }
    std::fclose(file);
    file = nullptr;
  }
};
StderrCapture g_stderr;

struct CursesKey {
  int curses;
  int32_t key;
};
const CursesKey kCursesKeys[] = {
    {KEY_UP, kKeyUp},
    {KEY_DOWN, kKeyDown},
    {KEY_LEFT, kKeyLeft},
    {KEY_RIGHT, kKeyRight},
    {KEY_PPAGE, kKeyPageUp},
    {KEY_NPAGE, kKeyPageDown},
    {KEY_HOME, kKeyHome},
    {KEY_END, kKeyEnd},
    {KEY_BTAB, kKeyBackTab},
    {KEY_F(1), kKeyF1},
    {KEY_DC, kKeyDelete},
    {KEY_ENTER, kKeyEnter},
    {KEY_BACKSPACE, kKeyBackspace},
    {KEY_A1, kKeyHome},
    {KEY_C1, kKeyEnd},
    {KEY_A3, kKeyPageUp},
    {KEY_C3, kKeyPageDown},
};

attr_t attrs_of(const Style& s, int colors) {
  attr_t a = s.bold ? A_BOLD : A_NORMAL;
  if (colors == 0) {
    if (s.reverse_mono) a |= A_REVERSE;
    if (s.underline_mono) a |= A_UNDERLINE;
  }
  return a;
}

}   // namespace

int quit_signal_received() { return g_quit_signal; }

void install_quit_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_quit_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

std::unique_ptr<Terminal> Terminal::open(bool color) {
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) return nullptr;
  const char* term = std::getenv("TERM");
  if (!term || !*term || std::string_view(term) == "dumb") return nullptr;
  std::setlocale(LC_ALL, "");
  SCREEN* screen = newterm(nullptr, stdout, stdin);
  if (!screen) return nullptr;
  set_term(screen);
  const char* cup = tigetstr(const_cast<char*>("cup"));
  if (!cup || cup == reinterpret_cast<char*>(-1)) {
    endwin();
    delscreen(screen);
    return nullptr;
  }
  g_screen = screen;
  g_stderr.begin();
  std::unique_ptr<Terminal> t(new Terminal());
  cbreak();   // Ctrl-C stays SIGINT: the handler quits cleanly
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  curs_set(0);
  set_escdelay(25);
  mousemask(BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, nullptr);
  mouseinterval(0);
  if (color && has_colors()) {
    start_color();
    use_default_colors();
    t->colors_ = COLORS >= 256 ? 256 : COLORS >= 8 ? 8 : 0;
  }
  if (t->colors_ > 0) {
    for (const Style& s : theme()) {
      int fg = t->colors_ == 256 ? s.fg256 : s.fg8, bg = t->colors_ == 256 ? s.bg256 : s.bg8;
      init_pair(static_cast<short>(static_cast<int>(s.role) + 1), static_cast<short>(fg), static_cast<short>(bg));
    }
  }
  return t;
}

Terminal::~Terminal() {
  endwin();
  if (g_screen) delscreen(g_screen);
  g_screen = nullptr;
  g_stderr.end();
}

int Terminal::width() const { return COLS; }
int Terminal::height() const { return LINES; }

InputEvent Terminal::read(int timeout_ms) {
  InputEvent ev;
  if (g_quit_signal) {
    ev.kind = InputEvent::Kind::quit_signal;
    return ev;
  }
  timeout(timeout_ms);
  wint_t ch = 0;
  int r = wget_wch(stdscr, &ch);
  if (g_quit_signal) {
    ev.kind = InputEvent::Kind::quit_signal;
    return ev;
  }
  if (r == ERR) return ev;
  if (r == KEY_CODE_YES) {
    if (ch == KEY_RESIZE) {
      clearok(curscr, TRUE);   // repaint whole: the terminal may have cropped what it showed
      ev.kind = InputEvent::Kind::resize;
      return ev;
    }
    if (ch == KEY_MOUSE) {
      MEVENT m;
      ev.kind = InputEvent::Kind::mouse;
      if (getmouse(&m) == OK) {
        ev.x = m.x;
        ev.y = m.y;
        // A click acts on its release (or on BUTTON1_CLICKED when ncurses merges the pair): ncurses
        // may swallow the press report of a quick click, never the release.
        ev.mouse = (m.bstate & (BUTTON1_RELEASED | BUTTON1_CLICKED)) ? InputEvent::Mouse::release
                   : (m.bstate & BUTTON1_PRESSED)                    ? InputEvent::Mouse::press
                   : (m.bstate & BUTTON4_PRESSED)                    ? InputEvent::Mouse::wheel_up
                   : (m.bstate & BUTTON5_PRESSED)                    ? InputEvent::Mouse::wheel_down
                                                                     : InputEvent::Mouse::other;
      }
      return ev;
    }
    ev.kind = InputEvent::Kind::key;
    for (const CursesKey& k : kCursesKeys)
      if (k.curses == static_cast<int>(ch)) ev.key = k.key;
    return ev;
  }
  ev.kind = InputEvent::Kind::key;
  ev.key = ch == '\r' ? kKeyEnter : ch == 8 ? kKeyBackspace : static_cast<int32_t>(ch);
  return ev;
}

void Terminal::present(const Canvas& canvas) {
  const auto styles = theme();
  const int h = std::min(canvas.height(), LINES), w = std::min(canvas.width(), COLS);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const Cell& c = canvas.at(x, y);
      if (c.continuation) continue;
      const Style& s = styles[static_cast<size_t>(c.role)];
      wchar_t text[2] = {static_cast<wchar_t>(c.ch), 0};
      cchar_t cc;
      short pair = colors_ > 0 ? static_cast<short>(static_cast<int>(c.role) + 1) : 0;
      setcchar(&cc, text, attrs_of(s, colors_), pair, nullptr);
      mvadd_wch(y, x, &cc);
    }
  }
  wnoutrefresh(stdscr);
  doupdate();
}

void Terminal::write_raw(std::string_view bytes) {
  fflush(stdout);
  while (!bytes.empty()) {
    ssize_t n = ::write(STDOUT_FILENO, bytes.data(), bytes.size());
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

}   // namespace akview::tui
