// The view's polish through the real binary on a pty, each on the demo as a user types it: the filter
// by column with its totals line, the title bar that leads with the model, Layout following the tensor
// chosen in Tensors, a long header value opened whole (a chat template; a 150,000-token array, searched),
// and an error wrapped between its words.
#include <gtest/gtest.h>

#include <string>

#include "tests/common/temp_dir.hpp"
#include "tests/screens/harness.hpp"
#include "tests/writers/gguf_writer.hpp"

namespace akview::testing {
namespace {

void start_demo(Terminal& term, TermSize size) {
  term.start({AKVIEW_BINARY, "demo/llama-demo-q4km.gguf"}, size, {}, AKVIEW_DEMO_DIR);
  term.settle();
}

// "Which tensors are Q6_K and how many bytes": `\`, the word, Enter.
TEST(PolishScreens, FilterByTypeShowsTheRowsAndTheirTotals) {
  for (TermSize size : {TermSize{120, 40}, TermSize{80, 24}}) {
    Terminal term;
    start_demo(term, size);
    term.press("\\");
    EXPECT_NE(term.screen().find_row("type:q6_k"), -1) << "the prompt says what it takes\n" << term.screen().text();
    term.type("type:q6_k");
    term.press("Enter");
    const int totals = term.screen().find_row("shown: 5 tensors");
    ASSERT_NE(totals, -1) << term.screen().text();
    const std::string line = term.screen().text_rows()[static_cast<size_t>(totals)];
    EXPECT_NE(line.find("472.50 KiB"), std::string::npos) << line;
    EXPECT_NE(line.find("23%"), std::string::npos) << line;
    EXPECT_NE(term.screen().find_row("filter type:q6_k (5 of 39)"), -1) << term.screen().text();
    term.send_key("q");
    EXPECT_EQ(term.wait_exit(), 0);
  }
}

TEST(PolishScreens, TheTitleLeadsWithTheModel) {
  Terminal term;
  start_demo(term, {80, 24});
  EXPECT_EQ(term.screen().row_text(0).rfind(" llama-demo-q4km.gguf │ 39 tensors │ 3.4M params │ q4_k 71%", 0), 0u)
      << term.screen().row_text(0);
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

TEST(PolishScreens, LayoutFollowsTheTensorChosenInTensors) {
  Terminal term;
  start_demo(term, {120, 40});
  term.press("/");
  term.type("layers.2.ffn.down");   // the names Tensors shows (canonical)
  term.press("Enter");
  term.press("3");
  ASSERT_TRUE(term.wait_for_text("region ", Terminal::default_timeout())) << term.screen().text();
  term.settle();
  // The selected region (reverse video row) is the tensor's data.
  const int row = term.screen().find_row("blk.2.ffn_down.weight");
  ASSERT_NE(row, -1) << term.screen().text();
  EXPECT_EQ(term.screen().find_row("region 1/"), -1) << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

TEST(PolishScreens, EnterOpensTheChatTemplateWhole) {
  Terminal term;
  start_demo(term, {80, 24});
  term.press("2");
  term.press("/");
  term.type("chat_template");
  term.press("Enter");
  term.press("Enter");
  ASSERT_NE(term.screen().find_row("tokenizer.chat_template  ("), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("{% for m in messages %}<|{{ m['role'] }}|>"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("{% endfor %}"), -1) << term.screen().text();
  term.press("Esc");   // back on the key list: the whole value is gone
  EXPECT_EQ(term.screen().find_row("{% endfor %}"), -1) << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// Enter on a vocabulary of 150,000 tokens opens the whole array, one element a line, at once; `/`
// finds an element far below, "match k/N" as everywhere; Space still folds the array in the tree.
TEST(PolishScreens, EnterOpensATokenArrayWholeAndSearchFindsAnyElement) {
  TempDir dir;
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  std::vector<GgufValue> tokens;
  for (int i = 0; i < 150000; ++i) tokens.push_back(gguf_string("tok_" + std::to_string(i)));
  w.set("tokenizer.ggml.tokens", gguf_array(kGgufString, tokens));
  w.add_tensor({"token_embd.weight", 0, {8, 4}});
  ASSERT_TRUE(w.write(dir.file("vocab.gguf")));
  Terminal term;
  term.start({AKVIEW_BINARY, "vocab.gguf"}, {80, 24}, {}, dir.path());
  term.settle();
  term.press("2");
  term.press("/");
  term.type("ggml.tokens");
  term.press("Enter");
  term.press("Enter");
  ASSERT_NE(term.screen().find_row("tokenizer.ggml.tokens  (150000 elements"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("[     0] tok_0"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("[0] of 150000"), -1) << term.screen().text();
  term.press("/");
  term.type("tok_149998");
  term.press("Enter");
  EXPECT_NE(term.screen().find_row("[149998] tok_149998"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("match 1/1 'tok_149998'"), -1) << term.screen().text();
  term.press("Esc");   // back on the tree, the array folded as it was
  EXPECT_EQ(term.screen().find_row("tok_149998"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("[150000]"), -1) << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// A model that does not open says why in lines cut between words, not inside them.
TEST(PolishScreens, AnErrorIsWrappedBetweenItsWords) {
  TempDir dir;
  GgufWriter good;
  good.add_tensor({"output_norm.weight", 0, {64}});
  ASSERT_TRUE(good.write(dir.file("a-good.gguf")));
  GgufWriter broken = good;
  broken.options().truncate_to = 16;   // inside the 24-byte header
  ASSERT_TRUE(broken.write(dir.file("b-broken.gguf")));
  Terminal term;
  term.start({AKVIEW_BINARY, "."}, {40, 12}, {}, dir.path());
  ASSERT_TRUE(term.wait_for_text("b-broken.gguf", Terminal::default_timeout())) << term.screen().text();
  term.press("Down");
  term.press("Enter");
  ASSERT_TRUE(term.wait_for_text("cannot open the model", Terminal::default_timeout())) << term.screen().text();
  term.settle();
  const auto rows = term.screen().text_rows();
  std::string joined;
  for (int y = term.screen().find_row("cannot open the model") + 1; y < static_cast<int>(rows.size()); ++y) {
    std::string r = rows[static_cast<size_t>(y)];
    if (r.find("Esc") != std::string::npos || r.empty()) break;
    joined += (joined.empty() ? "" : " ") + r.substr(r.find_first_not_of(' '));
  }
  EXPECT_NE(joined.find("too short for the 24-byte GGUF header"), std::string::npos) << term.screen().text();
  EXPECT_NE(joined.find("file is 16 bytes,"), std::string::npos) << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

}   // namespace
}   // namespace akview::testing
