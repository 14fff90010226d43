// Screen snapshot text and the golden dump format (STACK.md §4).
#include "tests/screens/screen.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <sstream>

#include "ui/tui/canvas.hpp"

namespace akview::testing {

std::string Color::name() const {
  char buf[16];
  switch (kind) {
    case Kind::kDefault: return "def";
    case Kind::kIndexed: std::snprintf(buf, sizeof buf, "%d", index); return buf;
    case Kind::kRgb: std::snprintf(buf, sizeof buf, "#%02x%02x%02x", red, green, blue); return buf;
  }
  return "?";
}

std::string Style::describe() const {
  static constexpr const char* kUnderline[] = {"", " underline", " underline=double", " underline=curly"};
  std::string s = "fg=" + fg.name() + " bg=" + bg.name();
  if (bold) s += " bold";
  s += kUnderline[underline & 3];
  if (reverse) s += " reverse";
  if (italic) s += " italic";
  if (blink) s += " blink";
  if (strike) s += " strike";
  return s;
}

std::string Screen::row_text(int row) const {
  std::string line;
  for (int col = 0; col < cols; ++col) {
    const Cell& c = at(row, col);
    if (c.width == 0) continue;   // right half of a wide character: written once, with its left half
    line += c.text.empty() ? std::string(" ") : c.text;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

std::vector<std::string> Screen::text_rows() const {
  std::vector<std::string> out;
  for (int r = 0; r < rows; ++r) out.push_back(row_text(r));
  return out;
}

std::string Screen::text() const {
  std::string out;
  for (int r = 0; r < rows; ++r) out += row_text(r) + "\n";
  return out;
}

int Screen::find_row(const std::string& needle) const {
  for (int r = 0; r < rows; ++r)
    if (row_text(r).find(needle) != std::string::npos) return r;
  return -1;
}

std::string dump_screen(const Screen& screen) {
  // Row numbers are zero-padded to a fixed width so the lines sort and align.
  int digits = 2;
  for (int n = screen.rows - 1; n >= 100; n /= 10) ++digits;
  char buf[64];
  std::snprintf(buf, sizeof buf, "# vtshot screen %dx%d\n", screen.cols, screen.rows);
  std::string out = buf;
  for (int r = 0; r < screen.rows; ++r) {
    std::string number = std::to_string(r);
    out += std::string(static_cast<size_t>(std::max(0, digits - static_cast<int>(number.size()))), '0') + number + "|";
    std::string text = screen.row_text(r);
    if (!text.empty()) out += " " + text;
    out += "\n";
  }
  out += "# styles (row: col-range style), default style omitted\n";
  for (int r = 0; r < screen.rows; ++r) {
    int col = 0;
    while (col < screen.cols) {
      const Style& style = screen.at(r, col).style;
      int end = col;
      while (end + 1 < screen.cols && screen.at(r, end + 1).style == style) ++end;
      if (!style.is_default()) {
        std::snprintf(buf, sizeof buf, "%d: %d-%d ", r, col, end);
        out += buf + style.describe() + "\n";
      }
      col = end + 1;
    }
  }
  return out;
}

namespace {

bool parse_int(std::string_view s, int& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool parse_color(std::string_view s, Color& out) {
  if (s == "def") return out = Color{}, true;
  if (!s.empty() && s[0] == '#' && s.size() == 7) {
    unsigned rgb = 0;
    auto [end, ec] = std::from_chars(s.data() + 1, s.data() + 7, rgb, 16);
    if (ec != std::errc() || end != s.data() + 7) return false;
    return out = Color::rgb((rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255), true;
  }
  int index = 0;
  if (!parse_int(s, index) || index < 0 || index > 255) return false;
  return out = Color::indexed(index), true;
}

// "fg=231 bg=24 bold underline=double ..." as Style::describe writes it.
bool parse_style(std::string_view text, Style& style) {
  std::istringstream words{std::string(text)};
  std::string w;
  while (words >> w) {
    if (w.rfind("fg=", 0) == 0) {
      if (!parse_color(std::string_view(w).substr(3), style.fg)) return false;
    } else if (w.rfind("bg=", 0) == 0) {
      if (!parse_color(std::string_view(w).substr(3), style.bg)) return false;
    } else if (w == "bold") {
      style.bold = true;
    } else if (w == "underline") {
      style.underline = 1;
    } else if (w == "underline=double") {
      style.underline = 2;
    } else if (w == "underline=curly") {
      style.underline = 3;
    } else if (w == "reverse") {
      style.reverse = true;
    } else if (w == "italic") {
      style.italic = true;
    } else if (w == "blink") {
      style.blink = true;
    } else if (w == "strike") {
      style.strike = true;
    } else {
      return false;
    }
  }
  return true;
}

}   // namespace

std::optional<Screen> parse_screen_dump(std::string_view dump) {
  std::vector<std::string_view> lines;
  for (size_t at = 0; at < dump.size();) {
    size_t end = dump.find('\n', at);
    if (end == std::string_view::npos) end = dump.size();
    lines.push_back(dump.substr(at, end - at));
    at = end + 1;
  }
  Screen screen;
  if (lines.empty() ||
      std::sscanf(std::string(lines[0]).c_str(), "# vtshot screen %dx%d", &screen.cols, &screen.rows) != 2 ||
      screen.cols <= 0 || screen.rows <= 0 || screen.cols > 1000 || screen.rows > 1000 ||
      lines.size() < static_cast<size_t>(screen.rows) + 2)
    return std::nullopt;
  screen.cells.assign(static_cast<size_t>(screen.rows) * screen.cols, Cell{});
  for (int r = 0; r < screen.rows; ++r) {
    std::string_view line = lines[1 + r];
    const size_t bar = line.find('|');
    if (bar == std::string_view::npos) return std::nullopt;
    std::string_view text = line.substr(bar + 1);
    if (!text.empty()) {
      if (text[0] != ' ') return std::nullopt;
      text.remove_prefix(1);
    }
    int col = 0;
    for (size_t i = 0; i < text.size() && col < screen.cols;) {
      const size_t start = i;
      const char32_t cp = next_code_point(text, i);
      const int width = std::max(1, char_width(cp));
      Cell& cell = screen.at(r, col);
      cell.text = cp == U' ' ? std::string() : std::string(text.substr(start, i - start));
      cell.width = width;
      if (width == 2 && col + 1 < screen.cols) screen.at(r, col + 1).width = 0;
      col += width;
    }
  }
  if (lines[1 + screen.rows].rfind("# styles", 0) != 0) return std::nullopt;
  for (size_t k = static_cast<size_t>(screen.rows) + 2; k < lines.size(); ++k) {
    std::string_view line = lines[k];
    if (line.empty()) continue;
    const size_t colon = line.find(": "), dash = line.find('-', colon), space = line.find(' ', colon + 2);
    int row = 0, first = 0, last = 0;
    Style style;
    if (colon == std::string_view::npos || dash == std::string_view::npos || space == std::string_view::npos ||
        !parse_int(line.substr(0, colon), row) || !parse_int(line.substr(colon + 2, dash - colon - 2), first) ||
        !parse_int(line.substr(dash + 1, space - dash - 1), last) || !parse_style(line.substr(space + 1), style) ||
        row < 0 || row >= screen.rows || first < 0 || last < first || last >= screen.cols)
      return std::nullopt;
    for (int c = first; c <= last; ++c) screen.at(row, c).style = style;
  }
  return screen;
}

}   // namespace akview::testing
