// akview's own TUI through the real binary on a pty, asserting state: the demo folder's model list,
// the panel about the selected model (and a model that does not open), opening a model, search, filter and its inverse,
// sorting by bytes, Esc cancelling running statistics with the next frame within 100 ms, the mouse (tabs, rows, wheel),
// a file truncated while statistics run, and the model files untouched (sha256 and mtime) after a whole session; the
// Diff pane's comparison cancelled with Esc and resumed with `s`, and its `x` running the pair in Compute with the same
// error against the reference as `akview run --ref`.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include <fmt/format.h>

#include "core/formats/format.hpp"
#include "core/sha256.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/screens/harness.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "ui/batch/commands.hpp"

namespace akview::testing {
namespace {

TEST(AkviewScreens, DemoListOpensAModelAndQuitsCleanly) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo"}, {120, 40}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  ASSERT_NE(term.screen().find_row("llama-demo-q4km.gguf"), -1) << term.screen().text();
  ASSERT_NE(term.screen().find_row("5 models"), -1) << term.screen().text();
  // The BF16 model's KV cache is at its own dtype (transformers), not llama.cpp's f16.
  EXPECT_NE(term.screen().find_row("bf16 KV cache"), -1) << term.screen().text();
  term.press("Down");
  term.press("Down");
  // The panel says what the model needs to run: the total at each context of the fit table.
  const int fit_row = term.screen().find_row("fit  ");
  ASSERT_NE(fit_row, -1) << term.screen().text();
  EXPECT_NE(term.screen().text_rows()[static_cast<size_t>(fit_row)].find(" at 2k tokens"), std::string::npos)
      << term.screen().text();
  EXPECT_NE(term.screen().find_row("llama.cpp"), -1) << term.screen().text();
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

// The panel under the model list describes the selected model and follows the cursor; a model that
// does not open says why there (file, offset, what is wrong); a short terminal shows the list alone.
TEST(AkviewScreens, ModelListPanelDescribesTheSelectedModel) {
  TempDir dir;
  GgufWriter good;
  good.set("general.architecture", gguf_string("qwen3"));
  good.set("general.name", gguf_string("tiny one"));
  good.set("qwen3.block_count", gguf_u32(2));
  good.add_tensor({"blk.0.ffn_up.weight", 8, {64, 32}});   // q8_0: 2,176 bytes each
  good.add_tensor({"blk.1.ffn_up.weight", 8, {64, 32}});
  good.add_tensor({"output_norm.weight", 0, {64}});
  ASSERT_TRUE(good.write(dir.file("a-good.gguf")));
  GgufWriter broken = good;
  broken.options().truncate_to = 100;   // inside the tensor infos
  ASSERT_TRUE(broken.write(dir.file("b-broken.gguf")));
  Terminal term;
  term.start({AKVIEW_BINARY, "."}, {100, 30}, {}, dir.path());
  ASSERT_TRUE(term.wait_for_text("a-good.gguf", Terminal::default_timeout())) << term.screen().text();
  term.settle();
  // Rows 3-4 are the list; the panel starts under it with the selected model's name.
  const int title = term.screen().find_row("qwen3");
  ASSERT_NE(title, -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("format        gguf · qwen3 · \"tiny one\""), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("tensors       3 · 4.2K parameters"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("94%    4.25 KiB      2 tensors  q8_0"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row(" 6%       256 B      1 tensor   f32"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("config        2 layers"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("model  a-good.gguf"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("? help"), -1) << term.screen().text();
  term.press("Down");
  const int error_row = term.screen().find_row("cannot open   ");
  ASSERT_NE(error_row, -1) << term.screen().text();
  EXPECT_NE(term.screen().text_rows()[static_cast<size_t>(error_row)].find("b-broken.gguf@0x"), std::string::npos)
      << term.screen().text();
  EXPECT_EQ(term.screen().find_row("format        gguf"), -1) << term.screen().text();
  // Too short for the panel: the list alone.
  term.resize(60, 12);
  term.settle();
  EXPECT_NE(term.screen().find_row("b-broken.gguf"), -1) << term.screen().text();
  EXPECT_EQ(term.screen().find_row("path "), -1) << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

TEST(AkviewScreens, TooSmallTerminalSaysSo) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo"}, {30, 8}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  EXPECT_NE(term.screen().find_row("terminal too small"), -1) << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// The row of the table's column titles ("name ... type ..."), or -1.
int header_row(const Screen& screen) {
  const auto rows = screen.text_rows();
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].find("name") != std::string::npos && rows[i].find("type") != std::string::npos &&
        rows[i].find("bytes") != std::string::npos)
      return static_cast<int>(i);
  return -1;
}

TEST(AkviewScreens, SortingByBytesPutsTheLargestFirst) {
  auto model = open_model(std::string(AKVIEW_DEMO_DIR) + "/demo/llama-demo-q4km.gguf");
  ASSERT_TRUE(model.ok());
  const Tensor* largest = &model->tensors.front();
  for (const Tensor& t : model->tensors)
    if (t.nbytes > largest->nbytes) largest = &t;
  Terminal term;
  term.start({AKVIEW_BINARY, "demo/llama-demo-q4km.gguf"}, {120, 40}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  term.press("c");   // native names
  for (int i = 0; i < 4; ++i) term.press(">");
  term.press("]");
  const int head = header_row(term.screen());
  ASSERT_GE(head, 0) << term.screen().text();
  const std::string first = term.screen().text_rows()[static_cast<size_t>(head) + 1];
  EXPECT_NE(first.find(std::string(largest->name)), std::string::npos) << term.screen().text();
  EXPECT_NE(term.screen().find_row("sort bytes ▼"), -1) << term.screen().text();
  term.press("[");
  const std::string smallest_first = term.screen().text_rows()[static_cast<size_t>(head) + 1];
  EXPECT_EQ(smallest_first.find(std::string(largest->name)), std::string::npos);
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// A model whose statistics take seconds: 24 Q8_0 matrices of 4096x4096 (sparse: they read as zeros).
std::string write_slow_stats_model(const TempDir& dir) {
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  for (int layer = 0; layer < 24; ++layer)
    w.add_tensor({"blk." + std::to_string(layer) + ".ffn_up.weight", 8, {4096, 4096}});
  const std::string path = dir.file("slow.gguf");
  EXPECT_TRUE(w.write(path, /*sparse=*/true));
  return path;
}

TEST(AkviewScreens, EscCancelsRunningStatsAndTheNextFrameComesWithin100ms) {
  TempDir dir;
  write_slow_stats_model(dir);
  Terminal term;
  term.start({AKVIEW_BINARY, "slow.gguf"}, {120, 40}, {}, dir.path());
  // The model is on screen while the statistics still run (no settle: that would wait for them).
  ASSERT_TRUE(
      term.wait_until([](const Screen& s) { return s.find_row("24 tensors") != -1; }, Terminal::default_timeout()))
      << term.screen().text();
  ASSERT_TRUE(term.wait_until([&](const Screen&) { return term.last_marker().busy > 0; }, Terminal::default_timeout()));
  const long keys_before = term.events_sent();
  const auto t0 = std::chrono::steady_clock::now();
  term.send_key("Esc");
  ASSERT_TRUE(term.wait_until([&](const Screen&) { return term.last_marker().keys > keys_before; },
                              Terminal::default_timeout()));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LE(ms, 100) << "the frame after Esc took " << ms << " ms";
  term.settle();   // the worker has stopped: busy 0
  EXPECT_NE(term.screen().find_row("cancelled"), -1) << term.screen().text();
  // `s` starts them again (and Esc stops them again).
  const long keys_s = term.events_sent();
  term.send_key("s");
  EXPECT_TRUE(
      term.wait_until([&](const Screen&) { return term.last_marker().keys > keys_s && term.last_marker().busy > 0; },
                      Terminal::default_timeout()));
  term.press("Esc");
  EXPECT_EQ(term.last_marker().busy, 0);
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

TEST(AkviewScreens, MouseSelectsTabsAndRowsAndTheWheelScrolls) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo/llama-demo-q4km.gguf"}, {120, 40}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  ASSERT_GT(term.mouse_mode(), 0);
  const int tab_row = term.screen().find_row("2 Header");
  ASSERT_GE(tab_row, 0) << term.screen().text();
  const int tab_col = static_cast<int>(term.screen().text_rows()[static_cast<size_t>(tab_row)].find("2 Header"));
  term.click(tab_col + 2, tab_row);
  term.settle();
  EXPECT_NE(term.screen().find_row("general.architecture"), -1) << term.screen().text();
  term.press("1");
  const int head = header_row(term.screen());
  ASSERT_GE(head, 0);
  term.click(10, head + 5);   // the fifth tensor row
  term.settle();
  EXPECT_NE(term.screen().find_row("row 5/39"), -1) << term.screen().text();
  term.wheel(10, head + 5, Wheel::kDown);
  term.settle();
  EXPECT_EQ(term.screen().find_row("row 5/39"), -1) << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// Will it fit: a click on the model's size in the title bar opens the Fit pane (9), which shows the
// buffers llama.cpp would allocate; `+` doubles the context it is estimated for.
TEST(AkviewScreens, ClickOnTheTitleSizeOpensTheFitPane) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo/llama-demo-q4km.gguf"}, {120, 40}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  const std::string title = term.screen().text_rows()[0];
  const std::string format = "│ gguf │ ";   // the format, then the size (the file name holds "gguf │" too)
  const size_t format_at = title.find(format);
  ASSERT_NE(format_at, std::string::npos) << title;
  // columns, not bytes: the title's box-drawing bars are 3 bytes and 1 column each
  const std::string before = title.substr(0, format_at + format.size());
  int col = 0;
  for (unsigned char ch : before) col += (ch & 0xc0) != 0x80;
  term.click(col + 1, 0);
  term.settle();
  EXPECT_NE(term.screen().find_row("KV cache"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("trained context"), -1) << term.screen().text();
  term.press("+");
  EXPECT_EQ(term.screen().find_row("trained context"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("KV cache"), -1) << term.screen().text();
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// Another process cuts the model short while the statistics read it: the TUI stays up, says the
// file changed and shows the read error; q still exits 0.
TEST(AkviewScreens, FileTruncatedWhileStatsRunIsAnErrorNotACrash) {
  TempDir dir;
  const std::string path = write_slow_stats_model(dir);
  Terminal term;
  term.start({AKVIEW_BINARY, "slow.gguf"}, {120, 40}, {}, dir.path());
  // Opened, and the statistics running.
  ASSERT_TRUE(
      term.wait_until([&](const Screen& s) { return s.find_row("24 tensors") != -1 && term.last_marker().busy > 0; },
                      Terminal::default_timeout()));
  ASSERT_EQ(::truncate(path.c_str(), 1 << 20), 0);
  term.settle();
  EXPECT_TRUE(term.running());
  ASSERT_TRUE(term.wait_for_text("CHANGED ON DISK (R reloads)", std::chrono::seconds(5))) << term.screen().text();
  term.press("End");     // a tensor past the new end of the file
  term.press("Enter");   // its detail names the file and the offset of the failed read
  EXPECT_NE(term.screen().find_row("slow.gguf@0x"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("the file changed while open"), -1) << term.screen().text();
  term.press("Esc");
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// The Diff pane's "errors DONE/TOTAL" on screen: DONE, or -1 when not shown (TOTAL in *total).
int diff_errors_done(const Screen& screen, int* total = nullptr) {
  static const std::regex kErrors(R"(errors (\d+)/(\d+))");
  std::smatch m;
  for (const std::string& row : screen.text_rows())
    if (std::regex_search(row, m, kErrors)) {
      if (total) *total = std::stoi(m[2]);
      return std::stoi(m[1]);
    }
  return -1;
}

// A model against itself (akview A --ref A) with 96 large q8_0 matrices: comparing them takes
// seconds, time enough for Esc to land mid-way. The pairs and the errors done stay, the rest say
// they were not compared, the status bar says cancelled, and `s` goes on from there.
TEST(AkviewScreens, EscCancelsTheDiffAndSGoesOn) {
  TempDir dir;
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  for (int layer = 0; layer < 96; ++layer)
    w.add_tensor({"blk." + std::to_string(layer) + ".ffn_up.weight", 8, {4096, 4096}});
  ASSERT_TRUE(w.write(dir.file("slow.gguf"), /*sparse=*/true));
  Terminal term;
  term.start({AKVIEW_BINARY, "slow.gguf", "--ref", "slow.gguf"}, {120, 40}, {}, dir.path());
  ASSERT_TRUE(
      term.wait_until([](const Screen& s) { return s.find_row("96 tensors") != -1; }, Terminal::default_timeout()))
      << term.screen().text();
  term.press("Esc");   // the Tensors pane's statistics: the diff would wait behind them on the one worker
  term.send_key("8");
  ASSERT_TRUE(term.wait_until([](const Screen& s) { return diff_errors_done(s) >= 1; }, Terminal::default_timeout()))
      << term.screen().text();
  const long keys = term.events_sent();
  term.send_key("Esc");
  ASSERT_TRUE(
      term.wait_until([&](const Screen&) { return term.last_marker().keys > keys; }, Terminal::default_timeout()));
  term.settle();   // busy 0: the job stopped
  int total = 0;
  const int done = diff_errors_done(term.screen(), &total);
  EXPECT_EQ(total, 96) << term.screen().text();
  EXPECT_GE(done, 1);
  ASSERT_LT(done, total) << "the comparison ended before Esc\n" << term.screen().text();
  EXPECT_NE(term.screen().find_row("(Esc: s goes on)"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("not compared (Esc)"), -1) << term.screen().text();
  EXPECT_NE(term.screen().find_row("│ cancelled"), -1) << term.screen().text();
  // s: on from where it stopped (the errors done are kept), then Esc again.
  term.send_key("s");
  ASSERT_TRUE(term.wait_until([&](const Screen& s) { return diff_errors_done(s) > done; }, Terminal::default_timeout()))
      << term.screen().text();
  term.press("Esc");
  EXPECT_GT(diff_errors_done(term.screen()), done);
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// `x` on the Diff pane's worst pair runs A's tensor in Compute: the row's "vs ref" is what
// `akview run --ref` computes for it (the same code, ui/batch's make_run_report).
TEST(AkviewScreens, XRunsTheDiffPairInComputeWithItsErrorAgainstTheReference) {
  const std::string demo = std::string(AKVIEW_DEMO_DIR) + "/demo/";
  Terminal term;
  term.start({AKVIEW_BINARY, "demo/llama-demo-q4km.gguf", "--ref", "demo/llama-demo-bf16"}, {120, 40}, {},
             AKVIEW_DEMO_DIR);
  term.settle();
  term.press("6");
  for (int i = 0; i < 12 && term.screen().find_row("on reference") == -1; ++i) term.press("b");
  ASSERT_NE(term.screen().find_row("on reference"), -1) << term.screen().text();
  term.press("8");
  ASSERT_EQ(diff_errors_done(term.screen()), 39) << term.screen().text();
  term.press("Enter");   // the side-by-side view names A's tensor
  const int name_row = term.screen().find_row("name ");
  ASSERT_NE(name_row, -1) << term.screen().text();
  std::smatch m;
  const std::string row = term.screen().text_rows()[static_cast<size_t>(name_row)];
  ASSERT_TRUE(std::regex_search(row, m, std::regex(R"(name\s+(\S+))"))) << row;
  const std::string tensor = m[1];
  term.press("Esc");
  term.press("x");
  EXPECT_NE(term.screen().find_row("tensor " + tensor + " · on reference"), -1) << term.screen().text();

  auto a = open_model(demo + "llama-demo-q4km.gguf");
  auto b = open_model(demo + "llama-demo-bf16");
  ASSERT_TRUE(a.ok() && b.ok());
  RunQuery query;
  query.tensors = {tensor};
  query.options.backend = "reference";
  auto report = make_run_report(*a, &*b, query, {});
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  ASSERT_EQ(report->runs.size(), 1u);
  ASSERT_TRUE(report->runs[0].vs_second.has_value());
  const std::string vs_ref = fmt::format("{:.3g}", report->runs[0].vs_second->rel_rms);
  std::string line;
  // The row names the tensor as Tensors does (canonical, cut in the middle when narrow): the result row
  // is the one whose backend column says reference.
  for (const std::string& r : term.screen().text_rows())
    if (std::regex_search(r, std::regex(R"(^\S+\s+reference\s)"))) line = r;
  ASSERT_FALSE(line.empty()) << "no result row\n" << term.screen().text();
  EXPECT_NE(line.find("reference"), std::string::npos) << line;
  EXPECT_TRUE(line.ends_with(" " + vs_ref)) << line << "\nexpected vs ref " << vs_ref;
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

std::string file_digest(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  struct stat st {};
  ::stat(p.c_str(), &st);
  return sha256_hex(bytes) + " " + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

// Every file of the demo folder keeps its sha256 and mtime through a session that visits every pane.
TEST(AkviewScreens, ASessionLeavesTheModelFilesUntouched) {
  namespace fs = std::filesystem;
  std::vector<std::pair<fs::path, std::string>> before;
  for (const auto& e : fs::recursive_directory_iterator(std::string(AKVIEW_DEMO_DIR) + "/demo"))
    if (e.is_regular_file()) before.emplace_back(e.path(), file_digest(e.path()));
  ASSERT_FALSE(before.empty());
  Terminal term;
  term.start({AKVIEW_BINARY, "demo"}, {100, 30}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  for (int model = 0; model < 5; ++model) {
    for (int i = 0; i < model; ++i) term.press("Down");
    term.press("Enter");
    for (const char* pane : {"2", "3", "4", "5", "6", "7", "1"}) term.press(pane);
    term.press("Enter");
    term.press("Esc");
    term.press("Esc");   // back to the list
    term.press("Home");
  }
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
  for (const auto& [path, digest] : before) EXPECT_EQ(file_digest(path), digest) << path;
}

}   // namespace
}   // namespace akview::testing
