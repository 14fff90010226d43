// Long header values shown whole: wrapping between words at the pane's width, and the Header pane
// opening a chat template with Enter, scrolling it, searching it, and closing it with Esc.
#include <string>

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
  w.add_tensor({"token_embd.weight", 0, {8, 4}});
  ASSERT_TRUE(w.write(dir.file("t.gguf")));
  auto model = open_model(dir.file("t.gguf"));
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  auto session = tui::make_session(std::move(*model));
  tui::HeaderPane pane(session);
  FakeHost host;
  draw_pane(pane, host, 100, 30);
  // Put the cursor on the template's row.
  ASSERT_TRUE(pane.act(Action::search, host));
  host.type("chat_template");
  host.accept();
  ASSERT_TRUE(pane.act(Action::open, host));
  ASSERT_NE(pane.viewer(), nullptr);
  EXPECT_EQ(pane.context(), tui::Context::detail);
  tui::Canvas c = draw_pane(pane, host, 100, 30);
  EXPECT_NE(c.row_text(0).find("tokenizer.chat_template  (61 lines"), std::string::npos) << screen_text(c);
  EXPECT_EQ(c.row_text(1), "{% if messages[0]['role'] == 'user' %}<|user|> {{ content }}{% endif %}");
  EXPECT_EQ(pane.viewer()->lines().size(), 61u);
  // The end of the text is there, and search finds a line below the screen.
  ASSERT_TRUE(pane.act(Action::search, host));
  host.type("FINAL_marker");
  host.accept();
  c = draw_pane(pane, host, 100, 30);
  EXPECT_EQ(pane.viewer()->top(), 60 - 28);   // the last page: the match is on it
  EXPECT_NE(screen_text(c).find("{{ final_marker }}"), std::string::npos) << screen_text(c);
  EXPECT_TRUE(row_has_role(c, find_row(c, {"final_marker"}), tui::Role::match));
  ASSERT_TRUE(pane.act(Action::home, host));
  EXPECT_EQ(pane.viewer()->top(), 0);
  ASSERT_TRUE(pane.act(Action::back, host));
  EXPECT_EQ(pane.viewer(), nullptr);
  EXPECT_EQ(pane.context(), tui::Context::header);
}

TEST(TextViewer, EnterOnAShortValueOpensNothing) {
  TempDir dir;
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.add_tensor({"token_embd.weight", 0, {8, 4}});
  ASSERT_TRUE(w.write(dir.file("t.gguf")));
  auto model = open_model(dir.file("t.gguf"));
  ASSERT_TRUE(model.ok());
  tui::HeaderPane pane(tui::make_session(std::move(*model)));
  FakeHost host;
  draw_pane(pane, host, 100, 30);
  ASSERT_TRUE(pane.act(Action::search, host));
  host.type("general.architecture");
  host.accept();
  ASSERT_TRUE(pane.act(Action::open, host));
  EXPECT_EQ(pane.viewer(), nullptr);
}

}   // namespace
}   // namespace akview::testing
