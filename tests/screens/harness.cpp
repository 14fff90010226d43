// The pty + libvterm terminal harness (STACK.md §4): forkpty, libvterm screen with altscreen, the
// OSC 7777 frame marker, keys and mouse through libvterm, resize by TIOCSWINSZ.
#include "tests/screens/harness.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/utf8.hpp"
#include "tests/common/temp_dir.hpp"

extern char** environ;

namespace akview::testing {
namespace {

using Clock = std::chrono::steady_clock;

struct NamedKey {
  std::string_view name;
  VTermKey key;
};

// One row per named key (send_key(name)).
constexpr NamedKey kNamedKeys[] = {
    {"Up", VTERM_KEY_UP},
    {"Down", VTERM_KEY_DOWN},
    {"Left", VTERM_KEY_LEFT},
    {"Right", VTERM_KEY_RIGHT},
    {"Enter", VTERM_KEY_ENTER},
    {"Tab", VTERM_KEY_TAB},
    {"Backspace", VTERM_KEY_BACKSPACE},
    {"Esc", VTERM_KEY_ESCAPE},
    {"Home", VTERM_KEY_HOME},
    {"End", VTERM_KEY_END},
    {"PageUp", VTERM_KEY_PAGEUP},
    {"PageDown", VTERM_KEY_PAGEDOWN},
    {"Insert", VTERM_KEY_INS},
    {"Delete", VTERM_KEY_DEL},
};

struct NamedModifier {
  std::string_view prefix;
  VTermModifier mod;
};

constexpr NamedModifier kModifiers[] = {{"C-", VTERM_MOD_CTRL}, {"M-", VTERM_MOD_ALT}, {"S-", VTERM_MOD_SHIFT}};

// Decodes UTF-8 into code points; invalid bytes become U+FFFD (test input is ours, so rare).
std::vector<uint32_t> decode_utf8(std::string_view s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) out.push_back(next_code_point(s, i));
  return out;
}

Color to_color(const VTermColor& c, bool foreground) {
  if (foreground ? VTERM_COLOR_IS_DEFAULT_FG(&c) : VTERM_COLOR_IS_DEFAULT_BG(&c)) return {};
  if (VTERM_COLOR_IS_INDEXED(&c)) return Color::indexed(c.indexed.idx);
  return Color::rgb(c.rgb.red, c.rgb.green, c.rgb.blue);
}

// Parses "frame=N;keys=K;busy=B[;size=CxR]" (the part after "7777;"). Unknown fields are ignored.
std::optional<FrameMarker> parse_marker(std::string_view body) {
  FrameMarker m;
  bool have_frame = false;
  while (!body.empty()) {
    size_t semi = body.find(';');
    std::string_view field = body.substr(0, semi);
    body = semi == std::string_view::npos ? std::string_view{} : body.substr(semi + 1);
    size_t eq = field.find('=');
    if (eq == std::string_view::npos) continue;
    std::string key(field.substr(0, eq));
    std::string value(field.substr(eq + 1));
    if (key == "frame") {
      m.frame = std::strtol(value.c_str(), nullptr, 10);
      have_frame = true;
    } else if (key == "keys") {
      m.keys = std::strtol(value.c_str(), nullptr, 10);
    } else if (key == "busy") {
      m.busy = std::strtol(value.c_str(), nullptr, 10);
    } else if (key == "size") {
      std::sscanf(value.c_str(), "%dx%d", &m.size_cols, &m.size_rows);
    }
  }
  if (!have_frame) return std::nullopt;
  return m;
}

std::string describe(const FrameMarker& m) {
  if (m.frame == 0) return "no marker yet";
  std::string s =
      "frame=" + std::to_string(m.frame) + " keys=" + std::to_string(m.keys) + " busy=" + std::to_string(m.busy);
  if (m.size_cols >= 0) s += " size=" + std::to_string(m.size_cols) + "x" + std::to_string(m.size_rows);
  return s;
}

}   // namespace

std::chrono::milliseconds Terminal::default_timeout() {
  if (const char* s = std::getenv("AKVIEW_SCREENS_TIMEOUT_S"); s && std::atof(s) > 0)
    return std::chrono::milliseconds(static_cast<long>(std::atof(s) * 1000));
  return std::chrono::seconds(10);
}

Terminal::Terminal() = default;

Terminal::~Terminal() {
  if (pid_ > 0 && !exit_code_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
  }
  if (master_fd_ >= 0) ::close(master_fd_);
  if (vt_) vterm_free(vt_);
}

void Terminal::start(const std::vector<std::string>& argv, TermSize size, const EnvOverrides& env,
                     const std::filesystem::path& cwd) {
  if (pid_ > 0) throw TerminalError("Terminal::start: already started");
  if (argv.empty()) throw TerminalError("Terminal::start: empty argv");
  size_ = size;
  home_dir_ = std::make_unique<TempDir>();
  home_ = home_dir_->path();
  std::filesystem::path dir = cwd.empty() ? home_ : cwd;

  // The child's environment, built here: after fork only async-signal-safe calls are made.
  std::vector<std::pair<std::string, std::optional<std::string>>> settings = {
      {"AKVIEW_TEST_SYNC", "1"}, {"TERM", "xterm-256color"}, {"LANG", "C.UTF-8"},        {"LC_ALL", "C.UTF-8"},
      {"LINES", std::nullopt},   {"COLUMNS", std::nullopt},  {"NO_COLOR", std::nullopt}, {"HOME", home_.string()}};
  settings.insert(settings.end(), env.begin(), env.end());
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  for (const auto& [name, value] : settings) {
    const std::string prefix = name + "=";   // (clang 14 cannot capture a structured binding)
    std::erase_if(env_strings, [&prefix](const std::string& s) { return s.rfind(prefix, 0) == 0; });
    if (value) env_strings.push_back(name + "=" + *value);
  }
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (auto& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);
  std::string dir_string = dir.string();

  winsize ws{};
  ws.ws_col = static_cast<unsigned short>(size.cols);
  ws.ws_row = static_cast<unsigned short>(size.rows);
  pid_t pid = ::forkpty(&master_fd_, nullptr, nullptr, &ws);
  if (pid < 0) throw TerminalError(std::string("forkpty: ") + std::strerror(errno));
  if (pid == 0) {
    if (::chdir(dir_string.c_str()) != 0) ::_exit(126);
    ::execvpe(argp[0], argp.data(), envp.data());
    ::_exit(127);
  }
  pid_ = pid;
  ::fcntl(master_fd_, F_SETFL, ::fcntl(master_fd_, F_GETFL) | O_NONBLOCK);

  vt_ = vterm_new(size.rows, size.cols);
  vterm_set_utf8(vt_, 1);
  vterm_output_set_callback(vt_, &Terminal::on_output, this);
  vscreen_ = vterm_obtain_screen(vt_);
  vterm_screen_enable_altscreen(vscreen_, 1);
  static const VTermScreenCallbacks screen_callbacks = [] {
    VTermScreenCallbacks cb{};
    cb.settermprop = &Terminal::on_settermprop;
    return cb;
  }();
  vterm_screen_set_callbacks(vscreen_, &screen_callbacks, this);
  static const VTermParserCallbacks fallbacks = [] {
    VTermParserCallbacks cb{};
    cb.osc = &Terminal::on_osc;
    return cb;
  }();
  vterm_screen_set_unrecognised_fallbacks(vscreen_, &fallbacks, this);
  vterm_screen_reset(vscreen_, 1);
}

int Terminal::on_osc(const char* command, size_t len, void* user) {
  // Frame markers are read from the raw bytes (scan_markers): libvterm may hand an OSC string that a
  // read() split in two as two fragments. Here they are only swallowed.
  return std::string_view(command, len).rfind("7777;", 0) == 0 ? 1 : 0;
}

void Terminal::scan_markers() {
  static constexpr std::string_view kIntro = "\x1b]7777;";
  while (true) {
    const size_t start = output_.find(kIntro, marker_scan_);
    if (start == std::string::npos) {
      // Keep the scan position before a possibly incomplete introducer at the end.
      marker_scan_ = std::max(marker_scan_, output_.size() >= kIntro.size() ? output_.size() - kIntro.size() + 1 : 0);
      return;
    }
    size_t end = output_.find('\a', start);
    const size_t st = output_.find("\x1b\\", start);
    if (st != std::string::npos && (end == std::string::npos || st < end)) end = st + 1;
    if (end == std::string::npos) {
      marker_scan_ = start;   // the rest comes with the next read
      return;
    }
    const size_t body = start + kIntro.size();
    const size_t body_end = output_[end] == '\a' ? end : end - 1;
    if (auto m = parse_marker(std::string_view(output_).substr(body, body_end - body))) {
      marker_ = *m;
      ++markers_seen_;
      marker_end_ = end + 1;   // where the newest marker ends, so settle() can tell whether a frame follows it
    }
    marker_scan_ = end + 1;
  }
}

int Terminal::on_settermprop(VTermProp prop, VTermValue* val, void* user) {
  auto* self = static_cast<Terminal*>(user);
  if (prop == VTERM_PROP_ALTSCREEN) {
    self->alt_screen_active_ = val->boolean;
    if (val->boolean) self->alt_screen_used_ = true;
  } else if (prop == VTERM_PROP_MOUSE) {
    self->mouse_mode_ = val->number;
  }
  return 1;
}

void Terminal::on_output(const char* bytes, size_t len, void* user) {
  static_cast<Terminal*>(user)->write_to_child(bytes, len);
}

void Terminal::write_to_child(const char* bytes, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(master_fd_, bytes, n);
    if (w > 0) {
      bytes += w;
      n -= static_cast<size_t>(w);
    } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
      pollfd p{master_fd_, POLLOUT, 0};
      ::poll(&p, 1, 100);
    } else {
      return;   // the child is gone; the wait that follows reports it
    }
  }
}

// libvterm 0.1.4 applies only the first mode of "ESC [ ? 1006 ; 1000 h" (ncurses' mouse switch), so
// such sequences are split into one per mode. A sequence cut by the end of a read is held back until
// the rest arrives.
void Terminal::feed(const char* bytes, size_t n) {
  output_.append(bytes, n);
  std::string data = std::move(pending_dec_mode_);
  pending_dec_mode_.clear();
  data.append(bytes, n);
  std::string out;
  out.reserve(data.size());
  size_t i = 0;
  while (i < data.size()) {
    size_t esc = data.find("\x1b[?", i);
    if (esc == std::string::npos) {
      // Keep a trailing ESC or ESC [ : it may start a sequence completed by the next read.
      size_t keep = data.size() - i;
      size_t tail = 0;
      if (keep >= 1 && data.back() == '\x1b') tail = 1;
      else if (keep >= 2 && data.compare(data.size() - 2, 2, "\x1b[") == 0) tail = 2;
      out.append(data, i, keep - tail);
      pending_dec_mode_ = data.substr(data.size() - tail);
      break;
    }
    out.append(data, i, esc - i);
    size_t j = esc + 3;
    while (j < data.size() && (std::isdigit(static_cast<unsigned char>(data[j])) || data[j] == ';')) ++j;
    if (j == data.size()) {
      pending_dec_mode_ = data.substr(esc);
      break;
    }
    const char final_byte = data[j];
    std::string_view params(data.data() + esc + 3, j - esc - 3);
    if ((final_byte == 'h' || final_byte == 'l') && params.find(';') != std::string_view::npos) {
      while (!params.empty()) {
        size_t semi = params.find(';');
        std::string_view mode = params.substr(0, semi);
        if (!mode.empty()) out += "\x1b[?" + std::string(mode) + final_byte;
        params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
      }
    } else {
      out.append(data, esc, j + 1 - esc);
    }
    i = j + 1;
  }
  if (!out.empty()) vterm_input_write(vt_, out.data(), out.size());
  scan_markers();
}

bool Terminal::pump(int timeout_ms) {
  if (pty_closed_) {
    if (timeout_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(std::min(timeout_ms, 5)));
    return false;
  }
  pollfd p{master_fd_, POLLIN, 0};
  int r = ::poll(&p, 1, timeout_ms);
  if (r <= 0) return false;
  char buf[65536];
  ssize_t n = ::read(master_fd_, buf, sizeof buf);
  if (n > 0) {
    feed(buf, static_cast<size_t>(n));
    return true;
  }
  if (n == 0 || (errno != EAGAIN && errno != EINTR)) pty_closed_ = true;   // EIO: every slave fd closed
  return false;
}

void Terminal::drain() {
  while (pump(0)) {}
}

void Terminal::require_running(const char* what) const {
  if (pid_ <= 0) throw TerminalError(std::string(what) + ": the terminal was not started");
}

void Terminal::fail(const std::string& what) const {
  Screen s = screen();
  throw TerminalError(what + "\n  events sent " + std::to_string(events_sent_) + ", last marker " + describe(marker_) +
                      (exit_code_ ? ", child exited " + std::to_string(*exit_code_) : "") + "\n  screen " +
                      std::to_string(s.cols) + "x" + std::to_string(s.rows) + ":\n" + dump_screen(s));
}

void Terminal::send_key(VTermKey key, VTermModifier mod) {
  require_running("send_key");
  ++events_sent_;
  vterm_keyboard_key(vt_, key, mod);
}

void Terminal::send_key(std::string_view name) {
  require_running("send_key");
  int mod = VTERM_MOD_NONE;
  std::string_view rest = name;
  for (bool again = true; again && rest.size() > 2;) {
    again = false;
    for (const auto& m : kModifiers) {
      if (rest.substr(0, 2) == m.prefix) {
        mod |= m.mod;
        rest.remove_prefix(2);
        again = true;
      }
    }
  }
  for (const auto& k : kNamedKeys) {
    if (rest == k.name) return send_key(k.key, static_cast<VTermModifier>(mod));
  }
  if (rest.size() >= 2 && rest[0] == 'F') {
    int n = std::atoi(std::string(rest.substr(1)).c_str());
    if (n >= 1 && n <= 12)
      return send_key(static_cast<VTermKey>(VTERM_KEY_FUNCTION(n)), static_cast<VTermModifier>(mod));
  }
  auto cps = decode_utf8(rest);
  if (cps.size() != 1) throw TerminalError("send_key: unknown key name '" + std::string(name) + "'");
  ++events_sent_;
  vterm_keyboard_unichar(vt_, cps[0], static_cast<VTermModifier>(mod));
}

void Terminal::send_text(std::string_view utf8) {
  require_running("send_text");
  for (uint32_t cp : decode_utf8(utf8)) {
    ++events_sent_;
    vterm_keyboard_unichar(vt_, cp, VTERM_MOD_NONE);
  }
}

void Terminal::click(int col, int row, int button) {
  require_running("click");
  drain();   // the app may have just enabled the mouse in output not read yet
  if (mouse_mode_ == 0) fail("click: the app has not enabled mouse reporting");
  ++events_sent_;
  vterm_mouse_move(vt_, row, col, VTERM_MOD_NONE);
  vterm_mouse_button(vt_, button, true, VTERM_MOD_NONE);
  vterm_mouse_button(vt_, button, false, VTERM_MOD_NONE);
}

void Terminal::wheel(int col, int row, Wheel direction) {
  require_running("wheel");
  drain();
  if (mouse_mode_ == 0) fail("wheel: the app has not enabled mouse reporting");
  ++events_sent_;
  vterm_mouse_move(vt_, row, col, VTERM_MOD_NONE);
  vterm_mouse_button(vt_, direction == Wheel::kUp ? 4 : 5, true, VTERM_MOD_NONE);
}

void Terminal::send_raw(std::string_view bytes, int n_events) {
  require_running("send_raw");
  events_sent_ += n_events;
  write_to_child(bytes.data(), bytes.size());
}

void Terminal::resize(int cols, int rows) {
  require_running("resize");
  // Read what is pending first, so frames drawn before this resize do not count as its redraw.
  drain();
  frame_floor_ = marker_.frame;
  size_ = {cols, rows};
  winsize ws{};
  ws.ws_col = static_cast<unsigned short>(cols);
  ws.ws_row = static_cast<unsigned short>(rows);
  if (::ioctl(master_fd_, TIOCSWINSZ, &ws) != 0)
    throw TerminalError(std::string("resize: TIOCSWINSZ: ") + std::strerror(errno));
  vterm_set_size(vt_, rows, cols);
}

bool Terminal::settled() const {
  if (marker_.frame == 0 || marker_.frame <= frame_floor_) return false;
  if (output_.size() > marker_end_) return false;   // a frame is being drawn after the marker
  if (marker_.keys < events_sent_ || marker_.busy != 0) return false;
  if (marker_.size_cols >= 0 && (marker_.size_cols != size_.cols || marker_.size_rows != size_.rows)) return false;
  return true;
}

FrameMarker Terminal::settle() { return settle(default_timeout()); }

FrameMarker Terminal::settle(std::chrono::milliseconds timeout) {
  require_running("settle");
  auto deadline = Clock::now() + timeout;
  for (;;) {
    if (settled()) {
      drain();
      if (settled()) return marker_;   // the drain may have brought a busy frame: then keep waiting
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    if (pty_closed_) break;   // nothing more will come
    pump(static_cast<int>(left));
  }
  fail(pty_closed_ ? "settle: the app closed the terminal before settling"
                   : "settle: no settled frame within " + std::to_string(timeout.count()) + " ms");
}

FrameMarker Terminal::press(std::string_view key_name) {
  send_key(key_name);
  return settle();
}

FrameMarker Terminal::type(std::string_view utf8) {
  send_text(utf8);
  return settle();
}

bool Terminal::wait_until(const std::function<bool(const Screen&)>& pred, std::chrono::milliseconds timeout) {
  require_running("wait_until");
  auto deadline = Clock::now() + timeout;
  for (;;) {
    drain();
    if (pred(screen())) return true;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 || pty_closed_) return false;
    pump(static_cast<int>(left));
  }
}

bool Terminal::wait_for_text(const std::string& needle, std::chrono::milliseconds timeout) {
  return wait_until([&](const Screen& s) { return s.text().find(needle) != std::string::npos; }, timeout);
}

int Terminal::wait_exit() { return wait_exit(default_timeout()); }

int Terminal::wait_exit(std::chrono::milliseconds timeout) {
  require_running("wait_exit");
  if (exit_code_) return *exit_code_;
  auto deadline = Clock::now() + timeout;
  for (;;) {
    // Read the pty to its end first: the app's last bytes (rmcup) are there.
    if (!pty_closed_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left > 0) pump(static_cast<int>(std::min<long>(left, 50)));
    }
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      drain();
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return *exit_code_;
    }
    if (Clock::now() >= deadline)
      fail("wait_exit: the app did not exit within " + std::to_string(timeout.count()) + " ms");
  }
}

std::optional<std::string> Terminal::output_after_alt_screen() const {
  size_t best = std::string::npos;
  size_t best_len = 0;
  for (std::string_view seq : {"\x1b[?1049l", "\x1b[?1047l", "\x1b[?47l"}) {
    size_t at = output_.rfind(seq);
    if (at != std::string::npos && (best == std::string::npos || at > best)) {
      best = at;
      best_len = seq.size();
    }
  }
  if (best == std::string::npos) return std::nullopt;
  return output_.substr(best + best_len);
}

Screen Terminal::screen() const {
  Screen s;
  if (!vt_) return s;
  vterm_get_size(vt_, &s.rows, &s.cols);
  s.cells.resize(static_cast<size_t>(s.rows) * s.cols);
  for (int r = 0; r < s.rows; ++r) {
    for (int c = 0; c < s.cols; ++c) {
      VTermScreenCell vc{};
      vterm_screen_get_cell(vscreen_, VTermPos{r, c}, &vc);
      Cell& cell = s.at(r, c);
      if (vc.chars[0] == static_cast<uint32_t>(-1)) {
        // The right half of a wide character: it takes the style of its left half.
        cell.width = 0;
        if (c > 0) cell.style = s.at(r, c - 1).style;
        continue;
      }
      for (int k = 0; k < VTERM_MAX_CHARS_PER_CELL && vc.chars[k]; ++k) append_utf8(cell.text, vc.chars[k]);
      if (cell.text == " ") cell.text.clear();
      cell.width = vc.width > 1 ? vc.width : 1;
      Style& st = cell.style;
      st.fg = to_color(vc.fg, true);
      st.bg = to_color(vc.bg, false);
      st.bold = vc.attrs.bold;
      st.underline = static_cast<uint8_t>(vc.attrs.underline);
      st.italic = vc.attrs.italic;
      st.reverse = vc.attrs.reverse;
      st.blink = vc.attrs.blink;
      st.strike = vc.attrs.strike;
    }
  }
  return s;
}

Cell Terminal::cell(int row, int col) const {
  Screen s = screen();
  if (row < 0 || col < 0 || row >= s.rows || col >= s.cols)
    throw TerminalError("cell(" + std::to_string(row) + ", " + std::to_string(col) + "): outside the screen");
  return s.at(row, col);
}

}   // namespace akview::testing
