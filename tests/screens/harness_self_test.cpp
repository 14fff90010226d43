// Self-tests of the terminal harness against tests/screens/fixture_app.cpp: keys, goldens, diffs,
// resizes (one at a time and in a burst), busy frames, exit and terminal restoration, mouse, SVG/PNG.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/common/temp_dir.hpp"
#include "tests/screens/golden.hpp"
#include "tests/screens/harness.hpp"
#include "tests/screens/svg.hpp"

namespace akview::testing {
namespace {

constexpr int kFirstItemRow = 2;   // the fixture's list starts on screen row 2

void start_fixture(Terminal& term, TermSize size = {80, 24}, const EnvOverrides& env = {}) {
  term.start({AKVIEW_SCREENS_FIXTURE}, size, env);
  term.settle();
}

std::string status_line(const Terminal& term) {
  Screen s = term.screen();
  return s.row_text(s.rows - 1);
}

// The item row drawn with the selection colours (bg 45), or -1.
int selected_row(const Terminal& term) {
  Screen s = term.screen();
  for (int r = 0; r < s.rows; ++r)
    if (s.at(r, 2).style.bg == Color::indexed(45)) return r;
  return -1;
}

TEST(ScreensHarness, KeysMoveTheSelection) {
  Terminal term;
  start_fixture(term);
  EXPECT_EQ(selected_row(term), kFirstItemRow);
  EXPECT_NE(status_line(term).find("row 1/6"), std::string::npos) << status_line(term);

  term.press("Down");
  auto m = term.press("j");
  EXPECT_EQ(m.keys, 2);
  EXPECT_EQ(m.busy, 0);
  EXPECT_EQ(selected_row(term), kFirstItemRow + 2);
  EXPECT_NE(status_line(term).find("row 3/6"), std::string::npos) << status_line(term);

  term.press("Up");
  m = term.type("kk");   // one event per character: the second k hits the top and stays there
  EXPECT_EQ(m.keys, 5);
  EXPECT_EQ(selected_row(term), kFirstItemRow);
  EXPECT_NE(term.screen().text().find("blk.0.attn_k.weight"), std::string::npos);
}

TEST(ScreensHarness, FirstScreenMatchesTheGolden) {
  Terminal term;
  start_fixture(term);
  EXPECT_TRUE(compare_golden(term.screen(), "fixture_start"));
}

TEST(ScreensHarness, WideCharactersAreDumpedOnceAndStyledAsRuns) {
  Terminal term;
  start_fixture(term);
  Screen s = term.screen();
  int row = s.find_row("模型");
  ASSERT_GE(row, 0) << s.text();
  EXPECT_EQ(s.row_text(row), "  名前: 模型の重み    ▁▂▃▄▅▆▇█");
  EXPECT_EQ(s.at(row, 2).text, "名");
  EXPECT_EQ(s.at(row, 2).width, 2);
  EXPECT_EQ(s.at(row, 3).width, 0);
  EXPECT_EQ(s.at(row, 22).style.fg, Color::indexed(34));
  const std::string dump = dump_screen(s);
  EXPECT_NE(dump.find("0: 0-79 fg=231 bg=24 bold\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("2: 0-79 fg=16 bg=45 bold\n"), std::string::npos) << dump;
}

TEST(ScreensHarness, AMismatchIsReportedWithTheLine) {
  Terminal term;
  start_fixture(term);
  Screen s = term.screen();
  std::string expected = dump_screen(s);
  EXPECT_TRUE(screen_matches(s, expected));

  const std::string old_row = "03|   blk.0.attn_q.weight     Q4_K   [4096, 4096]";
  const std::string new_row = "03|   blk.0.attn_q.weight     Q5_K   [4096, 4096]";
  ASSERT_NE(expected.find(old_row + "\n"), std::string::npos) << expected;
  expected.replace(expected.find(old_row), old_row.size(), new_row);
  auto result = screen_matches(s, expected);
  ASSERT_FALSE(result);
  const std::string message = result.message();
  EXPECT_NE(message.find("-" + new_row + "\n"), std::string::npos) << message;
  EXPECT_NE(message.find("+" + old_row + "\n"), std::string::npos) << message;
  EXPECT_NE(message.find("@@ -3,5 +3,5 @@"), std::string::npos) << message;   // 1-based dump lines

  // A style change is named by its row too.
  std::string restyled = dump_screen(s);
  restyled.replace(restyled.find("0: 0-79 fg=231 bg=24 bold"), 25, "0: 0-79 fg=231 bg=25 bold");
  auto styled = screen_matches(s, restyled);
  ASSERT_FALSE(styled);
  EXPECT_NE(std::string(styled.message()).find("+0: 0-79 fg=231 bg=24 bold"), std::string::npos);
}

TEST(ScreensHarness, LineDiffIsUnifiedStyle) {
  EXPECT_EQ(diff_lines("a\nb\nc\n", "a\nb\nc\n"), "");
  EXPECT_EQ(diff_lines("a\nb\nc\n", "a\nx\nc\n"), "--- expected\n+++ actual\n@@ -1,3 +1,3 @@\n a\n-b\n+x\n c\n");
  EXPECT_EQ(diff_lines("", "new\n"), "--- expected\n+++ actual\n@@ -0,0 +1,1 @@\n+new\n");
  // Changes far apart give two hunks.
  EXPECT_EQ(diff_lines("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "x\n2\n3\n4\n5\n6\n7\n8\ny\n"),
            "--- expected\n+++ actual\n@@ -1,3 +1,3 @@\n-1\n+x\n 2\n 3\n@@ -7,3 +7,3 @@\n 7\n 8\n-9\n+y\n");
}

TEST(ScreensHarness, AMissingGoldenFailsWithTheUpdateHint) {
  if (std::getenv("AKVIEW_UPDATE_GOLDENS")) GTEST_SKIP() << "the update switch writes goldens instead";
  Screen s;
  s.cols = 2;
  s.rows = 1;
  s.cells.resize(2);
  auto result = compare_golden(s, "no_such_golden_for_the_self_test");
  ASSERT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("AKVIEW_UPDATE_GOLDENS=1"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(actual_path("no_such_golden_for_the_self_test")));
}

TEST(ScreensHarness, ResizeRedrawsAtTheNewSize) {
  Terminal term;
  start_fixture(term);
  term.resize(40, 12);
  auto m = term.settle();
  EXPECT_EQ(m.keys, 0);   // a resize is not an event
  Screen s = term.screen();
  EXPECT_EQ(s.cols, 40);
  EXPECT_EQ(s.rows, 12);
  EXPECT_NE(s.row_text(11).find("40x12"), std::string::npos) << s.text();
  EXPECT_EQ(s.at(11, 39).style.bg, Color::indexed(238));   // the status bar reaches the new right edge

  term.resize(80, 24);
  term.settle();
  s = term.screen();
  EXPECT_EQ(s.cols, 80);
  EXPECT_NE(s.row_text(23).find("80x24"), std::string::npos) << s.text();
  EXPECT_TRUE(compare_golden(s, "fixture_start"));   // back where it started, same bytes
}

TEST(ScreensHarness, TwentyQuickResizesNeverLoseTheLastRedraw) {
  Terminal term;
  start_fixture(term, {80, 24}, {{"FIXTURE_MARKER_SIZE", "1"}});
  int cols = 0, rows = 0;
  for (int i = 0; i < 20; ++i) {
    cols = 50 + (i * 7) % 40;
    rows = 10 + (i * 5) % 20;
    term.resize(cols, rows);
  }
  auto m = term.settle();
  EXPECT_EQ(m.size_cols, cols);
  EXPECT_EQ(m.size_rows, rows);
  Screen s = term.screen();
  const std::string size = std::to_string(cols) + "x" + std::to_string(rows);
  EXPECT_NE(s.row_text(rows - 1).find(size), std::string::npos) << s.text();
  EXPECT_EQ(s.at(rows - 1, cols - 1).style.bg, Color::indexed(238)) << s.text();
  // Keys still work after the burst.
  term.press("Down");
  EXPECT_NE(term.screen().row_text(rows - 1).find("row 2/6"), std::string::npos) << term.screen().text();
}

TEST(ScreensHarness, SettleWaitsThroughBusyFrames) {
  Terminal term;
  start_fixture(term);
  long before = term.last_marker().frame;
  auto m = term.press("b");   // the fixture reports busy=1 for 300 ms, then redraws with busy=0
  EXPECT_EQ(m.busy, 0);
  EXPECT_EQ(m.keys, 1);
  EXPECT_GE(m.frame, before + 2);   // the busy frame and the idle one
  EXPECT_EQ(status_line(term).find("busy"), std::string::npos) << status_line(term);
}

TEST(ScreensHarness, QuitExitsZeroAndLeavesTheAlternateScreen) {
  Terminal term;
  start_fixture(term);
  EXPECT_TRUE(term.alt_screen_used());
  EXPECT_TRUE(term.alt_screen_active());
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
  EXPECT_FALSE(term.alt_screen_active());
  auto tail = term.output_after_alt_screen();
  ASSERT_TRUE(tail.has_value());
  EXPECT_EQ(tail->find("\x1b[?1049h"), std::string::npos);   // it did not enter it again
}

TEST(ScreensHarness, AClickSelectsARowAndTheWheelMovesIt) {
  Terminal term;
  start_fixture(term);
  EXPECT_NE(term.mouse_mode(), 0);
  term.click(5, kFirstItemRow + 3);
  auto m = term.settle();
  EXPECT_EQ(m.keys, 1);   // press + release = one event
  EXPECT_EQ(selected_row(term), kFirstItemRow + 3);
  EXPECT_NE(status_line(term).find("row 4/6"), std::string::npos) << status_line(term);

  term.wheel(5, 5, Wheel::kDown);
  m = term.settle();
  EXPECT_EQ(m.keys, 2);
  EXPECT_NE(status_line(term).find("row 5/6"), std::string::npos) << status_line(term);
  term.wheel(5, 5, Wheel::kUp);
  term.wheel(5, 5, Wheel::kUp);
  m = term.settle();
  EXPECT_EQ(m.keys, 4);
  EXPECT_NE(status_line(term).find("row 3/6"), std::string::npos) << status_line(term);
}

TEST(ScreensHarness, EightColourTerminalAndEnvironment) {
  Terminal term;
  start_fixture(term, {80, 24}, {{"TERM", "xterm"}});
  EXPECT_NE(status_line(term).find("colors=8"), std::string::npos) << status_line(term);
  Screen s = term.screen();
  EXPECT_EQ(s.at(0, 0).style.bg, Color::indexed(4));   // COLOR_BLUE
  EXPECT_FALSE(term.home_dir().empty());
  EXPECT_TRUE(std::filesystem::is_directory(term.home_dir()));
}

TEST(ScreensHarness, ATimedOutSettleNamesTheScreen) {
  Terminal term;
  start_fixture(term);
  term.send_raw("j", 2);   // claims two events for one key: the marker's keys never catch up
  try {
    term.settle(std::chrono::milliseconds(300));
    ADD_FAILURE() << "settle returned although keys < events sent";
  } catch (const TerminalError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no settled frame"), std::string::npos) << what;
    EXPECT_NE(what.find("events sent 2"), std::string::npos) << what;
    EXPECT_NE(what.find("fixture - weights.gguf"), std::string::npos) << what;
  }
  EXPECT_TRUE(term.wait_for_text("row 2/6", Terminal::default_timeout()));
  EXPECT_FALSE(term.wait_for_text("no such text", std::chrono::milliseconds(50)));
}

TEST(ScreensHarness, SvgIsWrittenAndConvertsToPng) {
  Terminal term;
  start_fixture(term);
  TempDir dir;
  const std::string svg_path = dir.file("fixture.svg");
  ASSERT_TRUE(write_svg(term.screen(), svg_path));
  std::ifstream in(svg_path);
  std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(svg.find("width='720' height='432'"), std::string::npos);
  EXPECT_NE(svg.find("font-family='DejaVu Sans Mono' font-size='15'"), std::string::npos);
  EXPECT_NE(svg.find("fill='#005f87'"), std::string::npos);   // the title bar, xterm 24
  EXPECT_NE(svg.find("font-weight='bold'"), std::string::npos);
  EXPECT_NE(svg.find("名"), std::string::npos);
  EXPECT_EQ(xterm_rgb(196), "#ff0000");
  EXPECT_EQ(xterm_rgb(244), "#808080");

  if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0) GTEST_SKIP() << "rsvg-convert is not installed";
  const std::string png_path = dir.file("fixture.png");
  ASSERT_EQ(std::system(("rsvg-convert -o '" + png_path + "' '" + svg_path + "'").c_str()), 0);
  std::ifstream png(png_path, std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
}

}   // namespace
}   // namespace akview::testing
