// The layout invariant, without gtest (the layout fuzz target checks it too): at each depth the
// regions cover their parent exactly once, in file order, and depth 0 covers the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/layout/region.hpp"

namespace akview::testing {

// Empty when the regions tile [0, file_size) and each parent's children tile the parent; else
// the first problem found.
inline std::string coverage_problem(const std::vector<Region>& regions, uint64_t file_size) {
  struct Level {
    uint64_t begin, end, cursor;
    bool has_children;
  };
  std::vector<Level> levels = {{0, file_size, 0, false}};
  auto close_to = [&](size_t depth) -> std::string {
    while (levels.size() > depth + 1) {
      const Level l = levels.back();
      levels.pop_back();
      if (l.has_children && l.cursor != l.end)
        return "children of the region at " + std::to_string(l.begin) + " end at " + std::to_string(l.cursor) +
               ", not at " + std::to_string(l.end);
    }
    return {};
  };
  for (size_t i = 0; i < regions.size(); ++i) {
    const Region& r = regions[i];
    const std::string where = "region #" + std::to_string(i) + " (" + r.label + " @" + std::to_string(r.offset) + ")";
    if (r.depth >= levels.size()) return where + ": depth " + std::to_string(r.depth) + " has no parent";
    if (auto p = close_to(r.depth); !p.empty()) return p;
    Level& l = levels.back();
    if (r.offset != l.cursor)
      return where + ": starts at " + std::to_string(r.offset) + ", expected " + std::to_string(l.cursor);
    if (r.offset + r.size > l.end) return where + ": ends past its parent";
    l.cursor = r.offset + r.size;
    l.has_children = true;
    levels.push_back({r.offset, r.offset + r.size, r.offset, false});
  }
  if (auto p = close_to(0); !p.empty()) return p;
  if (file_size > 0 && levels[0].cursor != file_size)
    return "depth-0 regions end at " + std::to_string(levels[0].cursor) + ", file is " + std::to_string(file_size);
  return {};
}

}   // namespace akview::testing
