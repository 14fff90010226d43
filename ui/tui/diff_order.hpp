// The Diff pane's order, worst first (PRODUCT.md, the Diff pane): findings first (a tensor on one
// side only, a shape change, a pair whose values could not be compared), in A's order; then the
// compared pairs by relative RMS, largest first (NaN before any number: a NaN is the worst error);
// then the pairs still waiting, in A's order. Errors arrive from the worker in batches, and each
// batch is merged into the order without sorting every row again (a million tensors stay smooth).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/diff.hpp"

namespace akview::tui {

struct DiffRow {
  TensorDiff diff;
  bool valued = false;   // the value comparison ran (has_values, or value_problem says why not)
};

enum class DiffRank : uint8_t { finding, compared, waiting };
DiffRank diff_rank(const DiffRow& row);
// Among compared rows: x's error is worse than y's (larger relative RMS; NaN the worst).
bool worse_error(const TensorDiff& x, const TensorDiff& y);

class WorstFirst {
 public:
  // The order of `rows` from scratch.
  void rebuild(std::span<const DiffRow> rows);
  // Rows `changed` were waiting and now hold their results: each moves to its place.
  void merge(std::span<const DiffRow> rows, std::vector<uint32_t> changed);
  const std::vector<uint32_t>& order() const { return order_; }
  size_t findings() const { return findings_; }
  size_t compared() const { return compared_; }

 private:
  std::vector<uint32_t> order_;     // rows indices: findings, compared, waiting
  std::vector<uint32_t> scratch_;   // the next order, built beside it (kept to spare an allocation)
  size_t findings_ = 0, compared_ = 0;
};

}   // namespace akview::tui
