// akview's keys and searches through the real binary on a pty: `?` toggles Help and Esc leaves it
// for the pane before; a model left for the list comes back whole (pane, sort, Compute results);
// keys typed while Layout or Groups fill are queued, not dropped; the model list's search moves as
// the user types and says when nothing matches; one search prompt and status ("match k/N") on every
// list, C-u clearing it; one message for a bad pattern in a search and a filter; Space pages down in
// Tensors and folds a layer when grouped; Layout of a file cut short while open keeps its counter
// and its error apart from the bytes; Diff at 80 columns names both models; every pane's status bar
// says how to go back and where the help is.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>

#include "tests/common/temp_dir.hpp"
#include "tests/screens/harness.hpp"
#include "tests/writers/gguf_writer.hpp"

namespace akview::testing {
namespace {

// The status bar (the last row).
std::string status_row(const Screen& s) { return s.text_rows().back(); }

// "NAME k/N" in the status bar: k, or -1.
long position_in(const Screen& s, const std::string& name) {
  std::smatch m;
  const std::string row = status_row(s);
  if (!std::regex_search(row, m, std::regex(name + R"( (\d+)/(\d+))"))) return -1;
  return std::stol(m[1]);
}

void open_demo_model(Terminal& term, int row_of_model, TermSize size = {120, 40}) {
  term.start({AKVIEW_BINARY, "demo"}, size, {}, AKVIEW_DEMO_DIR);
  term.settle();
  for (int i = 0; i < row_of_model; ++i) term.press("Down");
  term.press("Enter");
  ASSERT_TRUE(term.wait_for_text("1 Tensors", Terminal::default_timeout())) << term.screen().text();
  term.settle();
}

// `?` shows Help and `?` again returns to the pane it was opened from; Esc on Help does the same;
// Esc leaves the model for the list, and Enter brings it back as it was: its pane, its sort, its
// Compute results.
TEST(AkviewKeys, HelpTogglesAndAModelLeftForTheListComesBackWhole) {
  Terminal term;
  open_demo_model(term, 0);   // llama-demo-bf16
  term.press("]");            // sort by name, descending
  ASSERT_NE(status_row(term.screen()).find("sort name ▼"), std::string::npos) << term.screen().text();
  term.press("6");
  for (int i = 0; i < 12 && term.screen().find_row("on reference") == -1; ++i) term.press("b");
  term.press("r");
  ASSERT_NE(status_row(term.screen()).find("1 result"), std::string::npos) << term.screen().text();
  term.press("?");
  ASSERT_NE(position_in(term.screen(), "line"), -1) << term.screen().text();   // Help
  term.press("?");
  EXPECT_NE(status_row(term.screen()).find("1 result"), std::string::npos) << "? again: back to Compute\n"
                                                                           << term.screen().text();
  term.press("?");
  term.press("Esc");
  EXPECT_NE(status_row(term.screen()).find("1 result"), std::string::npos) << "Esc on Help: back to Compute\n"
                                                                           << term.screen().text();
  term.press("Esc");
  ASSERT_NE(position_in(term.screen(), "model"), -1) << "Esc: the model list\n" << term.screen().text();
  term.press("Enter");
  ASSERT_TRUE(term.wait_for_text("1 Tensors", Terminal::default_timeout())) << term.screen().text();
  term.settle();
  EXPECT_NE(status_row(term.screen()).find("1 result"), std::string::npos) << "reopened on Compute, its result kept\n"
                                                                           << term.screen().text();
  EXPECT_EQ(term.screen().find_row("(no results yet)"), -1) << term.screen().text();
  term.press("1");
  EXPECT_NE(status_row(term.screen()).find("sort name ▼"), std::string::npos) << "the sort kept\n"
                                                                              << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// A GGUF of many small tensors: its layout takes the worker a while to list, time enough for keys
// typed at once after `3` to arrive before the pane is filled.
std::string write_many_tensors(const TempDir& dir) {
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  for (int i = 0; i < 20000; ++i)
    w.add_tensor({"blk." + std::to_string(i / 10) + ".t" + std::to_string(i % 10) + ".weight", 0, {4}});
  w.add_tensor({"blk.0.ffn_up.weight", 8, {256, 64}});   // q8_0: 8 groups a row
  const std::string path = dir.file("many.gguf");
  EXPECT_TRUE(w.write(path));
  return path;
}

TEST(AkviewKeys, KeysTypedWhileLayoutAndGroupsFillAreNotLost) {
  TempDir dir;
  write_many_tensors(dir);
  Terminal term;
  term.start({AKVIEW_BINARY, "many.gguf"}, {120, 40}, {}, dir.path());
  term.settle();
  // One burst: no settle between the keys.
  term.send_key("3");
  for (int i = 0; i < 3; ++i) term.send_key("j");
  term.settle();
  EXPECT_EQ(position_in(term.screen(), "region"), 4) << term.screen().text();
  // Groups of the q8_0 tensor (the last row of Tensors).
  term.press("1");
  term.press("End");
  term.send_key("4");
  for (int i = 0; i < 3; ++i) term.send_key("j");
  term.settle();
  EXPECT_EQ(position_in(term.screen(), "group"), 4) << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// The model list's search moves as the user types, like every other search; no match says so on
// the prompt line; Enter keeps the term, and the status bar counts the matches.
TEST(AkviewKeys, ModelListSearchMovesAsTheUserTypes) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo"}, {120, 40}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  ASSERT_EQ(position_in(term.screen(), "model"), 1) << term.screen().text();
  term.press("/");
  EXPECT_NE(status_row(term.screen()).find("search (text or regex"), std::string::npos) << term.screen().text();
  term.type("ollama");
  EXPECT_EQ(term.screen().find_row("model 4/5"), -1);   // the prompt holds the status row while typing
  term.press("Enter");
  EXPECT_EQ(position_in(term.screen(), "model"), 4) << term.screen().text();
  EXPECT_NE(status_row(term.screen()).find("match 1/2 'ollama'"), std::string::npos) << term.screen().text();
  term.press("n");
  EXPECT_EQ(position_in(term.screen(), "model"), 5) << term.screen().text();
  EXPECT_NE(status_row(term.screen()).find("match 2/2"), std::string::npos) << term.screen().text();
  term.press("/");
  term.type("zzz");
  EXPECT_NE(status_row(term.screen()).find("no match for 'zzz'"), std::string::npos) << term.screen().text();
  // C-u clears what was typed.
  term.press("C-u");
  EXPECT_TRUE(status_row(term.screen()).ends_with(": █")) << status_row(term.screen());
  term.press("Esc");
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// The same search prompt and status on the Tensors, Header and Mapping panes.
TEST(AkviewKeys, OneSearchOnEveryList) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo/llama-demo-q4km.gguf"}, {120, 40}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  for (const char* pane : {"1", "2", "5"}) {
    term.press(pane);
    term.press("/");
    EXPECT_NE(status_row(term.screen()).find("search (text or regex"), std::string::npos) << pane << "\n"
                                                                                          << term.screen().text();
    term.type("attention");
    term.press("Enter");
    EXPECT_TRUE(std::regex_search(status_row(term.screen()), std::regex(R"(match 1/\d+ 'attention')")))
        << pane << "\n"
        << term.screen().text();
    term.press("n");
    EXPECT_TRUE(std::regex_search(status_row(term.screen()), std::regex(R"(match 2/\d+ 'attention')")))
        << pane << "\n"
        << term.screen().text();
  }
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// A pattern that is not valid says so in the same words in a search and in a filter.
TEST(AkviewKeys, OneMessageForABadPattern) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo/llama-demo-q4km.gguf"}, {120, 40}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  term.press("/");
  term.type("(");
  EXPECT_NE(status_row(term.screen()).find("bad pattern '('"), std::string::npos) << term.screen().text();
  term.press("Esc");
  term.press("\\");
  term.type("[");
  EXPECT_NE(status_row(term.screen()).find("bad pattern '['"), std::string::npos) << term.screen().text();
  term.press("Enter");
  EXPECT_NE(status_row(term.screen()).find("bad pattern '['"), std::string::npos) << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// Space pages down in Tensors; grouped by layer (z) it folds the layer the cursor is in.
TEST(AkviewKeys, SpacePagesDownAndFoldsALayerWhenGrouped) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo/llama-demo-q4km.gguf"}, {120, 24}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  ASSERT_EQ(position_in(term.screen(), "row"), 1) << term.screen().text();
  term.press(" ");
  EXPECT_GT(position_in(term.screen(), "row"), 10) << term.screen().text();
  term.press("Home");
  term.press("z");
  const int layers_before = term.screen().find_row("▸");
  EXPECT_EQ(layers_before, -1) << term.screen().text();
  term.press("j");   // a tensor row under the first group
  term.press(" ");
  EXPECT_NE(term.screen().find_row("▸"), -1) << term.screen().text();
  EXPECT_EQ(position_in(term.screen(), "row"), 1) << "the cursor on the folded group's row\n" << term.screen().text();
  term.press(" ");
  EXPECT_EQ(term.screen().find_row("▸"), -1) << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// Layout of a file cut short while it is open: the error has a line of its own (no bytes drawn over
// it), the region counter stays in the status bar.
TEST(AkviewKeys, LayoutOfAFileCutShortWhileOpenStaysReadable) {
  TempDir dir;
  const std::string path = dir.file("cut.gguf");
  std::filesystem::copy_file(std::string(AKVIEW_DEMO_DIR) + "/demo/llama-demo-q4km.gguf", path);
  Terminal term;
  term.start({AKVIEW_BINARY, "cut.gguf"}, {120, 40}, {}, dir.path());
  term.settle();
  ASSERT_EQ(::truncate(path.c_str(), 1000000), 0);
  term.press("3");
  term.press("G");
  term.press("Enter");
  const Screen s = term.screen();
  EXPECT_NE(position_in(s, "region"), -1) << s.text();
  bool error_seen = false;
  for (const std::string& row : s.text_rows()) {
    const size_t at = row.find("the file changed while open");
    if (at == std::string::npos) continue;
    error_seen = true;
    EXPECT_EQ(row.find("│"), std::string::npos) << "the error shares its row with the tree and the bytes: " << row;
  }
  EXPECT_TRUE(error_seen) << s.text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// Diff at 80 columns with paths wider than that: the first line names A and B, each cut in the middle.
TEST(AkviewKeys, DiffNamesBothModelsAt80Columns) {
  Terminal term;
  // Whole paths: together wider than the terminal.
  const std::string demo = std::filesystem::absolute(std::string(AKVIEW_DEMO_DIR) + "/demo").string();
  term.start({AKVIEW_BINARY, demo + "/llama-demo-q4km.gguf", "--ref", demo + "/llama-demo-bf16"}, {80, 24}, {},
             AKVIEW_DEMO_DIR);
  term.settle();
  term.press("8");
  const std::string first = term.screen().text_rows()[2];
  EXPECT_TRUE(first.starts_with("A ")) << term.screen().text();
  EXPECT_NE(first.find("q4km"), std::string::npos) << first;
  EXPECT_NE(first.find(" · B "), std::string::npos) << first;
  EXPECT_NE(first.find("bf16"), std::string::npos) << first;
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// Every pane's status bar says how to go back and where the help is.
TEST(AkviewKeys, EveryPaneHintsEscAndHelp) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo/llama-demo-q4km.gguf", "--ref", "demo/llama-demo-bf16"}, {120, 40}, {},
             AKVIEW_DEMO_DIR);
  term.settle();
  for (const char* pane : {"1", "2", "3", "4", "5", "6", "8"}) {
    term.press(pane);
    const std::string row = status_row(term.screen());
    EXPECT_NE(row.find("Esc back"), std::string::npos) << pane << ": " << row;
    EXPECT_NE(row.find("? help"), std::string::npos) << pane << ": " << row;
  }
  term.press("7");
  EXPECT_NE(status_row(term.screen()).find("Esc back"), std::string::npos) << status_row(term.screen());
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

}   // namespace
}   // namespace akview::testing
