// The Fit pane on the demo's GGUF: it shows `akview fit`'s report (the same lines), its keys double
// and halve the context, change the KV cache type and split over GPUs, each estimate made again on
// the worker; a bad GPU figure is said, not estimated.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "ui/batch/fit_report.hpp"
#include "ui/tui/fit_pane.hpp"

namespace akview::testing {
namespace {

struct FitFixture {
  FitFixture() {
    auto model = open_model(std::string(AKVIEW_DEMO_DIR) + "/demo/llama-demo-q4km.gguf");
    EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().to_string());
    session = tui::make_session(std::move(*model));
    pane = std::make_unique<tui::FitPane>(session);
  }
  void settle() {
    draw_pane(*pane, host, 120, 60);
    for (int spins = 0; host.worker().busy() > 0 && spins < 20000; ++spins) {
      for (auto& apply : host.worker().take_posted()) apply();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (auto& apply : host.worker().take_posted()) apply();
  }
  // The report `akview fit` prints for the same query, a line each.
  std::vector<std::string> batch_lines(uint64_t context, const std::string& kv, const std::string& gpus) {
    auto query = make_fit_query(context, 2048, kv, gpus);
    EXPECT_TRUE(query.ok());
    auto report = make_fit_report(session->model, *query);
    EXPECT_TRUE(report.ok());
    char* buffer = nullptr;
    size_t size = 0;
    std::FILE* out = open_memstream(&buffer, &size);
    print_fit(out, *report, OutputFormat::text);
    std::fclose(out);
    std::vector<std::string> lines;
    std::string text(buffer, size);
    std::free(buffer);
    for (size_t at = 0; at < text.size();) {
      const size_t end = text.find('\n', at);
      lines.push_back(text.substr(at, end - at));
      at = end == std::string::npos ? text.size() : end + 1;
    }
    return lines;
  }
  bool shows(std::string_view text) {
    for (const std::string& l : pane->lines())
      if (l.find(text) != std::string::npos) return true;
    return false;
  }

  std::shared_ptr<tui::ModelSession> session;
  std::unique_ptr<tui::FitPane> pane;
  FakeHost host;
};

TEST(FitPane, ShowsTheFitReportAndFollowsItsKeys) {
  FitFixture f;
  f.settle();
  ASSERT_FALSE(f.pane->lines().empty());
  EXPECT_EQ(f.pane->lines(), f.batch_lines(0, "f16", ""));
  EXPECT_TRUE(f.shows("KV cache"));
  const tui::Canvas c = draw_pane(*f.pane, f.host, 120, 60);
  EXPECT_GE(find_row(c, {"KV cache"}), 0);

  // `+` doubles the context the report was made for; `-` halves it back.
  const std::vector<std::string> trained = f.pane->lines();
  ASSERT_TRUE(f.pane->act(tui::Action::context_down, f.host));
  f.settle();
  const uint64_t half = f.pane->asked_context();
  ASSERT_GT(half, 0u);
  EXPECT_EQ(f.pane->lines(), f.batch_lines(half, "f16", ""));
  EXPECT_NE(f.pane->lines(), trained);
  ASSERT_TRUE(f.pane->act(tui::Action::context_up, f.host));
  f.settle();
  EXPECT_EQ(f.pane->asked_context(), half * 2);

  // `v`: the next KV cache type (after f16: bf16).
  ASSERT_TRUE(f.pane->act(tui::Action::kv_type_next, f.host));
  f.settle();
  EXPECT_EQ(f.pane->lines(), f.batch_lines(half * 2, "bf16", ""));
  EXPECT_NE(f.pane->state().find("KV bf16"), std::string::npos) << f.pane->state();

  // `m`: GPU memory; the split table appears.
  ASSERT_TRUE(f.pane->act(tui::Action::gpu_memory, f.host));
  ASSERT_TRUE(f.host.prompting());
  f.host.type("1,1");
  f.host.accept();
  f.settle();
  EXPECT_EQ(f.pane->lines(), f.batch_lines(half * 2, "bf16", "1,1"));
  EXPECT_TRUE(f.shows("GPU0"));

  // `c`: a context typed.
  ASSERT_TRUE(f.pane->act(tui::Action::set_context, f.host));
  f.host.erase_all();
  f.host.type("4096");
  f.host.accept();
  f.settle();
  EXPECT_EQ(f.pane->asked_context(), 4096u);
  EXPECT_EQ(f.pane->lines(), f.batch_lines(4096, "bf16", "1,1"));
}

TEST(FitPane, ABadGpuFigureIsSaidNotEstimated) {
  FitFixture f;
  f.settle();
  ASSERT_TRUE(f.pane->act(tui::Action::gpu_memory, f.host));
  f.host.type("lots");
  f.host.accept();
  f.settle();
  const tui::Canvas c = draw_pane(*f.pane, f.host, 120, 10);
  EXPECT_GE(find_row(c, {"--gpu-mem 'lots'"}), 0) << screen_text(c);
  EXPECT_TRUE(row_has_role(c, find_row(c, {"--gpu-mem"}), tui::Role::error));
}

}   // namespace
}   // namespace akview::testing
