// `akview layout` on fuzzed files of every container (the format is sniffed from the bytes, so the
// oracle seeds are GGUF, SafeTensors and PyTorch files): whatever opens is walked, and the regions
// must cover the file and each parent exactly once, in order. A walk may fail cleanly (file, offset,
// rule); a violated invariant aborts, which libFuzzer reports as a finding.
#include <cstdio>
#include <cstdlib>

#include "core/formats/format.hpp"
#include "core/layout/layout.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "tests/layout/coverage.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto model = akview::open_model(akview::fuzz::write_input("in.bin", data, size));
  if (!model) return 0;
  for (uint32_t f = 0; f < model->files.size(); ++f) {
    std::vector<akview::Region> regions;
    constexpr size_t kMaxRegions = 1 << 20;
    const akview::Status s = akview::walk_layout(*model, f, [&](const akview::Region& r) {
      regions.push_back(r);
      return regions.size() < kMaxRegions;
    });
    if (!s.ok() || regions.size() >= kMaxRegions) continue;
    const std::string problem = akview::testing::coverage_problem(regions, model->files[f].map.size());
    if (!problem.empty()) {
      std::fprintf(stderr, "layout invariant broken in %s: %s\n", model->files[f].path.c_str(), problem.c_str());
      std::abort();
    }
  }
  return 0;
}
