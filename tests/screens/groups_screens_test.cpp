// Goldens of the Groups pane through the real binary at 120x40, 80x24 and 40x12: the table and
// heatmaps of a Q4_K tensor of the demo model and the step-throughs of a Q4_K group, an MLX affine
// group (the demo's MLX folder) and an IQ2_XXS block (the oracle file). Rewrite with
// AKVIEW_UPDATE_GOLDENS=1 and review the diff.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/screens/golden.hpp"
#include "tests/screens/harness.hpp"

namespace akview::testing {
namespace {

// Opens `path` (relative to `cwd`), selects the tensor found by `search` (empty: the row after the
// first), shows the Groups pane and compares (with `heatmap`) the pane, then the step-through of the
// group under the cursor, at every size.
void golden_groups(const std::string& cwd, const std::string& path, const std::string& search, const std::string& name,
                   bool heatmap) {
  for (const TermSize& s : kGoldenSizes) {
    Terminal term;
    term.start({AKVIEW_BINARY, path}, s, {}, cwd);
    term.settle();
    if (search.empty()) {
      term.press("Down");
    } else {
      term.press("/");
      term.type(search);
      term.press("Enter");
    }
    term.press("4");
    if (heatmap) {
      EXPECT_TRUE(compare_golden(term.screen(), "groups_" + name + "_" + size_name(s)));
    }
    term.press("Enter");
    EXPECT_TRUE(compare_golden(term.screen(), "steps_" + name + "_" + size_name(s)));
    term.press("Esc");
    term.send_key("q");
    EXPECT_EQ(term.wait_exit(), 0);
  }
}

TEST(GroupsScreens, Q4kHeatmapAndStepThrough) {
  golden_groups(AKVIEW_DEMO_DIR, "demo/llama-demo-q4km.gguf", "layers.1.ffn.up", "q4k", true);
}

TEST(GroupsScreens, MlxAffineStepThrough) {
  golden_groups(AKVIEW_DEMO_DIR, "demo/llama-demo-mlx-4bit", "layers.1.ffn.up", "mlx_affine", false);
}

TEST(GroupsScreens, Iq2xxsStepThrough) {
  golden_groups(AKVIEW_ORACLES_DIR, "gguf/lq_iq2_xxs.gguf", "", "iq2_xxs", false);
}

}   // namespace
}   // namespace akview::testing
