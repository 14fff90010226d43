// The Tensors table drops a column only when the space is really short: the type and shape columns
// are as wide as the longest type and shape of the model (their titles at least), not their widest
// table width, so on the demo at 80 columns the bits-per-weight column stays where four columns of
// the shape column would otherwise stand empty.
#include <string>

#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "core/names/name_map.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "ui/tui/tensors_pane.hpp"
#include "ui/tui/value_stats.hpp"

namespace akview::testing {
namespace {

TEST(TensorsColumns, At80ColumnsNoColumnIsDroppedForSpaceAnotherLeavesEmpty) {
  auto model = open_model(std::string(AKVIEW_DEMO_DIR) + "/demo/llama-demo-bf16");
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  auto session = tui::make_session(std::move(*model));
  tui::attach_names(*session, std::make_shared<NameMap>(build_name_map(session->model)));
  tui::TensorsPane pane(session, std::make_shared<tui::StatsPlan>(), [] {});
  FakeHost host;
  const tui::Canvas c = draw_pane(pane, host, 80, 45);
  const std::string header = c.row_text(0);
  for (const char* title : {"type", "shape", "params", "bytes", "bpw", "histogram"})
    EXPECT_NE(header.find(title), std::string::npos) << title << " dropped: " << header;
  // The longest shape, "[512, 256]", then the one column between it and params' right-aligned figure.
  EXPECT_NE(c.row_text(1).find("bf16 [512, 256]  131.1K"), std::string::npos) << c.row_text(1);
  // The names keep the rest (at least 28 columns at this width), cut in the middle where longer.
  EXPECT_EQ(header.find("type"), 30u) << header;
  EXPECT_NE(screen_text(c).find("layers.0.ffn.down.weight"), std::string::npos) << screen_text(c);
}

}   // namespace
}   // namespace akview::testing
