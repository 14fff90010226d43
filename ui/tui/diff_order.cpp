// The Diff pane's order, worst first (diff_order.hpp).
#include "ui/tui/diff_order.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace akview::tui {

DiffRank diff_rank(const DiffRow& row) {
  const TensorDiff& d = row.diff;
  if (d.a == kNone || d.b == kNone || d.shape_differs) return DiffRank::finding;
  if (!row.valued) return DiffRank::waiting;
  return d.has_values ? DiffRank::compared : DiffRank::finding;
}

bool worse_error(const TensorDiff& x, const TensorDiff& y) {
  const bool nx = std::isnan(x.error.rel_rmse), ny = std::isnan(y.error.rel_rmse);
  if (nx || ny) return nx && !ny;
  return x.error.rel_rmse > y.error.rel_rmse;
}

void WorstFirst::rebuild(std::span<const DiffRow> rows) {
  std::vector<uint32_t> by_rank[3];
  for (uint32_t i = 0; i < rows.size(); ++i) by_rank[static_cast<int>(diff_rank(rows[i]))].push_back(i);
  std::stable_sort(by_rank[1].begin(), by_rank[1].end(),
                   [&](uint32_t x, uint32_t y) { return worse_error(rows[x].diff, rows[y].diff); });
  findings_ = by_rank[0].size();
  compared_ = by_rank[1].size();
  order_.clear();
  order_.reserve(rows.size());
  for (const auto& part : by_rank) order_.insert(order_.end(), part.begin(), part.end());
}

void WorstFirst::merge(std::span<const DiffRow> rows, std::vector<uint32_t> changed) {
  if (changed.empty()) return;
  std::sort(changed.begin(), changed.end());
  changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
  std::vector<uint32_t> new_findings, new_compared;
  for (uint32_t i : changed) (diff_rank(rows[i]) == DiffRank::finding ? new_findings : new_compared).push_back(i);
  // new_findings is in A's order already; the compared ones go worst first, ties in A's order.
  auto worse = [&](uint32_t x, uint32_t y) { return worse_error(rows[x].diff, rows[y].diff); };
  std::stable_sort(new_compared.begin(), new_compared.end(), worse);

  const auto begin = order_.begin();
  const auto compared_begin = begin + static_cast<std::ptrdiff_t>(findings_);
  const auto waiting_begin = compared_begin + static_cast<std::ptrdiff_t>(compared_);
  std::vector<uint32_t>& out = scratch_;
  out.clear();
  out.reserve(order_.size());
  std::merge(begin, compared_begin, new_findings.begin(), new_findings.end(), std::back_inserter(out));
  // Among equal errors the rows already shown stay ahead: they keep their place on screen.
  std::merge(compared_begin, waiting_begin, new_compared.begin(), new_compared.end(), std::back_inserter(out), worse);
  // The waiting rows and `changed` are both in A's order: one walk drops the changed ones.
  auto drop = changed.begin();
  for (auto it = waiting_begin; it != order_.end(); ++it) {
    while (drop != changed.end() && *drop < *it) ++drop;
    if (drop == changed.end() || *drop != *it) out.push_back(*it);
  }
  findings_ += new_findings.size();
  compared_ += new_compared.size();
  order_.swap(out);
}

}   // namespace akview::tui
