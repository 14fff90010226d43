// Every backend on every oracle tensor with a `matvec` reference: |y - y_ref| <= 1e-5 * sum_j |w_ij x_j|
// per row, with sum |w x| from the oracle's own dequantization (independent of akview's decoders).
// Every backend in the table (every_backend.hpp): an absent one is skipped with its reason; a type a
// backend cannot run is listed, not passed.
#include <gtest/gtest.h>

#include <cmath>
#include <string_view>

#include "compute/backend.hpp"
#include "compute/reference.hpp"
#include "every_backend.hpp"
#include "oracle_cases.hpp"

namespace akview::compute {
namespace {

TEST(MatvecOracles, ManifestYieldsEveryCase) {
  ASSERT_GE(testing::matvec_oracle_cases().size(), 120u);
  for (const auto& c : testing::matvec_oracle_cases()) {
    EXPECT_TRUE(c.error.empty()) << c.label << ": " << c.error;
    if (!c.error.empty()) continue;
    EXPECT_EQ(c.x.size(), static_cast<size_t>(c.view.n_cols)) << c.label;
    EXPECT_EQ(c.y_ref.size(), static_cast<size_t>(c.view.n_rows)) << c.label;
    EXPECT_EQ(c.deq.size(), static_cast<size_t>(c.view.n_rows * c.view.n_cols)) << c.label;
  }
}

class BackendOnOracles : public testing::EveryBackend {};

TEST_P(BackendOnOracles, MatchesFloat64Reference) {
  Backend* b = backend_;
  int ran = 0;
  std::vector<std::string> not_run;
  for (const auto& c : testing::matvec_oracle_cases()) {
    if (!c.error.empty()) continue;
    if (!b->can_run(c.view)) {
      not_run.push_back(c.label);
      continue;
    }
    constexpr size_t kGuard = 16;
    constexpr float kSentinel = -12345.678f;
    std::vector<float> y(c.y_ref.size() + 2 * kGuard, kSentinel);
    Status s = b->matvec(c.view, c.x.data(), y.data() + kGuard);
    ASSERT_TRUE(s.ok()) << c.label << ": " << s.error().to_string();
    ++ran;
    for (size_t g = 0; g < kGuard; ++g) {
      ASSERT_EQ(y[g], kSentinel) << c.label << ": guard before y overwritten";
      ASSERT_EQ(y[kGuard + c.y_ref.size() + g], kSentinel) << c.label << ": guard after y overwritten";
    }
    const int64_t cols = c.view.n_cols;
    int bad = 0;
    for (size_t r = 0; r < c.y_ref.size(); ++r) {
      double abs_wx = 0;
      for (int64_t j = 0; j < cols; ++j) abs_wx += std::fabs(static_cast<double>(c.deq[r * cols + j]) * c.x[j]);
      const double err = std::fabs(static_cast<double>(y[kGuard + r]) - c.y_ref[r]);
      if (!(err <= 1e-5 * abs_wx) && bad++ < 3)
        ADD_FAILURE() << GetParam() << " on " << c.label << " row " << r << ": y=" << y[kGuard + r]
                      << " ref=" << c.y_ref[r] << " |err|=" << err << " bound=" << 1e-5 * abs_wx;
    }
  }
  RecordProperty("tensors_run", ran);
  std::string skipped;
  for (const auto& n : not_run) skipped += "\n  " + n;
  // Only the reference decoders' own gaps may leave a tensor unrun; the listed ones are reported.
  EXPECT_GT(ran, 0);
  // The cpu backend runs every decodable type (types without a fused kernel fall back to the
  // decoders), so on it no oracle tensor may be left unrun.
  if (std::string_view(GetParam()) == "cpu") {
    EXPECT_TRUE(not_run.empty()) << "cpu cannot run " << not_run.size() << " oracle tensors:" << skipped;
  }
  if (!not_run.empty())
    std::cout << "[  NOTE    ] " << GetParam() << " cannot run " << not_run.size() << " oracle tensors:" << skipped
              << "\n";
}

INSTANTIATE_TEST_SUITE_P(All, BackendOnOracles, testing::every_backend(), testing::backend_test_name);

// The reference itself against the oracle's f64 y: the f64 accumulation makes it far tighter.
TEST(MatvecOracles, ReferenceIsTight) {
  for (const auto& c : testing::matvec_oracle_cases()) {
    if (!c.error.empty()) continue;
    std::vector<double> y(c.y_ref.size()), abs_wx(c.y_ref.size());
    Status s = reference_matvec(c.view, c.x.data(), y.data(), abs_wx.data());
    if (!s.ok()) {
      ADD_FAILURE() << c.label << ": " << s.error().to_string();
      continue;
    }
    for (size_t r = 0; r < y.size(); ++r)
      ASSERT_LE(std::fabs(y[r] - c.y_ref[r]), 1e-6 * abs_wx[r] + 1e-30) << c.label << " row " << r;
  }
}

}   // namespace
}   // namespace akview::compute
