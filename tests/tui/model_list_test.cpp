// The model list: the worker reads the selected model's header before the others (the panel under
// the list waits for it), the panel writes paths under $HOME as ~/…, and files that share a role
// by the dozen (an Ollama model's tensor blobs) are one row.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
std::string row_text(tui::Pane& pane, FakeHost& host, int w, int h, int y) {
  return draw_pane(pane, host, w, h).row_text(y);
}

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

// A folder of malformed files: the title's size is every file's (a model that did not open still
// takes its bytes), and the models that did not open are counted apart from those that did.
TEST(ModelList, MalformedFilesCountInTheSizeAndApartFromTheModels) {
  TempDir dir;
  ASSERT_TRUE(small_model().write(dir.file("good.gguf")));
  const std::string junk = std::string("GGUF\x03\0\0\0", 8) + std::string(992, '\xff');
  for (int i = 0; i < 3; ++i) {
    std::ofstream out(dir.file(fmt::format("bad{}.gguf", i)), std::ios::binary);
    out << junk;
  }
  auto entries = list_catalog(dir.path());
  ASSERT_TRUE(entries && entries->size() == 4);
  for (CatalogEntry& e : *entries) describe_catalog_entry(e);
  uint64_t on_disk = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir.path())) on_disk += f.file_size();
  FakeHost host;
  tui::ModelList list(dir.path(), std::move(*entries), host.worker());
  EXPECT_EQ(list.failed(), 3u);
  EXPECT_EQ(list.total_bytes(), on_disk);
}

// At 80 columns the demo's list keeps every column but the file count: columns are as wide as what
// they hold, and one is dropped only when the names would get less than a fifth of the width.
TEST(ModelList, EightyColumnsDropOnlyWhatDoesNotFit) {
  auto entries = list_catalog(std::string(AKVIEW_DEMO_DIR) + "/demo");
  ASSERT_TRUE(entries && entries->size() == 5);
  for (CatalogEntry& e : *entries) describe_catalog_entry(e);
  FakeHost host;
  tui::ModelList list("demo", std::move(*entries), host.worker());
  const std::string header = row_text(list, host, 80, 24, 0);
  EXPECT_TRUE(contains(header, "main type")) << header;
  EXPECT_FALSE(contains(header, "files")) << header;
  // No run of empty columns between the names and the format.
  const std::string row = row_text(list, host, 80, 24, 4);   // ollama/llama-demo:int4, the longest name but one
  EXPECT_TRUE(contains(row, "ollama.int4 4-bit g64")) << row;
  EXPECT_FALSE(contains(row, "      ollama")) << row;
  EXPECT_TRUE(contains(row_text(list, host, 120, 40, 0), "files"));
}

// The fit line keeps the first context and the trained one and drops those between for room.
TEST(ModelList, FitTotalsKeepTheFirstAndTheTrainedContextWhenNarrow) {
  std::vector<fit::FitTableRow> rows;
  for (uint64_t c : fit::table_contexts(131072)) rows.push_back({c, 0, {}, {}, c * 1024, 0});
  const std::string wide = tui::fit_totals(rows, 200);
  EXPECT_EQ(wide, "4.00 MiB at 4k tokens · 8.00 MiB at 8k · 32.00 MiB at 32k · 128.00 MiB at 128k");
  const std::string narrow = tui::fit_totals(rows, 63);
  EXPECT_EQ(narrow, "4.00 MiB at 4k tokens · 8.00 MiB at 8k · … · 128.00 MiB at 128k");
  EXPECT_EQ(tui::display_width(narrow), 63);
  EXPECT_EQ(tui::fit_totals(rows, 62), "4.00 MiB at 4k tokens · … · 128.00 MiB at 128k");
  EXPECT_EQ(tui::fit_totals(rows, 10), "… · 128.00 MiB at 128k");
  EXPECT_EQ(tui::fit_totals({rows.front()}, 10), "4.00 MiB at 4k tokens");
}

}   // namespace
}   // namespace akview::testing
