// The Mapping pane drawn into an off-screen canvas: native ↔ canonical ↔ role, unmapped tensors
// flagged and counted by `u`, a regex filter and its inverse, search with n/N, the canonical sort,
// and the extracted config with each value's source, from 120×40 down to 40×12.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "core/names/name_map.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "tests/writers/st_writer.hpp"
#include "ui/tui/mapping_pane.hpp"

namespace akview::testing {
namespace {

using tui::Action;
using tui::MappingPane;
using tui::Role;

constexpr uint32_t kF32 = 0;

GgufWriter llama_model() {
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.set("llama.block_count", gguf_u32(12));
  w.set("llama.embedding_length", gguf_u32(64));
  w.set("llama.attention.head_count", gguf_u32(4));
  w.add_tensor({"token_embd.weight", kF32, {64, 8}});
  for (int layer : {0, 10, 2}) {   // natural order puts blk.2 before blk.10
    w.add_tensor({"blk." + std::to_string(layer) + ".attn_q.weight", kF32, {4, 4}});
    w.add_tensor({"blk." + std::to_string(layer) + ".attn_k.weight", kF32, {4, 4}});
  }
  w.add_tensor({"output_norm.weight", kF32, {64}});
  w.add_tensor({"weird.thing", kF32, {3}});
  w.add_tensor({"zz.other_unknown", kF32, {3}});
  return w;
}

class MappingPaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = dir_.file("llama.gguf");
    ASSERT_TRUE(llama_model().write(path));
    auto model = open_model(path);
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    session_ = tui::make_session(std::move(*model));
    pane_ = std::make_unique<MappingPane>(session_);
  }
  void attach() { tui::attach_names(*session_, std::make_shared<NameMap>(build_name_map(session_->model))); }
  tui::Canvas draw(int w, int h) { return draw_pane(*pane_, host_, w, h); }
  void filter(std::string_view text) {
    ASSERT_TRUE(pane_->act(Action::filter, host_));
    ASSERT_EQ(host_.label(), "filter (regex, ! inverts)");
    host_.erase_all();   // the prompt opens on the filter in force
    host_.type(text);
    host_.accept();
  }
  std::string native_at(uint64_t row) const {
    const auto e = pane_->entry_at(row);
    return e ? std::string(session_->model.tensors[e->tensor].name) : std::string("(none)");
  }

  TempDir dir_;
  FakeHost host_;
  std::shared_ptr<tui::ModelSession> session_;
  std::unique_ptr<MappingPane> pane_;
};

TEST_F(MappingPaneTest, WaitsForTheNameMap) {
  auto c = draw(80, 24);
  EXPECT_EQ(c.row_text(0), "building the name map…");
  EXPECT_EQ(pane_->row_count(), 0u);
  EXPECT_FALSE(pane_->act(Action::unmapped_only, host_));
  attach();
  c = draw(80, 24);
  EXPECT_EQ(pane_->row_count(), 10u);
}

TEST_F(MappingPaneTest, NativeCanonicalRoleAndNoteWithUnmappedFlagged) {
  attach();
  auto c = draw(120, 40);
  const std::string header = c.row_text(0);
  for (const char* col : {"native", "canonical", "role", "note"})
    EXPECT_NE(header.find(col), std::string::npos) << header;
  int y = find_row(c, {"blk.0.attn_q.weight", "layers.0.attention.q.weight", "attention.q"});
  ASSERT_GE(y, 0) << screen_text(c);
  EXPECT_TRUE(row_has_role(c, y, Role::key));
  y = find_row(c, {"weird.thing", "unmapped"});
  ASSERT_GE(y, 0) << screen_text(c);
  EXPECT_TRUE(row_has_role(c, y, Role::warn));
  // Natural order of native names: blk.2 before blk.10.
  EXPECT_LT(find_row(c, {"blk.2.attn_q.weight"}), find_row(c, {"blk.10.attn_q.weight"}));
  EXPECT_EQ(native_at(0), "blk.0.attn_k.weight");
  EXPECT_EQ(pane_->state(), "2 unmapped · sort native");
  EXPECT_EQ(pane_->position(), "row 1/10");
}

TEST_F(MappingPaneTest, UnmappedOnlyCountsTheRightRows) {
  attach();
  draw(80, 24);
  pane_->act(Action::unmapped_only, host_);
  EXPECT_EQ(pane_->row_count(), 2u);
  EXPECT_EQ(native_at(0), "weird.thing");
  EXPECT_EQ(native_at(1), "zz.other_unknown");
  auto c = draw(80, 24);
  EXPECT_EQ(find_row(c, {"blk."}), -1) << screen_text(c);
  pane_->act(Action::unmapped_only, host_);
  EXPECT_EQ(pane_->row_count(), 10u);
}

TEST_F(MappingPaneTest, FilterAndItsInverseCountTheRightRows) {
  attach();
  draw(80, 24);
  filter("attn_[qk]");
  EXPECT_EQ(pane_->row_count(), 6u);
  EXPECT_NE(pane_->state().find("filter attn_[qk]"), std::string::npos);
  filter("!attn_[qk]");
  EXPECT_EQ(pane_->row_count(), 10u - 6u) << pane_->state();
  // The canonical name is matched too.
  pane_->act(Action::filter, host_);
  host_.erase_all();
  host_.type("attention\\.k");
  host_.accept();
  EXPECT_EQ(pane_->row_count(), 3u);
  // A bad pattern keeps the last good one, and says so in the words every prompt uses; Esc restores
  // what was there.
  pane_->act(Action::filter, host_);
  host_.type("(");
  EXPECT_NE(pane_->state().find("bad pattern 'attention\\.k(': mismatched"), std::string::npos) << pane_->state();
  ASSERT_FALSE(host_.flashes.empty());
  EXPECT_TRUE(host_.flashes.back().starts_with("bad pattern 'attention\\.k('")) << host_.flashes.back();
  EXPECT_EQ(pane_->row_count(), 3u);
  host_.cancel();
  EXPECT_EQ(pane_->row_count(), 3u);
  EXPECT_EQ(pane_->state().find("bad pattern"), std::string::npos);
  pane_->act(Action::filter, host_);
  host_.erase_all();
  host_.accept();
  EXPECT_EQ(pane_->row_count(), 10u);
}

TEST_F(MappingPaneTest, SearchLandsAndNextWraps) {
  attach();
  draw(80, 24);
  pane_->act(Action::search, host_);
  host_.type("ATTN_Q");
  host_.accept();
  EXPECT_EQ(native_at(static_cast<uint64_t>(pane_->cursor_row())), "blk.0.attn_q.weight");
  auto c = draw(80, 24);
  const int y = find_row(c, {"blk.0.attn_q.weight"});
  ASSERT_GE(y, 0);
  EXPECT_TRUE(row_has_role(c, y, Role::match));
  pane_->act(Action::search_next, host_);
  EXPECT_EQ(native_at(static_cast<uint64_t>(pane_->cursor_row())), "blk.2.attn_q.weight");
  pane_->act(Action::search_next, host_);
  EXPECT_EQ(native_at(static_cast<uint64_t>(pane_->cursor_row())), "blk.10.attn_q.weight");
  pane_->act(Action::search_next, host_);   // wraps
  EXPECT_EQ(native_at(static_cast<uint64_t>(pane_->cursor_row())), "blk.0.attn_q.weight");
  pane_->act(Action::search_prev, host_);   // wraps back
  EXPECT_EQ(native_at(static_cast<uint64_t>(pane_->cursor_row())), "blk.10.attn_q.weight");
}

TEST_F(MappingPaneTest, CanonicalSortPutsUnmappedLast) {
  attach();
  draw(80, 24);
  pane_->act(Action::toggle_canonical, host_);
  EXPECT_TRUE(pane_->sorted_by_canonical());
  const auto first = pane_->entry_at(0);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->canonical, "layers.0.attention.k.weight");
  EXPECT_EQ(pane_->entry_at(2)->canonical, "layers.2.attention.k.weight");
  EXPECT_FALSE(pane_->entry_at(8)->mapped);
  EXPECT_FALSE(pane_->entry_at(9)->mapped);
  EXPECT_NE(pane_->state().find("sort canonical"), std::string::npos);
}

TEST_F(MappingPaneTest, ConfigWithSourcesAtEverySize) {
  attach();
  for (auto [w, h] : {std::pair{120, 40}, std::pair{80, 24}, std::pair{40, 12}, std::pair{160, 30}}) {
    auto c = draw(w, h);
    EXPECT_GE(find_row(c, {"config"}), 0) << w << "x" << h << "\n" << screen_text(c);
    EXPECT_GE(find_row(c, {"arch", "llama", "gguf: general"}), 0) << screen_text(c);
    EXPECT_GE(find_row(c, {"native", "canonical"}), 0) << screen_text(c);
    EXPECT_GE(find_row(c, {"blk.0.attn_k"}), 0) << screen_text(c);
    if (h >= 24) {
      EXPECT_GE(find_row(c, {"dim", "64", "gguf: llama.embedding_length"}), 0) << screen_text(c);
      EXPECT_GE(find_row(c, {"layers", "12", "gguf: llama.block_count"}), 0) << screen_text(c);
    }
  }
  // At 40×12 the table keeps a usable page and scrolls under the config.
  auto c = draw(40, 12);
  pane_->act(Action::end, host_);
  c = draw(40, 12);
  EXPECT_GE(find_row(c, {"zz.other"}), 0) << screen_text(c);
  EXPECT_EQ(pane_->position(), "row 10/10");
}

TEST_F(MappingPaneTest, ClickSelectsAndWheelScrolls) {
  attach();
  draw(80, 24);
  pane_->click(2, 3, host_);
  EXPECT_EQ(pane_->cursor_row(), 2);
  pane_->wheel(2);
  EXPECT_EQ(pane_->cursor_row(), 4);
  pane_->click(2, 0, host_);   // the column header: nothing
  EXPECT_EQ(pane_->cursor_row(), 4);
}

// A SafeTensors folder: Hugging Face names, the config from config.json with its keys as sources.
TEST(MappingPaneSafetensors, HuggingFaceNamesAndConfigJson) {
  TempDir dir;
  ASSERT_TRUE(
      write_safetensors(dir.file("model.safetensors"),
                        {StTensor{"model.embed_tokens.weight", "F32", {4, 2}, std::vector<uint8_t>(32, 0)},
                         StTensor{"model.layers.0.self_attn.q_proj.weight", "F32", {2, 2}, std::vector<uint8_t>(16, 0)},
                         StTensor{"lm_head.weight", "F32", {4, 2}, std::vector<uint8_t>(32, 0)},
                         StTensor{"extra.buffer", "F32", {1}, std::vector<uint8_t>(4, 0)}}));
  ASSERT_TRUE(
      write_text(dir.file("config.json"),
                 R"({"model_type": "llama", "hidden_size": 2, "num_hidden_layers": 1, "num_attention_heads": 1,)"
                 R"( "vocab_size": 4})"));
  auto model = open_model(dir.path());
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  auto session = tui::make_session(std::move(*model));
  tui::attach_names(*session, std::make_shared<NameMap>(build_name_map(session->model)));
  FakeHost host;
  MappingPane pane(session);
  auto c = draw_pane(pane, host, 120, 40);
  EXPECT_GE(find_row(c, {"model.layers.0.self_attn.q_proj.weight", "layers.0.attention.q.weight", "attention.q"}), 0)
      << screen_text(c);
  EXPECT_GE(find_row(c, {"lm_head.weight", "output.weight"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"extra.buffer", "unmapped"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"arch", "llama", "config.json: model_type"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"dim", "2", "config.json: hidden_size"}), 0) << screen_text(c);
  EXPECT_GE(find_row(c, {"vocab", "4", "config.json: vocab_size"}), 0) << screen_text(c);
}

// A map too big to sort between two frames is sorted on the worker; the rows come in model order
// until the result is posted.
TEST(MappingPaneBig, SortsOnTheWorker) {
  constexpr int kLayers = 60000;
  TempDir dir;
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  for (int i = kLayers - 1; i >= 0; --i) w.add_tensor({"blk." + std::to_string(i) + ".attn_q.weight", kF32, {1}});
  ASSERT_TRUE(w.write(dir.file("big.gguf"), true));
  auto model = open_model(dir.file("big.gguf"));
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  auto session = tui::make_session(std::move(*model));
  tui::attach_names(*session, std::make_shared<NameMap>(build_name_map(session->model)));
  FakeHost host;
  MappingPane pane(session);
  auto native_at = [&](uint64_t row) { return std::string(session->model.tensors[pane.entry_at(row)->tensor].name); };
  draw_pane(pane, host, 80, 24);
  EXPECT_EQ(pane.row_count(), static_cast<uint64_t>(kLayers));
  EXPECT_EQ(native_at(0), "blk.59999.attn_q.weight");
  EXPECT_NE(pane.state().find("(sorting…)"), std::string::npos) << pane.state();
  // Apply what the worker posts until it is done (bounded: a broken worker fails, never hangs).
  for (int spins = 0; host.worker().busy() > 0 && spins < 60000; ++spins) {
    for (auto& apply : host.worker().take_posted()) apply();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(host.worker().busy(), 0);
  auto c = draw_pane(pane, host, 80, 24);
  EXPECT_EQ(native_at(0), "blk.0.attn_q.weight");
  EXPECT_EQ(native_at(2), "blk.2.attn_q.weight");
  EXPECT_EQ(pane.state().find("sorting"), std::string::npos) << pane.state();
  // The cursor stays on the tensor it was on, now at the end of the sorted rows.
  EXPECT_EQ(native_at(static_cast<uint64_t>(pane.cursor_row())), "blk.59999.attn_q.weight");
  EXPECT_GE(find_row(c, {"blk.59999.attn_q.weight"}), 1) << screen_text(c);
}

}   // namespace
}   // namespace akview::testing
