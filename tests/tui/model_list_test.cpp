// The model list: the worker reads the selected model's header before the others (the panel under
// the list waits for it), the panel writes paths under $HOME as ~/…, and files that share a role
// by the dozen (an Ollama model's tensor blobs) are one row.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/catalog.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/gguf/gguf_test_util.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "ui/tui/model_list.hpp"

namespace akview::testing {
namespace {

// The text of row y of the pane drawn at w x h.
std::string row_text(tui::Pane& pane, FakeHost& host, int w, int h, int y) { return draw_pane(pane, host, w, h).row_text(y); }

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

TEST(ModelList, TheSelectedModelIsDescribedBeforeTheOthers) {
  TempDir dir;
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(small_model().write(dir.file(fmt::format("m{:02}.gguf", i))));
  auto entries = list_catalog(dir.path());
  ASSERT_TRUE(entries && entries->size() == 20);
  FakeHost host;
  tui::Worker& worker = host.worker();
  // Hold the worker until the cursor is on the last model.
  std::atomic<bool> release{false};
  tui::Job hold;
  hold.label = "hold";
  hold.run = [&](tui::JobContext&) {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  worker.submit(std::move(hold));
  tui::ModelList list(dir.path(), std::move(*entries), worker);
  list.act(tui::Action::end, host);
  const int w = 100, h = 40;
  ASSERT_TRUE(contains(row_text(list, host, w, h, 20), "m19.gguf"));   // header row, then m00..m19
  ASSERT_TRUE(contains(row_text(list, host, w, h, 20), "…"));          // not read yet
  release = true;
  // The first result the worker posts is the selected model's.
  std::vector<std::function<void()>> posted;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (posted.empty() && std::chrono::steady_clock::now() < deadline) {
    posted = worker.take_posted();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_FALSE(posted.empty());
  posted.front()();
  EXPECT_TRUE(contains(row_text(list, host, w, h, 20), "gguf")) << row_text(list, host, w, h, 20);
  EXPECT_FALSE(contains(row_text(list, host, w, h, 20), "…"));
  EXPECT_TRUE(contains(row_text(list, host, w, h, 1), "…")) << "m00 was read first: " << row_text(list, host, w, h, 1);
}

TEST(ModelList, ThePanelWritesPathsUnderHomeWithATilde) {
  TempDir home;
  std::filesystem::create_directories(home.file("models"));
  ASSERT_TRUE(small_model().write(home.file("models/a.gguf")));
  ASSERT_TRUE(small_model().write(home.file("models/b.gguf")));   // one file alone is opened, not listed
  const char* old = std::getenv("HOME");
  const std::string saved = old ? old : "";
  ::setenv("HOME", home.path().c_str(), 1);
  auto entries = list_catalog(home.file("models"));
  ASSERT_TRUE(entries && entries->size() == 2);
  FakeHost host;
  tui::ModelList list(home.file("models"), std::move(*entries), host.worker());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string screen;
  while (std::chrono::steady_clock::now() < deadline) {
    for (auto& apply : host.worker().take_posted()) apply();
    screen = screen_text(draw_pane(list, host, 100, 30));
    if (contains(screen, "files")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (old) ::setenv("HOME", saved.c_str(), 1);
  else ::unsetenv("HOME");
  EXPECT_TRUE(contains(screen, "~/models/a.gguf")) << screen;   // the path line
  EXPECT_FALSE(contains(screen, home.path())) << screen;
}

// The demo's Ollama int4 model keeps each tensor in a blob of its own (39 of them): the panel
// says so in one row (count, total size, folder), and its manifest, configs and that row fit.
TEST(ModelList, ManyFilesOfOneRoleAreOneRow) {
  auto entries = list_catalog(AKVIEW_DEMO_DIR "/demo");
  ASSERT_TRUE(entries.has_value());
  size_t at = entries->size();
  for (size_t k = 0; k < entries->size(); ++k)
    if (contains((*entries)[k].name, "int4")) at = k;
  ASSERT_LT(at, entries->size()) << "the demo has an Ollama int4 model";
  FakeHost host;
  tui::ModelList list(AKVIEW_DEMO_DIR "/demo", std::move(*entries), host.worker());
  for (size_t k = 0; k < at; ++k) list.act(tui::Action::down, host);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string screen;
  while (std::chrono::steady_clock::now() < deadline) {
    for (auto& apply : host.worker().take_posted()) apply();
    screen = screen_text(draw_pane(list, host, 100, 30));
    if (contains(screen, "files ")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(contains(screen, "39 tensor blobs  ollama/blobs/")) << screen;
  EXPECT_TRUE(contains(screen, "manifest")) << screen;
  EXPECT_FALSE(contains(screen, "more files")) << screen;
}

}  // namespace
}  // namespace akview::testing
