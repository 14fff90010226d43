// The Diff pane on the demo (the Q4_K_M GGUF against its BF16 original): the pairs land from the
// worker, the compared ones worst first (relative RMS descending) with findings on top; Esc cancels
// the comparison and `s` goes on with what is missing; Enter shows both sides' statistics; `x` hands
// A's tensor to Compute. A model against a copy missing a tensor flags it on top.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/formats/format.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "tests/writers/st_writer.hpp"
#include "ui/tui/diff_pane.hpp"

namespace akview::testing {
namespace {

// Applies the worker's results until `done` or 20 s.
template <class Pred>
bool pump(FakeHost& host, tui::Pane& pane, Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    for (auto& apply : host.worker().take_posted()) apply();
    draw_pane(pane, host, 120, 30);
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (auto& apply : host.worker().take_posted()) apply();
  return true;
}

const std::string kDemo = std::string(AKVIEW_DEMO_DIR) + "/demo/";

TEST(DiffPane, WorstFirstCancelGoesOnDetailAndRun) {
  auto a = open_session(kDemo + "llama-demo-q4km.gguf");
  auto b = open_session(kDemo + "llama-demo-bf16");
  uint32_t ran = kNone;
  tui::DiffPane pane(a, b, [&](uint32_t t, tui::PaneHost&) { ran = t; });
  FakeHost host;
  // A job ahead of the diff holds the worker, so Esc lands before any pair is compared.
  std::atomic<bool> release{false};
  host.worker().submit(tui::Job{"hold",
                                [&](tui::JobContext& ctx) {
                                  while (!release && !ctx.cancelled())
                                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                                },
                                {}});
  draw_pane(pane, host, 120, 30);   // before_frame starts the diff
  EXPECT_TRUE(pane.computing());
  host.worker().cancel_all();
  ASSERT_TRUE(pump(host, pane, [&] { return !pane.computing() && host.worker().busy() == 0; }));
  EXPECT_TRUE(pane.shown().empty()) << "cancelled before the pairs were listed";
  EXPECT_EQ(pane.state(), "cancelled");
  EXPECT_NE(find_row(draw_pane(pane, host, 120, 30), {"cancelled before the pairs were listed"}), -1);

  // s: again, to the end.
  ASSERT_TRUE(pane.act(tui::Action::restart_stats, host));
  ASSERT_TRUE(pump(host, pane, [&] { return !pane.computing() && host.worker().busy() == 0; }));
  const auto shown = pane.shown();
  ASSERT_EQ(shown.size(), a->model.tensors.size());
  double last = 1e300;
  for (const TensorDiff* d : shown) {
    ASSERT_TRUE(d->has_values) << d->key << ": " << d->value_problem;
    EXPECT_LE(d->error.rel_rmse, last) << d->key;
    last = d->error.rel_rmse;
  }
  EXPECT_GT(shown.front()->error.rel_rmse, 0.05) << "a 4-bit tensor is the worst";
  const tui::Canvas canvas = draw_pane(pane, host, 120, 30);
  EXPECT_NE(find_row(canvas, {shown.front()->key, "q4_k", "bf16"}), -1) << screen_text(canvas);
  EXPECT_NE(find_row(canvas, {"39 pairs", "errors 39/39", "none missing"}), -1) << screen_text(canvas);
  // 40 columns: the relative RMS stays, and a name too long keeps its layer and its role.
  const tui::Canvas narrow = draw_pane(pane, host, 40, 12);
  EXPECT_NE(find_row(narrow, {"rel rms"}), -1) << screen_text(narrow);
  EXPECT_NE(find_row(narrow, {"layers.2.", "…", "output.weight"}), -1) << screen_text(narrow);

  // Enter: both sides' statistics, from the worker.
  ASSERT_TRUE(pane.act(tui::Action::open, host));
  EXPECT_TRUE(pane.detail_open());
  ASSERT_TRUE(pump(host, pane, [&] { return host.worker().busy() == 0; }));
  const tui::Canvas detail = draw_pane(pane, host, 120, 30);
  const int std_row = find_row(detail, {"std"});
  ASSERT_NE(std_row, -1) << screen_text(detail);
  EXPECT_EQ(detail.row_text(std_row).find("computing"), std::string::npos) << screen_text(detail);
  for (const char* line : {"rel rms", "cosine", "max abs"})
    EXPECT_NE(find_row(detail, {line, "0."}), -1) << line << "\n" << screen_text(detail);
  EXPECT_NE(find_row(detail, {"elements", std::to_string(shown.front()->error.elements)}), -1) << screen_text(detail);
  // A short pane scrolls the lines under the pair's name: the error comes into view.
  tui::Canvas small = draw_pane(pane, host, 40, 10);
  EXPECT_EQ(find_row(small, {"cosine"}), -1) << screen_text(small);
  EXPECT_NE(pane.position().find("detail 1-"), std::string::npos) << pane.position();
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(pane.act(tui::Action::page_down, host));
  small = draw_pane(pane, host, 40, 10);
  EXPECT_NE(find_row(small, {"cosine", "0.99"}), -1) << screen_text(small);
  EXPECT_NE(find_row(small, {"layers.2.attention.v.weight"}), -1) << "the name stays on top\n" << screen_text(small);
  ASSERT_TRUE(pane.act(tui::Action::back, host));

  // x: A's tensor of the selected pair goes to Compute.
  ASSERT_TRUE(pane.act(tui::Action::run_pair, host));
  EXPECT_EQ(ran, shown.front()->a);
}

TEST(DiffPane, AMissingTensorAndAShapeChangeAreFlaggedOnTop) {
  TempDir dir;
  auto f32 = [](size_t n, float v) {
    std::vector<uint8_t> out(n * 4);
    for (size_t i = 0; i < n; ++i) std::memcpy(out.data() + 4 * i, &v, 4);
    return out;
  };
  ASSERT_TRUE(write_safetensors(dir.file("a.safetensors"),
                                {{"model.layers.0.self_attn.q_proj.weight", "F32", {4, 8}, f32(32, 1.0f)},
                                 {"model.layers.0.self_attn.k_proj.weight", "F32", {4, 8}, f32(32, 1.0f)},
                                 {"model.norm.weight", "F32", {8}, f32(8, 1.0f)}}));
  ASSERT_TRUE(write_safetensors(dir.file("b.safetensors"),
                                {{"model.layers.0.self_attn.q_proj.weight", "F32", {4, 8}, f32(32, 1.5f)},
                                 {"model.layers.0.self_attn.k_proj.weight", "F32", {8, 4}, f32(32, 1.0f)}}));
  auto a = open_session(dir.file("a.safetensors"));
  auto b = open_session(dir.file("b.safetensors"));
  tui::DiffPane pane(a, b, [](uint32_t, tui::PaneHost&) {});
  FakeHost host;
  draw_pane(pane, host, 120, 30);
  ASSERT_TRUE(pump(host, pane, [&] { return !pane.computing() && host.worker().busy() == 0; }));
  const auto shown = pane.shown();
  ASSERT_EQ(shown.size(), 3u);
  EXPECT_EQ(shown[0]->key, "layers.0.attention.k.weight");   // A's order among the findings
  EXPECT_TRUE(shown[0]->shape_differs);
  EXPECT_EQ(shown[1]->key, "output_norm.weight");
  EXPECT_EQ(shown[1]->b, kNone);
  EXPECT_TRUE(shown[2]->has_values);
  EXPECT_NEAR(shown[2]->error.rel_rmse, 0.5 / 1.5, 1e-6);
  const tui::Canvas canvas = draw_pane(pane, host, 120, 30);
  EXPECT_NE(find_row(canvas, {"output_norm.weight", "only in A"}), -1) << screen_text(canvas);
  EXPECT_NE(find_row(canvas, {"k.weight", "[4, 8] ≠ [8, 4]", "shapes differ"}), -1) << screen_text(canvas);
}

}   // namespace
}   // namespace akview::testing
