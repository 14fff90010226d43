// Value statistics of a whole tensor, streamed in chunks of whole rows on every thread: each chunk's
// bytes copied by the kernel (pread from the mapped file, core/kernel_copy.hpp, so the mapping
// is never touched and nothing of the file stays resident) into the thread's reused buffer and
// decoded there (memory bounded by threads x max(block_elems, one row)), with a progress callback and
// a cancel flag.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/result.hpp"
#include "core/tensor_view.hpp"

namespace akview {

struct StatsOptions {
  int histogram_bins = 64;                // linear bins over [min, max] of the finite values (0: none)
  int top_k = 16;                         // outliers by |x| kept
  size_t block_elems = size_t{1} << 16;   // values a chunk decodes at once (rounded to whole rows, at least
                                          // one): 256 KiB of floats, which stay in a core's L2 while scanned;
                                          // the 16-level types, which decode nothing, read 4x to 16x as
                                          // many (Q6_K on AVX-512 or AVX2 up to 4x), never fewer than 64 chunks
  int threads = 0;                        // threads that decode and scan (0: all the machine has)
  std::function<void(double)> progress;   // fraction in [0, 1], called on the calling thread; may be empty
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
inline constexpr int kLogBins = 56;   // 2^-40 .. 2^16

struct TensorStats {
  uint64_t count = 0;   // elements visited
  uint64_t finite = 0;
  uint64_t zeros = 0;   // +0 and -0
  uint64_t nan = 0;
  uint64_t pos_inf = 0;
  uint64_t neg_inf = 0;
  double min = 0, max = 0;    // over finite values (0 when none)
  double mean = 0, std = 0;   // population std over finite values
  double abs_mean = 0;
  std::vector<uint64_t> histogram;   // histogram_bins counts over [hist_lo, hist_hi]
  double hist_lo = 0, hist_hi = 0;
  std::vector<uint64_t> log_abs_histogram;   // kLogBins counts, see kLogMinExp
  std::vector<Outlier> top;                  // largest |x| first
  int64_t rows_done = 0;   // rows of the chunks finished before a cancellation (== n_rows when complete)
  bool cancelled = false;
};

// Statistics of all rows of `view`. Everything but the linear histogram comes from one pass; the
// histogram needs the range, so it is a second pass over the data when histogram_bins > 0 (progress
// counts both passes; a chunk whose own min and max fall in one bin is counted without decoding it
// again). The 16-level types (Q4_0, Q4_1, IQ4_NL, IQ4_XS, Q4_K: core/decode/level_forms.hpp) are
// summed per sub-block level, and their histogram is binned in the one pass over the bounds of
// their levels (read from the scales first); only where the values do not reach those bounds is
// there a second pass. The other block-quantized types (Q6_K, Q8_0, ...) find the min and max of
// their decoded values first (a decode and a min/max sweep, progress not shown; Q6_K on AVX-512 or AVX2 makes
// its values in registers from the blocks for both passes) and bin both histograms in pass 1; plain
// floats keep the two passes. On cancellation the result holds the
// chunks finished so far with `cancelled` set.
//
// The result does not depend on the thread count or timing: min, max, every count, both histograms
// and `top` are exact (the histogram bin of x is int((x - min) / (max - min) * bins), clamped to the
// last bin, as a per-value loop computes it; `top` is by |x| descending, then row-major position
// ascending among equal |x|). mean, std and abs_mean come from double sums over each chunk (of x
// less a shift near the chunk's mean, its square, |x|) merged in chunk order with Chan's formula:
// within 1e-10 * abs_mean of the exact mean and abs_mean, and within 1e-9 * std + 1e-12 * abs_mean
// of the exact std (tests/decode/stats_fast_test.cpp).
Result<TensorStats> compute_stats(const TensorView& view, const StatsOptions& options = {});

}   // namespace akview
