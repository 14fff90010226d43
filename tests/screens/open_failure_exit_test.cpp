// How `akview PATH` ends on a terminal when there is nothing to show, through the real binary on a
// pty: a path that does not exist and a folder with no model in it are one line on stderr and exit
// 1, the full-screen view never started (no alternate screen, no frame); Ctrl-C in the view exits
// 130 (128 + SIGINT) with the terminal restored.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "tests/common/temp_dir.hpp"
#include "tests/screens/harness.hpp"

namespace akview::testing {
namespace {

// The text the child wrote, with the pty's CR LF as LF.
std::string output_text(const Terminal& term) {
  std::string out;
  for (char c : term.output_bytes())
    if (c != '\r') out += c;
  return out;
}

void expect_one_line_and_no_view(Terminal& term, const std::string& needle) {
  EXPECT_EQ(term.wait_exit(std::chrono::seconds(10)), 1);
  EXPECT_FALSE(term.alt_screen_used()) << "the full-screen view started";
  EXPECT_EQ(term.markers_seen(), 0) << "a frame was drawn";
  const std::string out = output_text(term);
  EXPECT_NE(out.find(needle), std::string::npos) << out;
  EXPECT_EQ(out.find('\n'), out.size() - 1) << "not one line: " << out;
  EXPECT_EQ(out.find('\033'), std::string::npos) << "escape sequences written: " << out;
}

TEST(OpenFailure, MissingPathIsOneLineAndExit1WithoutTheView) {
  Terminal term;
  term.start({AKVIEW_BINARY, "/no/such/path"}, {80, 24});
  expect_one_line_and_no_view(term, "/no/such/path: cannot open: No such file or directory");
}

TEST(OpenFailure, EmptyFolderIsOneLineAndExit1WithoutTheView) {
  TempDir dir;
  ASSERT_TRUE(std::filesystem::create_directory(dir.file("empty")));
  Terminal term;
  term.start({AKVIEW_BINARY, "empty"}, {80, 24}, {}, dir.path());
  expect_one_line_and_no_view(term, "empty: directory holds no model");
}

TEST(OpenFailure, MissingReferenceIsOneLineAndExit1WithoutTheView) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo/llama-demo-q4km.gguf", "--ref", "no-such-model"}, {80, 24}, {}, AKVIEW_DEMO_DIR);
  expect_one_line_and_no_view(term, "no-such-model: cannot open");
}

TEST(OpenFailure, CtrlCInTheViewExits130WithTheTerminalRestored) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo/llama-demo-q4km.gguf"}, {80, 24}, {}, AKVIEW_DEMO_DIR);
  ASSERT_TRUE(term.wait_for_text("1 Tensors", std::chrono::seconds(10))) << term.screen().text();
  term.settle();
  term.send_key("C-c");
  EXPECT_EQ(term.wait_exit(), 130);
  EXPECT_TRUE(term.alt_screen_used());
  EXPECT_FALSE(term.alt_screen_active());
}

}   // namespace
}   // namespace akview::testing
