// Shared checks of the layout tests: collect a file's regions and verify that at each depth they
// cover their parent exactly once, in order.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/layout/layout.hpp"
#include "tests/layout/coverage.hpp"

namespace akview::testing {

inline std::vector<Region> collect_regions(const Model& model, uint32_t file) {
  std::vector<Region> regions;
  Status s = walk_layout(model, file, [&](const Region& r) {
    regions.push_back(r);
    return true;
  });
  EXPECT_TRUE(s.ok()) << model.files[file].path << ": " << (s.ok() ? "" : s.error().to_string());
  return regions;
}

}   // namespace akview::testing
