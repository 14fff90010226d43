// The Groups pane on the oracle files: the window's groups computed on the worker, the table, the
// heatmaps with their legend and the histograms at three sizes, moving past the window loads the next
// rows, and Enter opens the step-through of the group under the cursor (K-quant, MLX affine, IQ2_XXS).
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "core/names/name_map.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "ui/tui/groups_pane.hpp"
#include "ui/tui/session.hpp"

namespace akview::testing {
namespace {

using tui::Action;
using tui::GroupsPane;

struct GroupsFixture {
  std::shared_ptr<tui::ModelSession> session;
  uint32_t tensor = kNone;
  FakeHost host;
  std::unique_ptr<GroupsPane> pane;

  GroupsFixture(const std::string& rel, const std::string& name) {
    auto model = open_model(std::string(AKVIEW_ORACLES_DIR) + "/" + rel);
    EXPECT_TRUE(model.ok()) << rel;
    if (!model.ok()) return;
    session = tui::make_session(std::move(*model));
    const Tensor* t = session->model.find(name);
    EXPECT_NE(t, nullptr) << name;
    tensor = t ? static_cast<uint32_t>(t - session->model.tensors.data()) : kNone;
    pane = std::make_unique<GroupsPane>(session, [this] { return tensor; });
  }
  // Draws, lets the worker finish and applies its results, draws again.
  tui::Canvas settle(int w, int h) {
    draw_pane(*pane, host, w, h);
    for (int spins = 0; host.worker().busy() > 0 && spins < 20000; ++spins) {
      for (auto& apply : host.worker().take_posted()) apply();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (auto& apply : host.worker().take_posted()) apply();
    EXPECT_EQ(host.worker().busy(), 0);
    return draw_pane(*pane, host, w, h);
  }
};

TEST(GroupsPane, Q4kTableHeatmapsHistogramsAndStepThrough) {
  GroupsFixture f("gguf/lq_q4_k_m.gguf", "token_embd.weight");
  ASSERT_TRUE(f.pane);
  auto c = f.settle(120, 40);
  const tui::GroupWindow* w = f.pane->window();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->row_begin, 0);
  EXPECT_EQ(w->row_end, 32);           // the first window of the 40 rows
  EXPECT_EQ(w->groups_per_row, 16u);   // 512 columns in sub-blocks of 32
  EXPECT_EQ(w->groups.size(), 32u * 16);
  EXPECT_GE(find_row(c, {"row", "col", "scale", "bias", "levels"}), 1) << screen_text(c);
  EXPECT_GE(find_row(c, {"|scale|", "rows x groups"}), 1) << screen_text(c);
  EXPECT_GE(find_row(c, {"|bias| (min)"}), 1) << screen_text(c);
  EXPECT_GE(find_row(c, {"quarters of"}), 1) << screen_text(c);
  EXPECT_GE(find_row(c, {"values ["}), 1) << screen_text(c);
  EXPECT_GE(find_row(c, {"levels used per group (1..16 of codes 0..15)"}), 1) << screen_text(c);
  // Each scale shown is the group's: row 0 col 32 is the second line of the table.
  EXPECT_GE(find_row(c, {"     0     32"}), 2) << screen_text(c);
  // G / End: the tensor's last group (row 39, columns 480..511), the window moved to hold it.
  f.pane->act(Action::end, f.host);
  c = f.settle(120, 40);
  ASSERT_NE(f.pane->window(), nullptr);
  EXPECT_EQ(f.pane->window()->row_end, 40);
  EXPECT_EQ(f.pane->window()->row_begin, 8);
  EXPECT_NE(f.pane->position().find("group 512/512"), std::string::npos) << f.pane->position();
  // g / Home: the first group again.
  f.pane->act(Action::home, f.host);
  c = f.settle(120, 40);
  EXPECT_EQ(f.pane->window()->row_begin, 0);
  EXPECT_NE(f.pane->position().find("group 1/512"), std::string::npos) << f.pane->position();
  // Past the last group of the window: rows 32..39 are computed.
  for (int k = 0; k < 511; ++k) f.pane->act(Action::down, f.host);
  f.pane->act(Action::down, f.host);
  c = f.settle(120, 40);
  ASSERT_NE(f.pane->window(), nullptr);
  EXPECT_EQ(f.pane->window()->row_begin, 32);
  EXPECT_EQ(f.pane->window()->row_end, 40);
  f.pane->act(Action::down, f.host);
  f.pane->act(Action::down, f.host);   // row 32, columns 64..95
  EXPECT_TRUE(f.pane->act(Action::open, f.host));
  ASSERT_TRUE(f.pane->steps_open());
  c = draw_pane(*f.pane, f.host, 120, 40);
  EXPECT_GE(find_row(c, {"step-through"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"token_embd.weight q4_k [32, 64]: group of 32, columns 64..95"}), 1) << screen_text(c);
  EXPECT_GE(find_row(c, {"6-bit scale and min of sub-block 2"}), 1) << screen_text(c);
  std::string all;
  for (int k = 0; k < 40; ++k) {   // scroll through the whole step-through
    all += screen_text(c);
    f.pane->act(Action::page_down, f.host);
    c = draw_pane(*f.pane, f.host, 120, 40);
  }
  for (const char* want : {"formula", "y = scale * q - min", "family: ggml K-quants", "4.5 bits per weight"})
    EXPECT_NE(all.find(want), std::string::npos) << want;
  EXPECT_TRUE(f.pane->act(Action::back, f.host));
  EXPECT_FALSE(f.pane->steps_open());
}

// The header names the tensor in the form the Tensors pane shows: canonical, or native after `c`.
TEST(GroupsPane, TheHeaderNamesTheTensorAsTensorsDoes) {
  GroupsFixture f("gguf/lq_q4_k_m.gguf", "token_embd.weight");
  ASSERT_TRUE(f.pane);
  tui::attach_names(*f.session, std::make_shared<NameMap>(build_name_map(f.session->model)));
  auto c = f.settle(120, 40);
  const std::string canonical(f.session->canonical(f.tensor));
  ASSERT_FALSE(canonical.empty());
  EXPECT_TRUE(c.row_text(0).starts_with(canonical + "  q4_k")) << c.row_text(0);
  f.session->show_canonical = false;
  c = draw_pane(*f.pane, f.host, 120, 40);
  EXPECT_TRUE(c.row_text(0).starts_with("token_embd.weight  q4_k")) << c.row_text(0);
}

TEST(GroupsPane, SmallerSizesKeepTheTableAndPlainTensorsSaySo) {
  GroupsFixture f("gguf/lq_q4_k_m.gguf", "blk.0.attn_k.weight");
  ASSERT_TRUE(f.pane);
  auto c = f.settle(80, 24);
  EXPECT_GE(find_row(c, {"row", "col", "scale", "bias"}), 1) << screen_text(c);
  EXPECT_GE(find_row(c, {"|scale|"}), 1) << screen_text(c);
  c = f.settle(40, 12);
  EXPECT_GE(find_row(c, {"row", "col", "scale"}), 1) << screen_text(c);
  GroupsFixture plain("gguf/lq_q4_k_m.gguf", "output_norm.weight");
  ASSERT_TRUE(plain.pane);
  c = plain.settle(80, 24);
  EXPECT_GE(find_row(c, {"no quantization groups"}), 1) << screen_text(c);
}

std::string steps_text(GroupsFixture& f, int w, int h) {
  EXPECT_TRUE(f.pane->act(Action::open, f.host));
  std::string all;
  for (int k = 0; k < 30; ++k) {
    all += screen_text(draw_pane(*f.pane, f.host, w, h));
    f.pane->act(Action::page_down, f.host);
  }
  return all;
}

TEST(GroupsPane, MlxAffineAndIq2xxsStepThroughs) {
  GroupsFixture mlx("st/mlx_q4_g64_f16", "model.layers.0.self_attn.q_proj.weight");
  ASSERT_TRUE(mlx.pane);
  mlx.settle(120, 40);
  ASSERT_NE(mlx.pane->window(), nullptr);
  EXPECT_EQ(mlx.pane->window()->groups_per_row, 2u);   // 128 columns in groups of 64
  std::string text = steps_text(mlx, 120, 40);
  for (const char* want : {"mlx.affine [0, 0]", "packed weight", "as U32 words", "scales (f16)", "biases (f16)",
                           "y = scale * q + bias", "family: MLX affine quantization"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  GroupsFixture iq("gguf/lq_iq2_xxs.gguf", "token_embd.weight");
  ASSERT_TRUE(iq.pane);
  auto c = iq.settle(120, 40);
  EXPECT_GE(find_row(c, {"lattice codebook"}), 1) << screen_text(c);
  text = steps_text(iq, 120, 40);
  for (const char* want :
       {"iq2_xxs [0, 0]", "grid indices", "grid values", "sign bytes", "y = db * grid * sign", "family: ggml i-quants"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
}

}   // namespace
}   // namespace akview::testing
