// Numerical edge rows: every backend in the table (every_backend.hpp) holds
// |y - y_ref| <= 1e-5 * sum|w x| on every row of the cancellation cases (edge_cases.hpp), per type
// family; the worst ratio to that bound per backend and family is printed
// ("edge-rows <backend> <family> worst <ratio>") for the notes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "compute/backend.hpp"
#include "compute/reference.hpp"
#include "core/decode/decode.hpp"
#include "edge_cases.hpp"
#include "every_backend.hpp"

namespace akview::compute {
namespace {

using testing::EdgeCase;
using testing::EdgeKind;

const std::vector<EdgeCase>& cases() {
  static const std::vector<EdgeCase> all = testing::all_edge_cases();
  return all;
}

// Activations: N(0.5, 1), so sums of x over a group are far from zero and a factorised bias term
// is large; plus a few outliers 30x the rest, as real activations have.
std::vector<float> activations(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.5f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = normal(rng);
  for (int k = 0; k < 4 && n > 0; ++k) x[rng() % static_cast<uint64_t>(n)] *= 30.0f;
  return x;
}

// The cases are what they claim: the decoded rows of `cancel` are mostly exact zeros, `one` has
// exactly one non-zero weight per row, `zero_huge` has whole zero groups.
TEST(EdgeCases, CasesHoldTheirCodes) {
  for (const EdgeCase& c : cases()) {
    std::vector<float> w(static_cast<size_t>(c.view.n_rows * c.view.n_cols));
    ASSERT_TRUE(decode_rows(c.view, 0, c.view.n_rows, w.data()).ok()) << c.label;
    for (int64_t r = 0; r < c.view.n_rows; ++r) {
      int64_t zeros = 0;
      for (int64_t j = 0; j < c.view.n_cols; ++j) zeros += w[r * c.view.n_cols + j] == 0.0f;
      const int64_t n = c.view.n_cols;
      switch (c.kind) {
        case EdgeKind::cancel: EXPECT_GE(zeros, n * 8 / 10) << c.label << " row " << r; break;
        case EdgeKind::one: EXPECT_EQ(zeros, n - 1) << c.label << " row " << r; break;
        case EdgeKind::near: EXPECT_LT(zeros, n / 2) << c.label << " row " << r; break;
        case EdgeKind::zero_huge: EXPECT_GE(zeros, n / 2) << c.label << " row " << r; break;
      }
    }
  }
}

class EdgeRows : public testing::EveryBackend {};

TEST_P(EdgeRows, EveryRowWithinItsBound) {
  Backend* b = backend_;
  struct Worst {
    double ratio = 0;
    std::string where;
    int cases = 0;
  };
  std::map<std::string, Worst> by_family;
  uint64_t seed = 100;
  for (const EdgeCase& c : cases()) {
    const size_t rows = static_cast<size_t>(c.view.n_rows);
    const auto x = activations(c.view.n_cols, seed++);
    if (!b->can_run(c.view)) {
      ADD_FAILURE() << GetParam() << " cannot run " << c.label;
      continue;
    }
    std::vector<float> y(rows, std::nanf(""));
    const Status s = b->matvec(c.view, x.data(), y.data());
    ASSERT_TRUE(s.ok()) << c.label << ": " << s.error().to_string();
    std::vector<double> ref(rows), abs_wx(rows);
    ASSERT_TRUE(reference_matvec(c.view, x.data(), ref.data(), abs_wx.data()).ok()) << c.label;
    Worst& w = by_family[c.family];
    ++w.cases;
    for (size_t r = 0; r < rows; ++r) {
      const double err = std::fabs(static_cast<double>(y[r]) - ref[r]), bound = 1e-5 * abs_wx[r];
      const double ratio = err == 0 ? 0.0 : bound > 0 ? err / bound : INFINITY;
      if (!(ratio <= w.ratio)) {
        w.ratio = std::isnan(ratio) ? INFINITY : ratio;
        w.where = c.label + " row " + std::to_string(r) + ": y=" + std::to_string(y[r]) +
                  " ref=" + std::to_string(ref[r]) + " sum|wx|=" + std::to_string(abs_wx[r]);
      }
    }
  }
  for (const auto& [family, w] : by_family) {
    std::printf("edge-rows %-9s %-18s worst %.3g of the bound over %d cases\n", GetParam().c_str(), family.c_str(),
                w.ratio, w.cases);
    EXPECT_LE(w.ratio, 1.0) << GetParam() << " " << family << ": worst at " << w.where;
  }
}

INSTANTIATE_TEST_SUITE_P(All, EdgeRows, testing::every_backend(), testing::backend_test_name);

}   // namespace
}   // namespace akview::compute
