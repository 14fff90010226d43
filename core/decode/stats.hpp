// Value statistics of a whole tensor, streamed in row blocks through decode_rows with a reused
// buffer (memory bounded by max(block_elems, one row)), a progress callback and a cancel flag.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/result.hpp"
#include "core/tensor_view.hpp"

namespace akview {

struct StatsOptions {
  int histogram_bins = 64;             // linear bins over [min, max] of the finite values (0: none)
  int top_k = 16;                      // outliers by |x| kept
  size_t block_elems = size_t{1} << 20;   // decode buffer size (rounded to whole rows, at least one)
  std::function<void(double)> progress;   // fraction in [0, 1]; may be empty
  const std::atomic<bool>* cancel = nullptr;
};

struct Outlier {
  int64_t row = 0;
  int64_t col = 0;
  float value = 0.0f;
};

// Log-scale |x| histogram: bin k counts finite nonzero |x| in [2^(kLogMinExp + k), 2^(kLogMinExp + k + 1));
// values below the range go to bin 0 and above to the last bin; zeros are counted apart.
inline constexpr int kLogMinExp = -40;
inline constexpr int kLogBins = 56;    // 2^-40 .. 2^16

struct TensorStats {
  uint64_t count = 0;          // elements visited
  uint64_t finite = 0;
  uint64_t zeros = 0;          // +0 and -0
  uint64_t nan = 0;
  uint64_t pos_inf = 0;
  uint64_t neg_inf = 0;
  double min = 0, max = 0;     // over finite values (0 when none)
  double mean = 0, std = 0;    // population std over finite values
  double abs_mean = 0;
  std::vector<uint64_t> histogram;     // histogram_bins counts over [hist_lo, hist_hi]
  double hist_lo = 0, hist_hi = 0;
  std::vector<uint64_t> log_abs_histogram;   // kLogBins counts, see kLogMinExp
  std::vector<Outlier> top;    // largest |x| first
  int64_t rows_done = 0;       // rows visited before a cancellation (== n_rows when complete)
  bool cancelled = false;
};

// Statistics of all rows of `view`. The histogram needs the range, so it is a second pass over the
// data when histogram_bins > 0 (progress counts both passes). On cancellation the result holds what
// was gathered so far with `cancelled` set.
Result<TensorStats> compute_stats(const TensorView& view, const StatsOptions& options = {});

}  // namespace akview
