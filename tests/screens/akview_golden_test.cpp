// Golden screens of akview's interactive view through the real binary, at 120×40, 80×24 and 40×12:
// the demo's model list, each pane and its main states (stats filled in, sorted, filtered, searched,
// grouped, a tensor's detail, Header, Mapping, Help), and the writers' fixtures: hostile names, a
// tensor that cannot be decoded, a file that fails to open, a terminal too small. One run resizes
// 120×40 → 80×24 → 40×12 → 120×40 with a golden per step. Deterministic: paths are relative to the
// working directory, settles wait for the worker to be idle, nothing shows a clock.
// AKVIEW_UPDATE_GOLDENS=1 rewrites the goldens; AKVIEW_SCREENS_SVG_DIR=dir writes each screen's SVG.
#include <gtest/gtest.h>

#include <string>

#include "tests/common/temp_dir.hpp"
#include "tests/screens/golden.hpp"
#include "tests/screens/harness.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "tests/writers/st_writer.hpp"

namespace akview::testing {
namespace {

using namespace std::string_literals;

class Goldens : public ::testing::TestWithParam<TermSize> {
 protected:
  void start(Terminal& term, const std::string& path, const std::string& cwd) {
    term.start({AKVIEW_BINARY, path}, {GetParam().cols, GetParam().rows}, {}, cwd);
    term.settle();
  }
  void shoot(const Terminal& term, const std::string& name) {
    EXPECT_TRUE(compare_golden(term.screen(), name + "_" + size_name(GetParam())));
  }
  void quit(Terminal& term) {
    term.send_key("q");
    EXPECT_EQ(term.wait_exit(), 0);
    EXPECT_FALSE(term.alt_screen_active());
  }
};

TEST_P(Goldens, DemoModelListAndTensorsStates) {
  Terminal term;
  start(term, "demo", AKVIEW_DEMO_DIR);
  term.press("Down");
  term.press("Down");
  shoot(term, "demo_list");   // the GGUF selected: its panel shows a type mix and a quantization
  term.press("Enter");        // llama-demo-q4km.gguf; the settle waits for the open and the stats
  shoot(term, "demo_tensors");
  // The column cursor moves over the columns shown; 40 columns show no bytes column.
  const std::string column = GetParam().cols >= 80 ? "bytes" : "type";
  for (int i = 0; i < 12 && term.screen().find_row("sort " + column + " ▼") == -1; ++i) {
    term.press(">");
    term.press("]");
  }
  ASSERT_NE(term.screen().find_row("sort " + column + " ▼"), -1) << term.screen().text();
  shoot(term, "demo_tensors_sorted");
  term.press("\\");
  term.type("attention");
  term.press("Enter");
  shoot(term, "demo_tensors_filtered");
  term.press("/");
  term.type("attention.v");
  term.press("Enter");
  shoot(term, "demo_tensors_searched");
  term.press("Enter");
  shoot(term, "demo_tensor_detail");
  term.press("Esc");
  term.press("\\");
  for (int i = 0; i < 9; ++i) term.press("Backspace");
  term.press("Enter");
  term.press("z");
  shoot(term, "demo_tensors_grouped");
  quit(term);
}

TEST_P(Goldens, DemoHeaderMappingHelp) {
  Terminal term;
  start(term, "demo/llama-demo-q4km.gguf", AKVIEW_DEMO_DIR);
  term.press("2");
  shoot(term, "demo_header");
  term.press("5");
  shoot(term, "demo_mapping");
  term.press("7");
  shoot(term, "demo_help");
  quit(term);
}

// Fit: the buffers llama.cpp would allocate at the trained context, then split over two small GPUs.
TEST_P(Goldens, DemoFit) {
  Terminal term;
  start(term, "demo/llama-demo-q4km.gguf", AKVIEW_DEMO_DIR);
  term.press("9");
  shoot(term, "demo_fit");
  term.press("m");
  term.type("0.01,0.01");
  term.press("Enter");
  shoot(term, "demo_fit_gpus");
  quit(term);
}

// Compute: the selected tensor run on the reference backend (timings drawn as "—" in test mode),
// then every matrix with 1000 repeats, cancelled with Esc while it runs.
TEST_P(Goldens, DemoComputeRunAndCancel) {
  Terminal term;
  start(term, "demo/llama-demo-q4km.gguf", AKVIEW_DEMO_DIR);
  term.press("6");
  for (int i = 0; i < 12 && term.screen().find_row("on reference") == -1; ++i) term.press("b");
  ASSERT_NE(term.screen().find_row("on reference"), -1) << term.screen().text();
  term.press("r");
  shoot(term, "demo_compute");
  term.press("s");
  term.press("s");
  for (int i = 0; i < 6; ++i) term.press("+");
  term.send_key("r");
  ASSERT_TRUE(term.wait_for_text("running", std::chrono::seconds(10))) << term.screen().text();
  term.press("Esc");
  shoot(term, "demo_compute_cancelled");
  quit(term);
}

// Diff: the Q4_K_M GGUF against its BF16 original (akview A --ref B): worst first with every error
// filled in, a pair side by side (at 40×12 scrolled to its error numbers too), and `x` running the pair in Compute on
// the reference backend (the "vs ref" column: y against y from B's tensor).
TEST_P(Goldens, DemoDiffAgainstOriginal) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo/llama-demo-q4km.gguf", "--ref", "demo/llama-demo-bf16"},
             {GetParam().cols, GetParam().rows}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  term.press("8");
  shoot(term, "demo_diff");
  term.press("Enter");
  shoot(term, "demo_diff_detail");
  if (GetParam().rows < 24) {   // the lines scroll under the pair's name: the error numbers at the end
    term.press("End");
    shoot(term, "demo_diff_detail_end");
  }
  term.press("Esc");
  term.press("6");
  for (int i = 0; i < 12 && term.screen().find_row("on reference") == -1; ++i) term.press("b");
  ASSERT_NE(term.screen().find_row("on reference"), -1) << term.screen().text();
  term.press("8");
  term.press("x");
  shoot(term, "demo_diff_compute");
  quit(term);
}

TEST_P(Goldens, MlxFolderWithCompanions) {
  Terminal term;
  start(term, "demo/llama-demo-mlx-4bit", AKVIEW_DEMO_DIR);
  shoot(term, "demo_mlx_tensors");
  term.press("2");
  shoot(term, "demo_mlx_header");
  quit(term);
}

// Names and metadata carrying ESC/CSI/OSC sequences, C1 bytes, bidi overrides, zero-width and CJK
// characters: drawn escaped, the columns aligned.
TEST_P(Goldens, HostileNamesAreDrawnEscaped) {
  TempDir dir;
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.set("general.name", gguf_string("evil\x1b]8;;http://x.invalid\x07link\x1b]8;;\x07 \xe2\x80\xaegnp.exe"));
  w.set("hostile.key\x1b[2J\x9bH"s, gguf_string("bell\x07 c1\xc2\x9b"
                                                "31m del\x7f"s));
  const std::vector<std::string> names = {
      "blk.0.csi\x1b[31mred\x1b[0m.weight"s,
      "blk.0.osc\x1b]0;pwned\x07title.weight"s,
      "blk.0.c1raw\x9b"
      "2J.weight"s,
      "blk.0.nul\0byte.weight"s,
      "blk.0.bidi\xe2\x80\xae"
      "txt.exe.weight"s,
      "blk.0.zw\xe2\x80\x8bsp.weight"s,
      "blk.0.\xe4\xb8\xad\xe6\x96\x87\xe6\x9d\x83\xe9\x87\x8d.weight"s,
  };
  for (const auto& name : names) w.add_tensor({name, 0, {8, 2}});
  ASSERT_TRUE(w.write(dir.file("hostile.gguf")));
  Terminal term;
  start(term, "hostile.gguf", dir.path());
  // No raw control byte from the file reached the terminal: the title would have been set by OSC 0.
  EXPECT_EQ(term.output_bytes().find("pwned\x07"), std::string::npos);
  EXPECT_EQ(term.output_bytes().find("\x1b[31mred"), std::string::npos);
  shoot(term, "hostile_tensors");
  term.press("c");   // native names
  shoot(term, "hostile_tensors_native");
  term.press("2");
  shoot(term, "hostile_header");
  quit(term);
}

// An MLX folder whose group size (12) is no multiple of 8: the weight is listed with its scales and
// biases, and its detail says why its values cannot be decoded.
TEST_P(Goldens, UndecodableTensorSaysWhy) {
  TempDir dir;
  std::vector<StTensor> ts = {
      {"model.layers.0.mlp.up_proj.weight", "U32", {8, 3}, std::vector<uint8_t>(8 * 3 * 4, 0x11)},
      {"model.layers.0.mlp.up_proj.scales", "F16", {8, 2}, std::vector<uint8_t>(8 * 2 * 2, 0x3c)},
      {"model.layers.0.mlp.up_proj.biases", "F16", {8, 2}, std::vector<uint8_t>(8 * 2 * 2, 0x00)},
      {"model.norm.weight", "F32", {8}, std::vector<uint8_t>(8 * 4, 0)},
  };
  StWriteOptions options;
  options.metadata = {{"format", "mlx"}};
  ASSERT_TRUE(write_safetensors(dir.file("model.safetensors"), ts, options));
  ASSERT_TRUE(
      write_text(dir.file("config.json"), R"({"model_type": "llama", "quantization": {"group_size": 12, "bits": 4}})"));
  Terminal term;
  start(term, ".", dir.path());
  shoot(term, "undecodable_tensors");
  term.press("Down");
  term.press("Enter");
  shoot(term, "undecodable_detail");
  term.press("Esc");
  quit(term);
}

TEST_P(Goldens, FileThatFailsToOpen) {
  TempDir dir;
  ASSERT_TRUE(write_text(dir.file("broken.gguf"), "GGUF\x03\0\0\0\xff\xff\xff\xff\xff\xff\xff\x7f"s));
  Terminal term;
  start(term, "broken.gguf", dir.path());
  shoot(term, "broken_file");
  quit(term);
}

INSTANTIATE_TEST_SUITE_P(Sizes, Goldens, ::testing::ValuesIn(kGoldenSizes),
                         [](const auto& info) { return size_name(info.param); });

TEST(GoldenScreens, TerminalTooSmall) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo"}, {39, 11}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  EXPECT_TRUE(compare_golden(term.screen(), "too_small_39x11"));
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

// 120×40 → 80×24 → 40×12 → 120×40 on the Tensors pane with stats, a golden per step; then 20 quick
// resizes without a settle between them: the last size is drawn, and it equals the first golden.
TEST(GoldenScreens, ResizeSeriesNeverLosesARedraw) {
  Terminal term;
  term.start({AKVIEW_BINARY, "demo/llama-demo-q4km.gguf"}, {120, 40}, {}, AKVIEW_DEMO_DIR);
  term.settle();
  EXPECT_TRUE(compare_golden(term.screen(), "resize_1_120x40"));
  term.resize(80, 24);
  term.settle();
  EXPECT_TRUE(compare_golden(term.screen(), "resize_2_80x24"));
  term.resize(40, 12);
  term.settle();
  EXPECT_TRUE(compare_golden(term.screen(), "resize_3_40x12"));
  term.resize(120, 40);
  term.settle();
  EXPECT_TRUE(compare_golden(term.screen(), "resize_4_120x40"));
  const TermSize burst[] = {{100, 30}, {41, 12}, {150, 50}, {80, 24}, {39, 11}};
  for (int i = 0; i < 20; ++i) term.resize(burst[i % 5].cols, burst[i % 5].rows);
  term.resize(120, 40);
  const FrameMarker m = term.settle();
  EXPECT_EQ(m.size_cols, 120);
  EXPECT_EQ(m.size_rows, 40);
  EXPECT_TRUE(compare_golden(term.screen(), "resize_4_120x40"));
  term.send_key("q");
  EXPECT_EQ(term.wait_exit(), 0);
}

}   // namespace
}   // namespace akview::testing
