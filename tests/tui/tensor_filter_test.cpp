// The Tensors filter by column (`type:q6_k`, `layer:1`, `role:norm`, with name patterns as before)
// and the totals line for the rows it shows, on the demo's Q4_K_M GGUF (24 q4_k, 5 q6_k, 1 q8_0 and
// 9 f32 tensors over 4 layers).
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "core/names/name_map.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "ui/tui/tensor_filter.hpp"
#include "ui/tui/tensor_table.hpp"
#include "ui/tui/tensors_pane.hpp"
#include "ui/tui/value_stats.hpp"

namespace akview::testing {
namespace {

using tui::TensorTable;

class DemoFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = open_model(std::string(AKVIEW_DEMO_DIR) + "/demo/llama-demo-q4km.gguf");
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    session_ = tui::make_session(std::move(*model));
    tui::attach_names(*session_, std::make_shared<NameMap>(build_name_map(session_->model)));
    table_ = std::make_unique<TensorTable>(*session_);
  }
  const Tensor& tensor(uint32_t row) const { return session_->model.tensors[row]; }
  std::shared_ptr<tui::ModelSession> session_;
  std::unique_ptr<TensorTable> table_;
};

TEST_F(DemoFilterTest, TypeTermKeepsTheTensorsOfThatTypeAndTotalsThem) {
  ASSERT_TRUE(table_->set_filter("type:q6_k").ok());
  ASSERT_EQ(table_->rows().size(), 5u);
  uint64_t bytes = 0, params = 0;
  for (uint32_t r : table_->rows()) {
    EXPECT_EQ(type_info(tensor(r).type).name, "q6_k") << tensor(r).name;
    bytes += tensor(r).nbytes;
    params += session_->model.n_elements(tensor(r));
  }
  EXPECT_EQ(table_->shown_units(), 5u);
  EXPECT_EQ(table_->shown_bytes(), bytes);
  EXPECT_EQ(table_->shown_parameters(), params);
  EXPECT_EQ(bytes, 483840u);   // 472.50 KiB, as `akview info` lists q6_k
  // Case does not matter, and commas list several types.
  ASSERT_TRUE(table_->set_filter("type:Q6_K,q8_0").ok());
  EXPECT_EQ(table_->rows().size(), 6u);
}

TEST_F(DemoFilterTest, LayerAndRoleTermsAndTheirIntersection) {
  ASSERT_TRUE(table_->set_filter("layer:1").ok());
  ASSERT_FALSE(table_->rows().empty());
  for (uint32_t r : table_->rows()) EXPECT_EQ(table_->layer_of(r), 1) << tensor(r).name;
  const size_t layer1 = table_->rows().size();
  ASSERT_TRUE(table_->set_filter("layer:1-2").ok());
  EXPECT_EQ(table_->rows().size(), 2 * layer1);

  ASSERT_TRUE(table_->set_filter("role:norm").ok());
  ASSERT_FALSE(table_->rows().empty());
  for (uint32_t r : table_->rows()) {
    const auto e = session_->entry(r);
    ASSERT_TRUE(e.has_value()) << tensor(r).name;
    EXPECT_NE(e->role.find("norm"), std::string_view::npos) << e->role;
  }
  // All terms must pass; '!' inverts one; a plain word is still a name pattern.
  ASSERT_TRUE(table_->set_filter("type:q4_k layer:1").ok());
  for (uint32_t r : table_->rows()) {
    EXPECT_EQ(type_info(tensor(r).type).name, "q4_k");
    EXPECT_EQ(table_->layer_of(r), 1);
  }
  const size_t q4_layer1 = table_->rows().size();
  ASSERT_TRUE(table_->set_filter("!type:q4_k layer:1").ok());
  EXPECT_EQ(table_->rows().size() + q4_layer1, layer1);
  ASSERT_TRUE(table_->set_filter("attn_q type:q4_k").ok());
  EXPECT_EQ(table_->rows().size(), 4u);   // one attn_q per layer, all q4_k
}

TEST_F(DemoFilterTest, AFilterThatCannotBeSaysWhyAndKeepsTheRows) {
  ASSERT_TRUE(table_->set_filter("type:q6_k").ok());
  EXPECT_NE(table_->set_filter("typ:q6_k").error().message.find("no column 'typ'"), std::string::npos);
  EXPECT_NE(table_->set_filter("type:q6k").error().message.find("no type 'q6k'"), std::string::npos);
  EXPECT_NE(table_->set_filter("layer:x").error().message.find("layer 'x'"), std::string::npos);
  EXPECT_NE(table_->set_filter("(").error().message.find("bad pattern"), std::string::npos);
  EXPECT_EQ(table_->rows().size(), 5u);
  // Half-typed terms filter nothing yet.
  ASSERT_TRUE(table_->set_filter("type:").ok());
  EXPECT_EQ(table_->rows().size(), session_->model.tensors.size());
}

TEST_F(DemoFilterTest, TheTensorsPaneShowsTheTotalsOfAFilteredTable) {
  tui::TensorsPane pane(session_, std::make_shared<tui::StatsPlan>(), [] {});
  FakeHost host;
  // Unfiltered: no totals line (the title bar has the model's).
  EXPECT_EQ(find_row(draw_pane(pane, host, 120, 20), {"shown:"}), -1);
  ASSERT_TRUE(pane.act(tui::Action::filter, host));
  EXPECT_NE(host.label().find("type:"), std::string::npos) << host.label();
  host.type("type:q6_k");
  host.accept();
  const tui::Canvas c = draw_pane(pane, host, 120, 20);
  const int y = find_row(c, {"shown: 5 tensors", "472.50 KiB", "23% of the model"});
  EXPECT_EQ(y, 19) << screen_text(c);
  EXPECT_EQ(pane.state(), "filter type:q6_k (5 of 39)");
}

}   // namespace
}   // namespace akview::testing
