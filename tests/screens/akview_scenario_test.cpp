// akview's own TUI through the real binary on a pty: the demo folder's model list, opening a model,
// search, filter, sort and quitting (state assertions; goldens come with the next change).
#include <gtest/gtest.h>

#include "tests/screens/harness.hpp"

namespace akview::testing {
namespace {

TEST(AkviewScreens, DemoListOpensAModelAndQuitsCleanly) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo"}, {120, 40}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  ASSERT_NE(term.screen().find_row("llama-demo-q4km.gguf"), -1) << term.screen().text();
  ASSERT_NE(term.screen().find_row("5 models"), -1) << term.screen().text();
  term.press("Down");
  term.press("Down");
  term.press("Enter");   // llama-demo-q4km.gguf
  ASSERT_TRUE(term.wait_for_text("1 Tensors", std::chrono::seconds(10))) << term.screen().text();
  term.settle();
  EXPECT_NE(term.screen().find_row("39 tensors"), -1) << term.screen().text();
  // Search lands on the named tensor: the status bar shows its row, the row is on screen.
  term.press("/");
  term.type("ffn.up");
  term.press("Enter");
  EXPECT_NE(term.screen().find_row("layers.0.ffn.up.weight"), -1) << term.screen().text();
  // A filter and its inverse count the right rows.
  term.press("\\");
  term.type("attention");
  term.press("Enter");
  EXPECT_NE(term.screen().find_row("(20 of 39)"), -1) << term.screen().text();
  term.press("\\");
  for (int k = 0; k < 9; ++k) term.press("Backspace");
  term.type("!attention");
  term.press("Enter");
  EXPECT_NE(term.screen().find_row("(19 of 39)"), -1) << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
  EXPECT_FALSE(term.alt_screen_active());
}

TEST(AkviewScreens, TooSmallTerminalSaysSo) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo"}, {30, 8}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  EXPECT_NE(term.screen().find_row("terminal too small"), -1) << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

}  // namespace
}  // namespace akview::testing
