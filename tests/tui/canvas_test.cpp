// The off-screen canvas: text from files is escaped before it reaches a cell (no control or bidi
// code point survives), wide characters take two cells so columns stay aligned, text that does not
// fit ends in '…', and drawing is clipped to the canvas.
#include <gtest/gtest.h>

#include <string>

#include "ui/tui/canvas.hpp"

namespace akview::testing {
namespace {

using namespace std::string_literals;
using tui::Canvas;
using tui::Role;

bool is_dangerous(char32_t c) {
  return c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || (c >= 0x200b && c <= 0x200f) ||
         (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0xfeff || c == 0x2028 || c == 0x2029;
}

TEST(Canvas, HostileTextIsEscapedIntoPrintableCells) {
  const std::string hostile = "a\x1b[31mb\x07\x9b\xc2\x9b\0z\xe2\x80\xae\xe2\x81\xa6\xe2\x80\x8b\xef\xbb\xbf\x7f"s;
  Canvas c(200, 1);
  const int used = c.text(0, 0, hostile, Role::normal, 200);
  EXPECT_EQ(used, tui::display_width(hostile));
  for (int x = 0; x < c.width(); ++x) EXPECT_FALSE(is_dangerous(c.at(x, 0).ch)) << "cell " << x;
  const std::string row = c.row_text(0);
  EXPECT_NE(row.find("\\x1b[31m"), std::string::npos) << row;
  EXPECT_NE(row.find("\\u{202e}"), std::string::npos) << row;
  EXPECT_NE(row.find("\\x9b"), std::string::npos) << row;
}

TEST(Canvas, WideCharactersKeepColumnsAligned) {
  Canvas c(20, 2);
  EXPECT_EQ(c.text(0, 0, "中文权重", Role::normal, 20), 8);
  c.text(8, 0, "|", Role::normal, 1);
  c.text(0, 1, "abcdefgh", Role::normal, 20);
  c.text(8, 1, "|", Role::normal, 1);
  EXPECT_EQ(c.at(8, 0).ch, U'|');
  EXPECT_TRUE(c.at(1, 0).continuation);
  EXPECT_EQ(c.row_text(0), "中文权重|");
  // A wide character that would straddle the edge of its field is not split.
  Canvas d(20, 1);
  const int used = d.text(0, 0, "中文权重", Role::normal, 5);
  EXPECT_LE(used, 5);
  EXPECT_NE(d.row_text(0).find("…"), std::string::npos);
}

TEST(Canvas, LongTextEndsInAnEllipsisAndDrawingIsClipped) {
  Canvas c(10, 2);
  EXPECT_EQ(c.text(0, 0, "layers.10.attention.q.weight", Role::normal, 10), 10);
  EXPECT_EQ(c.row_text(0), "layers.10…");
  c.text(7, 1, "abcdef", Role::normal, 100);          // runs past the right edge
  EXPECT_EQ(c.row_text(1), "       ab…");             // clipped at the edge, marked as cut
  c.text(0, 5, "off the canvas", Role::normal, 10);   // no crash, nothing drawn
  c.text_right(0, 1, 5, "xy", Role::number);
  EXPECT_EQ(c.row_text(1).substr(0, 5), "   xy");
}

TEST(Canvas, ElideMiddleKeepsBothEndsOfAName) {
  EXPECT_EQ(tui::elide_middle("layers.2.attention.output.weight", 40), "layers.2.attention.output.weight");
  const std::string cut = tui::elide_middle("layers.2.attention.output.weight", 20);
  EXPECT_EQ(cut, "layers.2.a…ut.weight");
  EXPECT_EQ(tui::display_width(cut), 20);
  EXPECT_EQ(tui::elide_middle("abc", 0), "");
  EXPECT_EQ(tui::elide_middle("abcdef", 1), "…");
  // Escaped first (a control character is never sent raw), and a wide character is never split.
  EXPECT_EQ(tui::elide_middle("a\x07"
                              "b",
                              10),
            "a\\x07b");
  const std::string wide = tui::elide_middle("中文权重中文权重", 7);
  EXPECT_LE(tui::display_width(wide), 7);
  EXPECT_EQ(wide, "中…重");
  EXPECT_EQ(tui::elide_middle("a\x1b"
                              "bcdefghijkl",
                              9)
                .find('\x1b'),
            std::string::npos);
}

}   // namespace
}   // namespace akview::testing
