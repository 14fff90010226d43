// The Layout pane follows the tensor selected in Tensors (its data region, in the file that holds
// it) and searches regions by name with `/`, on the demo's GGUF and its sharded BF16 original.
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "ui/tui/layout_pane.hpp"

namespace akview::testing {
namespace {

using tui::LayoutPane;

struct LayoutFixture {
  explicit LayoutFixture(const std::string& demo_path) {
    auto model = open_model(std::string(AKVIEW_DEMO_DIR) + "/demo/" + demo_path);
    EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().to_string());
    session = tui::make_session(std::move(*model));
    pane = std::make_unique<LayoutPane>(session, [this] { return selected; });
  }
  uint32_t index(std::string_view name) const {
    const Tensor* t = session->model.find(name);
    EXPECT_NE(t, nullptr) << name;
    return t ? static_cast<uint32_t>(t - session->model.tensors.data()) : kNone;
  }
  void settle() {
    draw_pane(*pane, host, 120, 40);
    for (int spins = 0; host.worker().busy() > 0 && spins < 20000; ++spins) {
      for (auto& apply : host.worker().take_posted()) apply();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (auto& apply : host.worker().take_posted()) apply();
    draw_pane(*pane, host, 120, 40);
  }
  const Region& current() const { return pane->regions()[static_cast<size_t>(pane->cursor_row())]; }

  uint32_t selected = 0;
  std::shared_ptr<tui::ModelSession> session;
  std::unique_ptr<LayoutPane> pane;
  FakeHost host;
};

TEST(LayoutPane, ShowsTheFileFromItsStartUntilATensorIsChosenThenItsData) {
  LayoutFixture f("llama-demo-q4km.gguf");
  f.settle();
  ASSERT_FALSE(f.pane->regions().empty());
  EXPECT_EQ(f.pane->cursor_row(), 0);
  f.selected = f.index("blk.2.attn_output.weight");
  f.settle();
  EXPECT_EQ(f.current().label, "blk.2.attn_output.weight");
  EXPECT_EQ(f.current().kind, RegionKind::tensor);
  // Moving in Layout sticks until the selection in Tensors changes again.
  ASSERT_TRUE(f.pane->act(tui::Action::home, f.host));
  f.settle();
  EXPECT_EQ(f.pane->cursor_row(), 0);
  f.selected = f.index("blk.0.ffn_down.weight");
  f.settle();
  EXPECT_EQ(f.current().label, "blk.0.ffn_down.weight");
}

TEST(LayoutPane, FollowsATensorIntoTheShardThatHoldsIt) {
  LayoutFixture f("llama-demo-bf16");
  f.settle();
  ASSERT_GE(f.session->model.files.size(), 2u);
  // The last tensor of the model lives in a later shard than the first file shown.
  uint32_t last = kNone;
  for (uint32_t t = 0; t < f.session->model.tensors.size(); ++t)
    if (f.session->model.tensors[t].file != 0 && f.session->model.tensors[t].file < f.session->model.files.size())
      last = t;
  ASSERT_NE(last, kNone);
  f.selected = last;
  f.settle();
  const Tensor& t = f.session->model.tensors[last];
  EXPECT_TRUE(f.pane->state().starts_with(fmt::format("file {}/{}", t.file + 1, f.session->model.files.size())))
      << f.pane->state();
  EXPECT_EQ(f.current().label, t.name);
  EXPECT_EQ(f.current().kind, RegionKind::tensor);
}

TEST(LayoutPane, SlashSearchesRegionsByNameAndNGoesOn) {
  LayoutFixture f("llama-demo-q4km.gguf");
  f.settle();
  ASSERT_TRUE(f.pane->act(tui::Action::search, f.host));
  f.host.type("FFN_DOWN");
  EXPECT_NE(f.current().label.find("ffn_down"), std::string::npos) << f.current().label;
  f.host.accept();
  const int64_t first = f.pane->cursor_row();
  ASSERT_TRUE(f.pane->act(tui::Action::search_next, f.host));
  EXPECT_GT(f.pane->cursor_row(), first);
  EXPECT_NE(f.current().label.find("ffn_down"), std::string::npos) << f.current().label;
  ASSERT_TRUE(f.pane->act(tui::Action::search, f.host));
  f.host.type("no such region");
  f.host.accept();
  ASSERT_FALSE(f.host.flashes.empty());
  EXPECT_EQ(f.host.flashes.back(), "no match for 'no such region'");
}

}   // namespace
}   // namespace akview::testing
