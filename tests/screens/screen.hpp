// A snapshot of a terminal screen (characters plus style per cell) and its golden text dump, in the
// format of STACK.md §4: `# vtshot screen WxH`, one `NN| text` line per row, then style runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace akview::testing {

struct Color {
  enum class Kind : uint8_t { kDefault, kIndexed, kRgb };
  Kind kind = Kind::kDefault;
  uint8_t index = 0;                      // xterm index when kIndexed
  uint8_t red = 0, green = 0, blue = 0;   // when kRgb

  static Color indexed(int i) { return {Kind::kIndexed, static_cast<uint8_t>(i), 0, 0, 0}; }
  static Color rgb(int r, int g, int b) {
    return {Kind::kRgb, 0, static_cast<uint8_t>(r), static_cast<uint8_t>(g), static_cast<uint8_t>(b)};
  }
  bool is_default() const { return kind == Kind::kDefault; }
  bool operator==(const Color&) const = default;
  std::string name() const;   // "def", "214", "#ff8800"
};

struct Style {
  Color fg, bg;
  bool bold = false;
  uint8_t underline = 0;   // 0 off, 1 single, 2 double, 3 curly (libvterm's values)
  bool italic = false;
  bool reverse = false;
  bool blink = false;
  bool strike = false;

  bool is_default() const { return *this == Style{}; }
  bool operator==(const Style&) const = default;
  std::string describe() const;   // "fg=231 bg=24 bold"
};

struct Cell {
  std::string text;   // UTF-8; "" for a blank cell and for the right half of a wide character
  int width = 1;      // 2 for the left half of a wide character, 0 for its right half
  Style style;
};

struct Screen {
  int cols = 0;
  int rows = 0;
  std::vector<Cell> cells;   // row-major, rows * cols

  const Cell& at(int row, int col) const { return cells[static_cast<size_t>(row) * cols + col]; }
  Cell& at(int row, int col) { return cells[static_cast<size_t>(row) * cols + col]; }
  // The characters of one row, blanks as spaces, wide characters once, trailing blanks trimmed.
  std::string row_text(int row) const;
  std::vector<std::string> text_rows() const;
  // All rows joined with '\n' (for substring checks and failure messages).
  std::string text() const;
  // The row holding `needle`, or -1.
  int find_row(const std::string& needle) const;
};

// The golden dump: deterministic, one line per row, then the non-default style runs.
std::string dump_screen(const Screen& screen);
// The dump read back into cells: text, widths (a wide character takes its cell and the next, as the
// terminal drew it) and style runs, so dump_screen(*parse_screen_dump(d)) == d for every golden.
// nullopt when `dump` is not in that format. Screenshots are rendered from goldens through it.
std::optional<Screen> parse_screen_dump(std::string_view dump);

}   // namespace akview::testing
