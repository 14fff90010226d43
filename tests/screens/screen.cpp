// Screen snapshot text and the golden dump format (STACK.md §4).
#include "tests/screens/screen.hpp"

#include <algorithm>
#include <cstdio>

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
    if (c.width == 0) continue;  // right half of a wide character: written once, with its left half
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

}  // namespace akview::testing
