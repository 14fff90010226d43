// The Compute pane drawn off-screen: runs on the reference and cpu backends put their rows side by
// side with the error against the f64 reference, the layer and filter selections pick what
// `akview run --layer/--filter` picks, timings are masked for goldens, and a cancelled run leaves a
// "cancelled" row and no partial results; an input file is checked when it is given, each row names
// its input, and a failed run never replaces a result.
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "core/names/name_map.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "ui/tui/compute_pane.hpp"
#include "ui/tui/keys.hpp"

namespace akview::testing {
namespace {

using tui::Action;
using tui::ComputePane;

constexpr uint32_t kF32 = 0;

std::vector<uint8_t> f32_data(int64_t n, float scale) {
  std::vector<uint8_t> out(static_cast<size_t>(n) * 4);
  for (int64_t i = 0; i < n; ++i) {
    const float v = scale * std::sin(0.37f * static_cast<float>(i) + 0.1f);
    std::memcpy(out.data() + i * 4, &v, 4);
  }
  return out;
}

// Two llama layers of f32 matrices (cols × rows) and a norm vector.
GgufWriter small_model(int64_t cols, int64_t rows) {
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.set("llama.block_count", gguf_u32(2));
  for (int layer : {0, 1})
    for (const char* proj : {"attn_q", "attn_k"}) {
      GgufTensorSpec t("blk." + std::to_string(layer) + "." + proj + ".weight", kF32, {cols, rows});
      t.data = f32_data(cols * rows, 0.5f + static_cast<float>(layer));
      w.add_tensor(t);
    }
  GgufTensorSpec norm("output_norm.weight", kF32, {cols});
  norm.data = f32_data(cols, 1.0f);
  w.add_tensor(norm);
  return w;
}

class ComputePaneTest : public ::testing::Test {
 protected:
  void open(int64_t cols, int64_t rows) {
    const std::string path = dir_.file("small.gguf");
    ASSERT_TRUE(small_model(cols, rows).write(path));
    auto model = open_model(path);
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    session_ = tui::make_session(std::move(*model));
    tui::attach_names(*session_, std::make_shared<NameMap>(build_name_map(session_->model)));
    pane_ = std::make_unique<ComputePane>(session_, [this] { return selected_; });
    pane_->set_mask_timings(false);
    draw(120, 40);   // the first frame asks the worker for the backends
    pump();
  }
  uint32_t index_of(std::string_view name) const {
    for (uint32_t i = 0; i < session_->model.tensors.size(); ++i)
      if (session_->model.tensors[i].name == name) return i;
    return kNone;
  }
  // Applies the worker's results until it is idle.
  void pump() {
    for (int spins = 0; spins < 60000; ++spins) {
      for (auto& apply : host_.worker().take_posted()) apply();
      if (host_.worker().busy() == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    FAIL() << "the worker never went idle";
  }
  void run_on(std::string_view backend) {
    ASSERT_TRUE(pane_->select_backend(backend)) << backend;
    ASSERT_TRUE(pane_->act(Action::run, host_));
    pump();
  }
  tui::Canvas draw(int w, int h) { return draw_pane(*pane_, host_, w, h); }

  TempDir dir_;
  FakeHost host_;
  std::shared_ptr<tui::ModelSession> session_;
  std::unique_ptr<ComputePane> pane_;
  uint32_t selected_ = kNone;
};

TEST_F(ComputePaneTest, ReferenceAndCpuRowsSitSideBySide) {
  open(64, 32);
  selected_ = index_of("blk.0.attn_q.weight");
  run_on("reference");
  ASSERT_EQ(pane_->rows().size(), 1u);
  const ComputePane::Row& ref = pane_->rows()[0];
  EXPECT_EQ(ref.tensor, "blk.0.attn_q.weight");
  EXPECT_EQ(ref.backend, "reference");
  ASSERT_EQ(ref.state, ComputePane::Row::State::done) << ref.note;
  ASSERT_TRUE(ref.error.has_value());
  EXPECT_LT(ref.error->rel_rms, 1e-6);
  EXPECT_GT(ref.error->cosine, 0.999999);
  EXPECT_GT(ref.seconds, 0);
  EXPECT_GT(ref.gbps, 0);

  // Another tensor, then the first one again on cpu: its row lands beside the reference row.
  selected_ = index_of("blk.1.attn_k.weight");
  run_on("reference");
  selected_ = index_of("blk.0.attn_q.weight");
  run_on("cpu");
  ASSERT_EQ(pane_->rows().size(), 3u);
  EXPECT_EQ(pane_->rows()[1].tensor, "blk.0.attn_q.weight");
  EXPECT_EQ(pane_->rows()[1].backend, "cpu");
  EXPECT_EQ(pane_->rows()[2].tensor, "blk.1.attn_k.weight");
  ASSERT_TRUE(pane_->rows()[1].error.has_value()) << pane_->rows()[1].note;
  EXPECT_LT(pane_->rows()[1].error->rel_rms, 1e-5);

  auto c = draw(120, 40);
  // The rows name tensors as Tensors does: canonical names (c there toggles to native ones).
  const std::string canonical(session_->canonical(index_of("blk.0.attn_q.weight")));
  ASSERT_FALSE(canonical.empty());
  auto table_row = [&](const std::string& name) {
    for (int y = 0; y < c.height(); ++y)   // the table row (the settings line above names the tensor too)
      if (c.row_text(y).starts_with(name + " ") && c.row_text(y).find(" cpu ") != std::string::npos) return y;
    return -1;
  };
  int row = table_row(canonical);
  ASSERT_NE(row, -1) << screen_text(c);
  session_->show_canonical = false;
  c = draw(120, 40);
  EXPECT_EQ(table_row("blk.0.attn_q.weight"), row) << screen_text(c);
  session_->show_canonical = true;
  c = draw(120, 40);
  EXPECT_EQ(find_row(c, {"—"}), -1) << "timings are drawn outside test mode";
  EXPECT_NE(find_row(c, {"tensor", "backend", "median", "GB/s", "max abs", "rel rms", "cosine"}), -1) << screen_text(c);
  pane_->set_mask_timings(true);
  c = draw(120, 40);
  EXPECT_NE(c.row_text(row).find("—"), std::string::npos) << c.row_text(row);
  EXPECT_EQ(c.row_text(row).find(" ms"), std::string::npos) << c.row_text(row);
  // 40 columns keep the tensor, the backend and the relative error.
  c = draw(40, 12);
  EXPECT_NE(find_row(c, {"tensor", "backend", "rel rms"}), -1) << screen_text(c);
}

TEST_F(ComputePaneTest, OpenclUploadIsReportedOnItsOwnOnceAndNotAgain) {
  open(256, 64);
  selected_ = index_of("blk.1.attn_q.weight");
  std::string label;
  for (const auto& c : pane_->choices())
    if (c.backend == "opencl" && c.available && label.empty()) label = c.label;
  if (label.empty()) GTEST_SKIP() << "no OpenCL device is offered on this machine";
  run_on(label);
  ASSERT_EQ(pane_->rows().size(), 1u);
  if (pane_->rows()[0].state != ComputePane::Row::State::done || !pane_->rows()[0].backend.starts_with("opencl"))
    GTEST_SKIP() << "opencl did not run here: " << pane_->rows()[0].backend << " " << pane_->rows()[0].note;
  auto c = draw(200, 40);
  int line = find_row(c, {"last run: 1 run, 0 failed · upload "});
  ASSERT_NE(line, -1) << screen_text(c);
  EXPECT_NE(c.row_text(line).find("GB/s), not in the times"), std::string::npos) << c.row_text(line);
  // The same tensor again: its weights are on the device already, nothing is copied.
  run_on(label);
  c = draw(200, 40);
  EXPECT_NE(find_row(c, {"last run: 1 run, 0 failed"}), -1) << screen_text(c);
  EXPECT_EQ(find_row(c, {"upload"}), -1) << screen_text(c);
}

TEST_F(ComputePaneTest, LayerAndFilterSelectWhatRunSelects) {
  open(32, 16);
  selected_ = index_of("blk.1.attn_q.weight");
  ASSERT_TRUE(pane_->act(Action::scope, host_));   // tensor -> layer
  EXPECT_EQ(pane_->selection_label(), "layer 1");
  run_on("reference");
  ASSERT_EQ(pane_->rows().size(), 2u);
  for (const auto& r : pane_->rows()) EXPECT_TRUE(r.tensor.starts_with("blk.1.")) << r.tensor;

  ASSERT_TRUE(pane_->act(Action::filter, host_));
  host_.type("attn_k");
  host_.accept();
  EXPECT_EQ(pane_->selection_label(), "filter attn_k");
  run_on("reference");
  EXPECT_EQ(pane_->rows().size(), 3u);   // blk.1.attn_k replaced, blk.0.attn_k added; no norm vector

  ASSERT_TRUE(pane_->act(Action::clear, host_));
  EXPECT_TRUE(pane_->rows().empty());
  selected_ = kNone;
  ASSERT_TRUE(pane_->act(Action::scope, host_));   // filter -> tensor
  ASSERT_TRUE(pane_->act(Action::run, host_));
  EXPECT_FALSE(pane_->running());
  ASSERT_FALSE(host_.flashes.empty());
  EXPECT_NE(host_.flashes.back().find("no tensor selected"), std::string::npos);
}

TEST_F(ComputePaneTest, CancelLeavesACancelledRowAndNoPartialResults) {
  open(512, 512);
  ASSERT_TRUE(pane_->act(Action::scope, host_));
  ASSERT_TRUE(pane_->act(Action::scope, host_));   // filter, empty: every matrix
  for (int i = 0; i < 10; ++i) pane_->act(Action::repeats_up, host_);
  EXPECT_EQ(pane_->repeats(), 1000);
  ASSERT_TRUE(pane_->select_backend("reference"));
  ASSERT_TRUE(pane_->act(Action::run, host_));
  EXPECT_TRUE(pane_->running());
  auto c = draw(80, 24);
  EXPECT_NE(find_row(c, {"running"}), -1) << screen_text(c);
  EXPECT_TRUE(host_.worker().cancel_all());
  pump();
  EXPECT_FALSE(pane_->running());
  ASSERT_EQ(pane_->rows().size(), 1u);
  EXPECT_EQ(pane_->rows()[0].state, ComputePane::Row::State::cancelled);
  EXPECT_EQ(pane_->rows()[0].tensor, "every matrix");
  c = draw(80, 24);
  EXPECT_NE(find_row(c, {"every matrix", "reference", "cancelled"}), -1) << screen_text(c);
  // A new run afterwards works and keeps the cancelled row.
  for (int i = 0; i < 10; ++i) pane_->act(Action::repeats_down, host_);
  run_on("reference");
  EXPECT_EQ(pane_->rows().size(), 5u);
}

TEST_F(ComputePaneTest, InputFileIsCheckedAndAFailedRunNeverReplacesAResult) {
  open(64, 32);
  selected_ = index_of("blk.0.attn_q.weight");
  run_on("reference");
  ASSERT_EQ(pane_->rows().size(), 1u);
  EXPECT_EQ(pane_->rows()[0].input, "seed:0");
  // i: ones; i again: the file prompt. A path that does not exist is refused when it is given.
  ASSERT_TRUE(pane_->act(Action::input, host_));
  ASSERT_TRUE(pane_->act(Action::input, host_));
  ASSERT_TRUE(host_.prompting());
  EXPECT_EQ(host_.label(), "input file (raw f32)");   // the shell adds ": "
  host_.type(dir_.file("no-such.f32"));
  host_.accept();
  ASSERT_FALSE(host_.flashes.empty());
  EXPECT_NE(host_.flashes.back().find("no such file"), std::string::npos) << host_.flashes.back();
  auto c = draw(120, 40);
  EXPECT_NE(find_row(c, {"input ones"}), -1) << screen_text(c);
  // A file of the wrong length is a valid input file, but the run fails: the seed:0 row stays.
  const std::string short_file = dir_.file("short.f32");
  {
    std::ofstream out(short_file, std::ios::binary);
    const float v[2] = {1, 2};
    out.write(reinterpret_cast<const char*>(v), sizeof v);
  }
  ASSERT_TRUE(pane_->act(Action::input, host_));
  host_.type(short_file);
  host_.accept();
  run_on("reference");
  ASSERT_EQ(pane_->rows().size(), 2u);
  EXPECT_EQ(pane_->rows()[0].input, "seed:0");
  EXPECT_EQ(pane_->rows()[0].state, ComputePane::Row::State::done) << pane_->rows()[0].note;
  EXPECT_EQ(pane_->rows()[1].input, "short.f32");
  EXPECT_EQ(pane_->rows()[1].state, ComputePane::Row::State::failed);
  // A good file, then the same file cut short: the failure on the same settings leaves the result.
  const std::string good_file = dir_.file("good.f32");
  auto write_floats = [&](int n) {
    std::ofstream out(good_file, std::ios::binary | std::ios::trunc);
    for (int i = 0; i < n; ++i) {
      const float v = 0.25f * static_cast<float>(i % 7);
      out.write(reinterpret_cast<const char*>(&v), sizeof v);
    }
  };
  write_floats(64);
  ASSERT_TRUE(pane_->act(Action::input, host_));   // file -> seeded
  ASSERT_TRUE(pane_->act(Action::input, host_));   // ones
  ASSERT_TRUE(pane_->act(Action::input, host_));   // the file prompt
  host_.erase_all();
  host_.type(good_file);
  host_.accept();
  run_on("reference");
  ASSERT_EQ(pane_->rows().size(), 3u);
  EXPECT_EQ(pane_->rows()[2].input, "good.f32");
  ASSERT_EQ(pane_->rows()[2].state, ComputePane::Row::State::done) << pane_->rows()[2].note;
  write_floats(2);
  run_on("reference");
  ASSERT_EQ(pane_->rows().size(), 3u);
  EXPECT_EQ(pane_->rows()[2].state, ComputePane::Row::State::done) << "a failure replaced a result";
  EXPECT_TRUE(pane_->rows()[2].error.has_value());
  auto after = draw(120, 40);
  EXPECT_NE(find_row(after, {"last run:", "the results stay"}), -1) << screen_text(after);
  c = draw(120, 40);
  // Rows name the tensor as Tensors does; the backend and input columns tell the rows apart.
  EXPECT_NE(find_row(c, {"reference", "seed:0"}), -1) << screen_text(c);
  EXPECT_NE(find_row(c, {"reference", "short.f32"}), -1) << screen_text(c);
}

// Backends keep one order within every tensor (the backend list's), whichever ran first.
TEST_F(ComputePaneTest, BackendsKeepOneOrderWithinEveryTensor) {
  open(64, 32);
  selected_ = index_of("blk.0.attn_q.weight");
  run_on("reference");
  run_on("cpu");
  selected_ = index_of("blk.1.attn_k.weight");
  run_on("cpu");
  run_on("reference");   // after cpu in time, before it in the table as for the first tensor
  ASSERT_EQ(pane_->rows().size(), 4u);
  EXPECT_EQ(pane_->rows()[0].backend, "reference");
  EXPECT_EQ(pane_->rows()[1].backend, "cpu");
  EXPECT_EQ(pane_->rows()[2].tensor, "blk.1.attn_k.weight");
  EXPECT_EQ(pane_->rows()[2].backend, "reference");
  EXPECT_EQ(pane_->rows()[3].backend, "cpu");
}

// The time column is the median of the repeats; one whose fastest repeat is far below it is flagged.
TEST(ComputeTimes, AMedianFarAboveTheFastestRepeatIsFlagged) {
  ComputePane::Row steady;
  steady.seconds = 1.0e-3;
  steady.min_seconds = 0.9e-3;
  EXPECT_FALSE(tui::unreliable_time(steady));
  ComputePane::Row busy = steady;
  busy.min_seconds = 0.5e-3;
  EXPECT_TRUE(tui::unreliable_time(busy));
}

// `x` runs in Compute as it does in Diff; clearing the results is X.
TEST(ComputeKeys, XRunsAsInDiff) {
  tui::Action a{};
  ASSERT_TRUE(tui::find_binding('x', tui::Context::compute, a));
  EXPECT_EQ(a, tui::Action::run);
  ASSERT_TRUE(tui::find_binding('X', tui::Context::compute, a));
  EXPECT_EQ(a, tui::Action::clear);
}

}   // namespace
}   // namespace akview::testing
