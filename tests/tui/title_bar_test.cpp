// The title bar of an opened model leads with what the model is (the Ollama name:tag, the Hugging
// Face repository, the file or folder name), then tensors, parameters and type mix, the path last.
#include <string>

#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "ui/tui/canvas.hpp"
#include "ui/tui/title_bar.hpp"

namespace akview::testing {
namespace {

const std::string kDemo = std::string(AKVIEW_DEMO_DIR) + "/demo/";

TEST(TitleBar, LeadsWithTheModelThenItsNumbersAndEndsWithThePath) {
  auto s = open_session(kDemo + "llama-demo-q4km.gguf");
  const std::string title = tui::model_title(*s, 200);
  EXPECT_TRUE(title.starts_with(" llama-demo-q4km.gguf │ 39 tensors │ 3.4M params │ q4_k 71% q6_k 23%")) << title;
  EXPECT_TRUE(title.ends_with("│ " + kDemo + "llama-demo-q4km.gguf")) << title;
  EXPECT_NE(title.find("│ gguf │ 2.06 MiB │"), std::string::npos) << title;
}

TEST(TitleBar, ThePathIsCutInTheMiddleToTheRoomLeft) {
  auto s = open_session(kDemo + "llama-demo-q4km.gguf");
  const std::string wide = tui::model_title(*s, 200);
  const int width = tui::display_width(wide) - 10;
  const std::string title = tui::model_title(*s, width);
  EXPECT_LE(tui::display_width(title), width) << title;
  EXPECT_NE(title.find("…"), std::string::npos) << title;
  EXPECT_TRUE(title.ends_with("q4km.gguf")) << title;
  // Too little room: no path at all, the rest as before.
  const std::string narrow = tui::model_title(*s, 60);
  EXPECT_EQ(narrow.find(AKVIEW_DEMO_DIR), std::string::npos) << narrow;
}

TEST(TitleBar, AnOllamaModelIsItsNameAndTag) {
  auto s = open_session(kDemo + "ollama/manifests/registry.ollama.ai/library/llama-demo/int4");
  EXPECT_EQ(tui::model_identity(s->model), "llama-demo:int4");
  EXPECT_TRUE(tui::model_title(*s, 200).starts_with(" llama-demo:int4 │ 39 tensors │")) << tui::model_title(*s, 200);
}

TEST(TitleBar, AFolderModelIsItsFolderName) {
  auto s = open_session(kDemo + "llama-demo-bf16/");
  EXPECT_EQ(tui::model_identity(s->model), "llama-demo-bf16");
}

}   // namespace
}   // namespace akview::testing
