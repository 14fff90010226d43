// Long header values shown whole: wrapping between words at the pane's width, the Header pane
// opening a chat template with Enter, scrolling it, searching it, and closing it with Esc, and a
// 150,000-token array opened whole from one chunk of elements, searched with "match k/N".
#include <memory>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "ui/tui/header_pane.hpp"
#include "ui/tui/text_viewer.hpp"

namespace akview::testing {
namespace {

using tui::Action;

TEST(TextViewer, WrapsBetweenWordsAtTheWidthAndAtLineBreaks) {
  const auto lines = tui::wrap_text("alpha beta gamma delta\nepsilon", 12);
  const std::vector<std::string> want = {"alpha beta ", "gamma delta", "epsilon"};
  EXPECT_EQ(lines, want);
  // A word longer than the width is cut at the width; nothing is lost.
  const auto long_word = tui::wrap_text(std::string(30, 'x'), 12);
  ASSERT_EQ(long_word.size(), 3u);
  EXPECT_EQ(long_word[2], std::string(6, 'x'));
  // Control characters are escaped, never sent to the terminal.
  EXPECT_EQ(tui::wrap_text("a\x1b[31mb", 40), std::vector<std::string>{"a\\x1b[31mb"});
}

// The Header pane on the model `w` writes, drawn at 100x30, its cursor on the first key matching
// `key` (the tree's search).
std::unique_ptr<tui::HeaderPane> header_at(GgufWriter& w, const TempDir& dir, FakeHost& host, std::string_view key) {
  w.add_tensor({"token_embd.weight", 0, {8, 4}});
  EXPECT_TRUE(w.write(dir.file("t.gguf")));
  auto model = open_model(dir.file("t.gguf"));
  EXPECT_TRUE(model.ok()) << model.error().to_string();
  auto pane = std::make_unique<tui::HeaderPane>(tui::make_session(std::move(*model)));
  draw_pane(*pane, host, 100, 30);
  EXPECT_TRUE(pane->act(Action::search, host));
  host.type(key);
  host.accept();
  return pane;
}

std::string long_template() {
  std::string t;
  for (int i = 0; i < 60; ++i)
    t += "{% if messages[" + std::to_string(i) + "]['role'] == 'user' %}<|user|> {{ content }}{% endif %}\n";
  return t + "{{ final_marker }}";
}

TEST(TextViewer, EnterOnAChatTemplateOpensItWholeScrollableAndSearchable) {
  TempDir dir;
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.set("tokenizer.chat_template", gguf_string(long_template()));
  FakeHost host;
  auto owned = header_at(w, dir, host, "chat_template");
  tui::HeaderPane& pane = *owned;
  ASSERT_TRUE(pane.act(Action::open, host));
  ASSERT_NE(pane.viewer(), nullptr);
  EXPECT_EQ(pane.context(), tui::Context::detail);
  tui::Canvas c = draw_pane(pane, host, 100, 30);
  EXPECT_NE(c.row_text(0).find("tokenizer.chat_template  (61 lines"), std::string::npos) << screen_text(c);
  EXPECT_EQ(c.row_text(1), "{% if messages[0]['role'] == 'user' %}<|user|> {{ content }}{% endif %}");
  EXPECT_EQ(pane.viewer()->line_count(), 61u);
  // The end of the text is there, and search finds a line below the screen.
  ASSERT_TRUE(pane.act(Action::search, host));
  host.type("FINAL_marker");
  host.accept();
  c = draw_pane(pane, host, 100, 30);
  EXPECT_EQ(pane.viewer()->top_line(), 60u - 28u);   // the last page: the match is on it
  EXPECT_EQ(pane.state(), "match 1/1 'FINAL_marker'");
  EXPECT_NE(screen_text(c).find("{{ final_marker }}"), std::string::npos) << screen_text(c);
  EXPECT_TRUE(row_has_role(c, find_row(c, {"final_marker"}), tui::Role::match));
  ASSERT_TRUE(pane.act(Action::home, host));
  EXPECT_EQ(pane.viewer()->top_line(), 0u);
  ASSERT_TRUE(pane.act(Action::back, host));
  EXPECT_EQ(pane.viewer(), nullptr);
  EXPECT_EQ(pane.context(), tui::Context::header);
}

TEST(TextViewer, EnterOnAShortValueOpensNothing) {
  TempDir dir;
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  FakeHost host;
  auto pane = header_at(w, dir, host, "general.architecture");
  ASSERT_TRUE(pane->act(Action::open, host));
  EXPECT_EQ(pane->viewer(), nullptr);
}

// A long line wraps, and the view scrolls through its rows one at a time.
TEST(TextViewer, ScrollsThroughTheRowsOfAWrappedLine) {
  std::string text = "short\n";
  for (int i = 0; i < 40; ++i) text += "word" + std::to_string(i) + " ";
  text += "\nlast";
  tui::TextViewer v("t", text);
  FakeHost host;
  tui::Canvas c(20, 6);
  v.draw(c, tui::Rect{0, 0, 20, 6});
  EXPECT_EQ(v.line_count(), 3u);
  ASSERT_TRUE(v.act(Action::down, host));
  ASSERT_TRUE(v.act(Action::down, host));
  EXPECT_EQ(v.top_line(), 1u);
  EXPECT_EQ(v.top_row(), 1);
  ASSERT_TRUE(v.act(Action::end, host));
  v.draw(c, tui::Rect{0, 0, 20, 6});
  EXPECT_EQ(c.row_text(5), "last");   // the last page is full and ends on the last line
  ASSERT_TRUE(v.act(Action::down, host));
  EXPECT_EQ(c.row_text(5), "last");
  EXPECT_EQ(v.position(), "line 2/3");
}

constexpr uint64_t kTokens = 150000;

std::string token(uint64_t i) { return "tok_" + std::to_string(i) + (i % 7 == 3 ? "\x1b" : ""); }

TEST(TextViewer, EnterOnATokenArrayOpensItWholeFromOneChunkAndSearchesEveryElement) {
  TempDir dir;
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  std::vector<GgufValue> tokens;
  tokens.reserve(kTokens);
  for (uint64_t i = 0; i < kTokens; ++i) tokens.push_back(gguf_string(token(i)));
  w.set("tokenizer.ggml.tokens", gguf_array(kGgufString, tokens));
  FakeHost host;
  auto owned = header_at(w, dir, host, "ggml.tokens");
  tui::HeaderPane& pane = *owned;
  ASSERT_TRUE(pane.act(Action::open, host));
  ASSERT_NE(pane.viewer(), nullptr) << "Enter on an array opens it whole";
  tui::Canvas c = draw_pane(pane, host, 100, 30);
  EXPECT_NE(c.row_text(0).find("tokenizer.ggml.tokens  (150000 elements"), std::string::npos) << screen_text(c);
  EXPECT_EQ(c.row_text(1), "[     0] tok_0");
  EXPECT_EQ(c.row_text(4), "[     3] tok_3\\x1b");   // escaped as the pane escapes
  EXPECT_LE(pane.largest_read(), 1024u) << "opened from one chunk, not the whole array";
  EXPECT_LE(pane.elements_read(), 2048u);
  EXPECT_EQ(pane.position(), "[0] of 150000");

  // `/` searches every element, as everywhere: the view goes there, "match k/N", n wraps.
  ASSERT_TRUE(pane.act(Action::search, host));
  host.type("tok_14999");   // tok_14999 and tok_149990 .. tok_149999
  host.accept();
  EXPECT_EQ(pane.viewer()->top_line(), 14999u);
  EXPECT_EQ(pane.state(), "match 1/11 'tok_14999'");
  ASSERT_TRUE(pane.act(Action::search_next, host));
  EXPECT_EQ(pane.state(), "match 2/11 'tok_14999'");
  c = draw_pane(pane, host, 100, 30);
  const int row = find_row(c, {"[149990] tok_149990"});
  ASSERT_GE(row, 1) << screen_text(c);
  EXPECT_TRUE(row_has_role(c, row, tui::Role::match));
  ASSERT_TRUE(pane.act(Action::end, host));
  c = draw_pane(pane, host, 100, 30);
  EXPECT_EQ(c.row_text(29), "[149999] tok_149999\\x1b");
  ASSERT_TRUE(pane.act(Action::back, host));
  EXPECT_EQ(pane.viewer(), nullptr);

  // Space still folds: the array's elements as rows under it, read as they come on screen.
  const uint64_t rows = pane.row_count();
  ASSERT_TRUE(pane.act(Action::fold, host));
  EXPECT_EQ(pane.row_count(), rows + kTokens);
  // Enter on an element opens the whole array there.
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(pane.act(Action::down, host));
  draw_pane(pane, host, 100, 30);
  ASSERT_TRUE(pane.act(Action::open, host));
  ASSERT_NE(pane.viewer(), nullptr);
  EXPECT_GT(pane.viewer()->top_line(), 0u);
  EXPECT_LT(pane.viewer()->top_line(), 10u);
}

}   // namespace
}   // namespace akview::testing
