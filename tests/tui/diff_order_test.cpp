// The Diff pane's order (ui/tui/diff_order): findings in A's order, then compared pairs by relative
// RMS (largest first, NaN first of all), then pairs still waiting; results merged batch by batch land
// exactly where sorting everything again would put them.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ui/tui/diff_order.hpp"

namespace akview::testing {
namespace {

using tui::DiffRow;
using tui::WorstFirst;

DiffRow waiting(uint32_t i) {
  DiffRow r;
  r.diff.key = "t" + std::to_string(i);
  r.diff.a = r.diff.b = i;
  return r;
}

void give_error(DiffRow& r, double rel_rmse) {
  r.valued = true;
  r.diff.has_values = true;
  r.diff.error.rel_rmse = rel_rmse;
}

TEST(DiffOrder, FindingsThenWorstFirstThenWaiting) {
  std::vector<DiffRow> rows;
  for (uint32_t i = 0; i < 8; ++i) rows.push_back(waiting(i));
  rows[1].diff.b = kNone;   // only in A
  give_error(rows[2], 0.01);
  give_error(rows[3], 0.5);
  rows[4].valued = true;   // could not be compared
  rows[4].diff.value_problem = "decode failed";
  give_error(rows[5], std::nan(""));   // NaN: the worst error
  rows[6].diff.shape_differs = true;
  give_error(rows[7], 0.5);   // ties keep A's order
  WorstFirst order;
  order.rebuild(rows);
  EXPECT_EQ(order.order(), (std::vector<uint32_t>{1, 4, 6, 5, 3, 7, 2, 0}));
  EXPECT_EQ(order.findings(), 3u);
  EXPECT_EQ(order.compared(), 4u);
  EXPECT_EQ(tui::diff_rank(rows[0]), tui::DiffRank::waiting);
}

TEST(DiffOrder, MergingBatchesEqualsSortingEverything) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> error(0, 1);
  std::vector<DiffRow> rows;
  for (uint32_t i = 0; i < 500; ++i) {
    rows.push_back(waiting(i));
    if (i % 37 == 0) rows.back().diff.a = kNone;   // findings from the start
  }
  WorstFirst merged;
  merged.rebuild(rows);
  // Results arrive in batches of varying size, in A's order as the worker makes them; some are
  // problems, some tie with earlier ones.
  uint32_t next = 0;
  while (next < rows.size()) {
    std::vector<uint32_t> batch;
    const uint32_t n = 1 + rng() % 40;
    for (uint32_t k = 0; k < n && next < rows.size(); ++next) {
      DiffRow& r = rows[next];
      if (tui::diff_rank(r) != tui::DiffRank::waiting) continue;
      if (next % 53 == 0) {
        r.valued = true;
        r.diff.value_problem = "cancelled";
      } else {
        give_error(r, next % 11 == 0 ? 0.25 : std::round(error(rng) * 100) / 100);
      }
      batch.push_back(next);
      ++k;
    }
    merged.merge(rows, batch);
    WorstFirst fresh;
    fresh.rebuild(rows);
    ASSERT_EQ(merged.order(), fresh.order()) << "after row " << next;
    ASSERT_EQ(merged.findings(), fresh.findings());
    ASSERT_EQ(merged.compared(), fresh.compared());
  }
  for (size_t k = 1; k < merged.compared(); ++k) {
    const auto& o = merged.order();
    EXPECT_GE(rows[o[merged.findings() + k - 1]].diff.error.rel_rmse,
              rows[o[merged.findings() + k]].diff.error.rel_rmse);
  }
}

}   // namespace
}   // namespace akview::testing
