// A tiny ncursesw app for the harness self-tests: the same elements and the same test protocol as
// akview's TUI (title bar, coloured list with a selected row, a wide CJK string, a sparkline, a status
// bar; frame markers; KEY_RESIZE with timeout(100); mouse clicks and wheel; a simulated busy job).
// Keys: Down/j, Up/k move; b = busy for 300 ms; q quits with exit code 0.
// FIXTURE_MARKER_SIZE=1 adds the optional size=COLSxROWS field to the marker.
#include <algorithm>
#include <chrono>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <string>

#include <curses.h>
#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;

struct Item {
  const char* name;
  const char* dtype;
  const char* shape;
};

constexpr Item kItems[] = {
    {"token_embd.weight", "Q4_0", "[4096, 32000]"},  {"blk.0.attn_q.weight", "Q4_K", "[4096, 4096]"},
    {"blk.0.attn_k.weight", "Q4_K", "[4096, 1024]"}, {"blk.0.ffn_up.weight", "Q6_K", "[4096, 14336]"},
    {"blk.0.attn_norm.weight", "F32", "[4096]"},     {"output.weight", "Q8_0", "[4096, 32000]"},
};
constexpr int kItemCount = static_cast<int>(sizeof kItems / sizeof kItems[0]);
constexpr int kListTop = 2;   // screen row of the first item

enum Pair : short { kTitle = 1, kNormal, kSelected, kDtype, kSpark, kStatus };

struct State {
  int selected = 0;
  long frame = 0;
  long keys = 0;
  bool busy = false;
  Clock::time_point busy_until;
  bool sync = false;
  bool marker_size = false;
};

void init_colors() {
  start_color();
  use_default_colors();
  const bool rich = COLORS >= 256;
  init_pair(kTitle, rich ? 231 : COLOR_WHITE, rich ? 24 : COLOR_BLUE);
  init_pair(kNormal, -1, -1);
  init_pair(kSelected, rich ? 16 : COLOR_BLACK, rich ? 45 : COLOR_CYAN);
  init_pair(kDtype, rich ? 141 : COLOR_MAGENTA, -1);
  init_pair(kSpark, rich ? 34 : COLOR_GREEN, -1);
  init_pair(kStatus, rich ? 252 : COLOR_WHITE, rich ? 238 : COLOR_BLACK);
}

void fill_row(int row, short pair, attr_t attrs) {
  attrset(COLOR_PAIR(pair) | attrs);
  mvhline(row, 0, ' ', COLS);
}

void draw(State& st) {
  // The size this frame is drawn at. refresh() may itself notice a SIGWINCH and resize (COLS changes,
  // KEY_RESIZE is queued), so the marker names the size the content was laid out for, not COLS after.
  const int drawn_cols = COLS, drawn_rows = LINES;
  erase();
  fill_row(0, kTitle, A_BOLD);
  mvaddstr(0, 1, "fixture - weights.gguf");
  for (int i = 0; i < kItemCount; ++i) {
    int row = kListTop + i;
    if (row >= LINES - 1) break;
    bool sel = i == st.selected;
    if (sel) fill_row(row, kSelected, A_BOLD);
    attrset(sel ? COLOR_PAIR(kSelected) | A_BOLD : COLOR_PAIR(kNormal));
    mvaddnstr(row, 2, kItems[i].name, COLS - 2);
    if (COLS > 30) {
      attrset(sel ? COLOR_PAIR(kSelected) | A_BOLD : COLOR_PAIR(kDtype));
      mvaddstr(row, 26, kItems[i].dtype);
    }
    if (COLS > 48) {
      attrset(sel ? COLOR_PAIR(kSelected) | A_BOLD : COLOR_PAIR(kNormal));
      mvaddstr(row, 33, kItems[i].shape);
    }
  }
  int extra = kListTop + kItemCount + 1;
  if (extra < LINES - 1) {
    attrset(A_NORMAL);
    mvaddwstr(extra, 2, L"名前: 模型の重み");
    attron(COLOR_PAIR(kSpark));
    mvaddwstr(extra, 22, L"\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588");
  }
  char status[160];
  std::snprintf(status, sizeof status, " row %d/%d  %dx%d  colors=%d  keys=%ld%s  [j/k] move [q] quit", st.selected + 1,
                kItemCount, COLS, LINES, COLORS, st.keys, st.busy ? "  busy" : "");
  fill_row(LINES - 1, kStatus, A_NORMAL);
  mvaddnstr(LINES - 1, 0, status, COLS);
  attrset(A_NORMAL);
  refresh();
  ++st.frame;
  if (st.sync) {
    char m[96];
    int n = st.marker_size ? std::snprintf(m, sizeof m, "\033]7777;frame=%ld;keys=%ld;busy=%d;size=%dx%d\007", st.frame,
                                           st.keys, st.busy ? 1 : 0, drawn_cols, drawn_rows)
                           : std::snprintf(m, sizeof m, "\033]7777;frame=%ld;keys=%ld;busy=%d\007", st.frame, st.keys,
                                           st.busy ? 1 : 0);
    if (write(STDOUT_FILENO, m, static_cast<size_t>(n)) < 0) std::exit(3);
  }
}

void move_selection(State& st, int delta) { st.selected = std::max(0, std::min(kItemCount - 1, st.selected + delta)); }

// One mouse report. Returns whether it is an input event (a button release / click, or a wheel step).
bool handle_mouse(State& st) {
  MEVENT ev{};
  if (getmouse(&ev) != OK) return false;
  if (ev.bstate & (BUTTON1_RELEASED | BUTTON1_CLICKED)) {
    int item = ev.y - kListTop;
    if (item >= 0 && item < kItemCount) st.selected = item;
    return true;
  }
  if (ev.bstate & BUTTON4_PRESSED) {
    move_selection(st, -1);
    return true;
  }
  if (ev.bstate & BUTTON5_PRESSED) {
    move_selection(st, +1);
    return true;
  }
  return false;   // a press: its release is the event
}

}   // namespace

int main() {
  std::setlocale(LC_ALL, "");
  State st;
  st.sync = std::getenv("AKVIEW_TEST_SYNC") != nullptr;
  st.marker_size = std::getenv("FIXTURE_MARKER_SIZE") != nullptr;
  SCREEN* screen = newterm(nullptr, stdout, stdin);
  if (!screen) {
    std::fprintf(stderr, "fixture_app: cannot open the terminal\n");
    return 1;
  }
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  set_escdelay(25);
  curs_set(0);
  timeout(100);   // getch wakes up: a SIGWINCH that lands just before it blocks is not lost (STACK.md §4)
  if (has_colors()) init_colors();
  mousemask(BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON4_PRESSED | BUTTON5_PRESSED, nullptr);
  mouseinterval(0);
  draw(st);
  for (bool quit = false; !quit;) {
    int ch = getch();
    if (ch == ERR) {
      if (st.busy && Clock::now() >= st.busy_until) {
        st.busy = false;
        draw(st);
      }
      continue;
    }
    bool event = true;
    switch (ch) {
      case KEY_RESIZE:
        // The terminal may have cropped a frame drawn at the previous size, so ncurses' idea of the
        // screen is stale: repaint everything rather than the differences.
        clearok(curscr, TRUE);
        event = false;
        break;
      case KEY_DOWN:
      case 'j': move_selection(st, +1); break;
      case KEY_UP:
      case 'k': move_selection(st, -1); break;
      case 'b':
        st.busy = true;
        st.busy_until = Clock::now() + std::chrono::milliseconds(300);
        break;
      case 'q': quit = true; break;
      case KEY_MOUSE: event = handle_mouse(st); break;
      default: break;
    }
    if (event) ++st.keys;
    if (!quit) draw(st);
  }
  endwin();
  delscreen(screen);
  return 0;
}
