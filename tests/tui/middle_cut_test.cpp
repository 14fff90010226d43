// Names narrower than their column are cut in the middle ("layers.2.atte…output.weight"), so two rows
// never look the same: the Tensors table on the demo at a narrow width, and the cut itself.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "core/names/name_map.hpp"
#include "tests/tui/pane_test_util.hpp"
#include "ui/tui/tensors_pane.hpp"
#include "ui/tui/value_stats.hpp"

namespace akview::testing {
namespace {

TEST(MiddleCut, CanvasTextMiddleKeepsBothEnds) {
  tui::Canvas c(40, 1);
  c.text_middle(0, 0, "layers.2.attention.output.weight", tui::Role::normal, 20);
  EXPECT_EQ(c.row_text(0), "layers.2.a…ut.weight");
  // What fits is drawn as it is.
  tui::Canvas d(40, 1);
  d.text_middle(0, 0, "short", tui::Role::normal, 20);
  EXPECT_EQ(d.row_text(0), "short");
}

TEST(MiddleCut, NarrowTensorsTableNeverShowsTwoRowsAlike) {
  auto model = open_model(std::string(AKVIEW_DEMO_DIR) + "/demo/llama-demo-q4km.gguf");
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  auto session = tui::make_session(std::move(*model));
  tui::attach_names(*session, std::make_shared<NameMap>(build_name_map(session->model)));
  tui::TensorsPane pane(session, std::make_shared<tui::StatsPlan>(), [] {});
  FakeHost host;
  const int h = 45;   // every one of the 39 rows on screen
  // A name column of 20: "layers.0.attention." is 19, so a cut at the end shows q and output alike.
  const tui::Canvas c = draw_pane(pane, host, 40, h);
  std::set<std::string> seen;
  int cut = 0;
  for (int y = 1; y < h; ++y) {
    const std::string row = c.row_text(y);
    if (row.empty()) continue;
    EXPECT_TRUE(seen.insert(row).second) << "two rows alike: " << row << "\n" << screen_text(c);
    if (row.find("…") != std::string::npos) {
      ++cut;
      EXPECT_NE(row.find(".weight"), std::string::npos) << row;   // the end of the name is kept
    }
  }
  EXPECT_EQ(seen.size(), 39u);
  EXPECT_GT(cut, 0) << screen_text(c);
}

}   // namespace
}   // namespace akview::testing
