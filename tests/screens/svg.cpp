// Screen -> SVG (STACK.md §4, "PNG for human review").
#include "tests/screens/svg.hpp"

#include <array>
#include <cstdio>
#include <fstream>

namespace akview::testing {
namespace {

constexpr int kCellWidthPx = 9;
constexpr int kCellHeightPx = 18;
constexpr int kBaselinePx = 14;   // from the top of the cell
constexpr const char* kDefaultFg = "#d0d0d0";
constexpr const char* kDefaultBg = "#101010";

// xterm's 16 system colours; 16..231 are the 6x6x6 cube, 232..255 the grey ramp.
constexpr std::array<unsigned, 16> kSystemColors = {0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd,
                                                    0x00cdcd, 0xe5e5e5, 0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00,
                                                    0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff};

std::string hex(unsigned rgb) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%06x", rgb & 0xffffff);
  return buf;
}

std::string css(const Color& c, const char* fallback) {
  switch (c.kind) {
    case Color::Kind::kDefault: return fallback;
    case Color::Kind::kIndexed: return xterm_rgb(c.index);
    case Color::Kind::kRgb: return hex((unsigned{c.red} << 16) | (unsigned{c.green} << 8) | c.blue);
  }
  return fallback;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

// The eighths of a lower block element U+2581..U+2588 (as UTF-8 E2 96 81..88), or 0.
int lower_block_eighths(const std::string& text) {
  if (text.size() == 3 && static_cast<unsigned char>(text[0]) == 0xE2 && static_cast<unsigned char>(text[1]) == 0x96) {
    int low = static_cast<unsigned char>(text[2]);
    if (low >= 0x81 && low <= 0x88) return low - 0x80;
  }
  return 0;
}

}   // namespace

std::string xterm_rgb(int index) {
  if (index < 16) return hex(kSystemColors[static_cast<size_t>(index)]);
  if (index < 232) {
    static constexpr unsigned kLevels[] = {0, 95, 135, 175, 215, 255};
    int i = index - 16;
    return hex((kLevels[i / 36] << 16) | (kLevels[(i / 6) % 6] << 8) | kLevels[i % 6]);
  }
  unsigned grey = 8 + 10 * static_cast<unsigned>(index - 232);
  return hex((grey << 16) | (grey << 8) | grey);
}

std::string render_svg(const Screen& screen) {
  const int width = screen.cols * kCellWidthPx;
  const int height = screen.rows * kCellHeightPx;
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' viewBox='0 0 %d %d'>\n", width, height,
                width, height);
  out += buf;
  out += "<rect width='100%' height='100%' fill='" + std::string(kDefaultBg) + "'/>\n";
  out += "<g font-family='DejaVu Sans Mono' font-size='15' xml:space='preserve'>\n";
  for (int r = 0; r < screen.rows; ++r) {
    for (int c = 0; c < screen.cols; ++c) {
      const Cell& cell = screen.at(r, c);
      if (cell.width == 0) continue;   // drawn with its left half
      const Style& st = cell.style;
      std::string fg = css(st.fg, kDefaultFg);
      std::string bg = css(st.bg, kDefaultBg);
      bool has_bg = !st.bg.is_default();
      if (st.reverse) {
        std::swap(fg, bg);
        has_bg = true;
      }
      const int x = c * kCellWidthPx;
      const int y = r * kCellHeightPx;
      const int w = cell.width * kCellWidthPx;
      if (has_bg) {
        std::snprintf(buf, sizeof buf, "<rect x='%d' y='%d' width='%d' height='%d' fill='%s'/>\n", x, y, w,
                      kCellHeightPx, bg.c_str());
        out += buf;
      }
      if (cell.text.empty()) continue;
      if (int eighths = lower_block_eighths(cell.text)) {
        int h = kCellHeightPx * eighths / 8;
        std::snprintf(buf, sizeof buf, "<rect x='%d' y='%d' width='%d' height='%d' fill='%s'/>\n", x,
                      y + kCellHeightPx - h, w, h, fg.c_str());
        out += buf;
        continue;
      }
      std::snprintf(buf, sizeof buf, "<text x='%d' y='%d' fill='%s'%s%s%s>", x, y + kBaselinePx, fg.c_str(),
                    st.bold ? " font-weight='bold'" : "", st.italic ? " font-style='italic'" : "",
                    st.underline ? " text-decoration='underline'" : "");
      out += buf + xml_escape(cell.text) + "</text>\n";
    }
  }
  out += "</g>\n</svg>\n";
  return out;
}

bool write_svg(const Screen& screen, const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream f(path, std::ios::binary);
  f << render_svg(screen);
  return static_cast<bool>(f);
}

}   // namespace akview::testing
