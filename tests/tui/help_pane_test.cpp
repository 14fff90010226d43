// The Help pane drawn off-screen: at any width every binding's text is there whole (wrapped under
// its keys, never cut), every context of the key table has its heading, and `/` searches it.
#include <gtest/gtest.h>

#include <sstream>

#include "tests/tui/pane_test_util.hpp"
#include "ui/tui/help_pane.hpp"
#include "ui/tui/keys.hpp"

namespace akview::testing {
namespace {

// The words of the pane's text, in order, from every row drawn (scrolled through page by page).
std::vector<std::string> help_words(tui::HelpPane& pane, FakeHost& host, int w, int h) {
  std::vector<std::string> words;
  for (int page = 0; page < 200; ++page) {
    const tui::Canvas c = draw_pane(pane, host, w, h);
    for (int y = 0; y < h; ++y) {
      std::istringstream in(c.row_text(y));
      for (std::string word; in >> word;) words.push_back(word);
    }
    const std::string before = c.row_text(0);
    pane.act(tui::Action::page_down, host);
    if (draw_pane(pane, host, w, h).row_text(0) == before) break;
  }
  return words;
}

TEST(HelpPane, EveryBindingIsShownWholeAtAnyWidth) {
  for (int width : {40, 60, 120}) {
    tui::HelpPane pane;
    FakeHost host;
    const std::vector<std::string> words = help_words(pane, host, width, 1000);
    std::string all;
    for (const std::string& w : words) all += w + " ";
    for (const tui::KeyBinding& b : tui::key_table()) {
      std::istringstream in{std::string(b.help)};
      std::string text;
      for (std::string word; in >> word;) text += word + " ";
      EXPECT_NE(all.find(text), std::string::npos) << "width " << width << ": \"" << b.help << "\" is not shown whole";
    }
    for (tui::Context ctx : {tui::Context::diff, tui::Context::compute, tui::Context::prompt})
      EXPECT_NE(all.find(std::string(tui::context_title(ctx))), std::string::npos) << tui::context_title(ctx);
  }
}

// `/` in Help: the view moves to the first line holding the term, which is highlighted; n goes on,
// wrapping; a term found nowhere is said.
TEST(HelpPane, SlashSearchesTheKeysAndWhatTheyDo) {
  tui::HelpPane pane;
  FakeHost host;
  draw_pane(pane, host, 80, 10);
  ASSERT_TRUE(pane.act(tui::Action::search, host));
  host.type("kv cache");
  host.accept();
  tui::Canvas c = draw_pane(pane, host, 80, 10);
  EXPECT_NE(c.row_text(0).find("KV cache"), std::string::npos) << screen_text(c);
  EXPECT_TRUE(row_has_role(c, 0, tui::Role::match));
  EXPECT_NE(pane.state().find("kv cache"), std::string::npos);
  ASSERT_TRUE(pane.act(tui::Action::search_next, host));
  c = draw_pane(pane, host, 80, 10);
  EXPECT_NE(c.row_text(0).find("KV cache"), std::string::npos) << "one line holds it: n wraps to it again";

  ASSERT_TRUE(pane.act(tui::Action::search, host));
  host.type("zebra");
  host.accept();
  ASSERT_FALSE(host.flashes.empty());
  EXPECT_EQ(host.flashes.back(), "no match for 'zebra'");
}

}   // namespace
}   // namespace akview::testing
