// The backend tests' parameter: one instance per row of compute's backend table, named after the
// backend, so a backend added to the table runs in every backend test without touching them. The
// fixture skips (GTEST_SKIP, with the reason) a backend absent at run time: never a pass.
//   class MySuite : public testing::EveryBackend {};
//   INSTANTIATE_TEST_SUITE_P(All, MySuite, testing::every_backend(), testing::backend_test_name);
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compute/backend.hpp"

namespace akview::testing {

inline auto every_backend() {
  std::vector<std::string> names;
  for (const auto& row : compute::backend_table()) names.emplace_back(row.name);
  return ::testing::ValuesIn(names);
}

inline std::string backend_test_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

class EveryBackend : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = compute::find_backend(GetParam());
    ASSERT_NE(backend_, nullptr) << GetParam();
    const compute::Availability a = backend_->availability();
    if (!a.available) GTEST_SKIP() << GetParam() << " unavailable: " << a.reason;
  }
  compute::Backend* backend_ = nullptr;   // the parameter's backend, available
};

}   // namespace akview::testing
