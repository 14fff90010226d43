// compute_stats: row blocks decoded into one reused buffer; per-block moments merged with Chan's
// formula (numerically stable mean / variance), a top-K min-heap by |x|, then a histogram pass.
#include "core/decode/stats.hpp"

#include <algorithm>
#include <cmath>
#include <queue>

#include "core/decode/decode.hpp"

namespace akview {
namespace {

struct HeapItem {
  float abs;
  int64_t row, col;
  float value;
  bool operator>(const HeapItem& o) const { return abs > o.abs; }
};

int log_bin(float a) {
  int e = 0;
  std::frexp(a, &e);   // a = m * 2^e, m in [0.5, 1): a in [2^(e-1), 2^e)
  return std::clamp(e - 1 - kLogMinExp, 0, kLogBins - 1);
}

bool cancelled(const StatsOptions& o) { return o.cancel != nullptr && o.cancel->load(std::memory_order_relaxed); }

}  // namespace

Result<TensorStats> compute_stats(const TensorView& v, const StatsOptions& opt) {
  AKV_TRY(validate_view(v));
  TensorStats s;
  s.log_abs_histogram.assign(kLogBins, 0);
  const size_t n_cols = static_cast<size_t>(v.n_cols);
  const int64_t rows_per_block = n_cols == 0 ? std::max<int64_t>(v.n_rows, 1)
                                             : std::max<int64_t>(1, static_cast<int64_t>(opt.block_elems / n_cols));
  std::vector<float> buf(static_cast<size_t>(std::min<int64_t>(rows_per_block, std::max<int64_t>(v.n_rows, 1))) * n_cols);
  const bool two_pass = opt.histogram_bins > 0;
  const double pass_weight = two_pass ? 0.5 : 1.0;
  std::priority_queue<HeapItem, std::vector<HeapItem>, std::greater<HeapItem>> heap;
  double mean = 0, m2 = 0, abs_sum = 0;
  double lo = INFINITY, hi = -INFINITY;

  for (int64_t r0 = 0; r0 < v.n_rows; r0 += rows_per_block) {
    if (cancelled(opt)) {
      s.cancelled = true;
      break;
    }
    const int64_t r1 = std::min(v.n_rows, r0 + rows_per_block);
    AKV_TRY(decode_rows(v, r0, r1, buf.data()));
    const size_t n = static_cast<size_t>(r1 - r0) * n_cols;
    // block moments over finite values
    double bsum = 0, babs = 0;
    uint64_t bn = 0;
    for (size_t i = 0; i < n; ++i) {
      const float x = buf[i];
      if (std::isnan(x)) {
        ++s.nan;
        continue;
      }
      if (std::isinf(x)) {
        ++(x > 0 ? s.pos_inf : s.neg_inf);
        continue;
      }
      ++bn;
      bsum += x;
      babs += std::fabs(x);
      s.zeros += x == 0.0f;
      lo = std::min<double>(lo, x);
      hi = std::max<double>(hi, x);
      const float a = std::fabs(x);
      if (a != 0.0f) ++s.log_abs_histogram[log_bin(a)];
      if (opt.top_k > 0 && (heap.size() < static_cast<size_t>(opt.top_k) || a > heap.top().abs)) {
        heap.push({a, r0 + static_cast<int64_t>(i / n_cols), static_cast<int64_t>(i % n_cols), x});
        if (heap.size() > static_cast<size_t>(opt.top_k)) heap.pop();
      }
    }
    s.count += n;
    if (bn > 0) {
      const double bmean = bsum / static_cast<double>(bn);
      double bm2 = 0;
      for (size_t i = 0; i < n; ++i)
        if (std::isfinite(buf[i])) bm2 += (buf[i] - bmean) * (buf[i] - bmean);
      const double na = static_cast<double>(s.finite), nb = static_cast<double>(bn), nt = na + nb;
      const double delta = bmean - mean;
      mean += delta * nb / nt;
      m2 += bm2 + delta * delta * na * nb / nt;
      s.finite += bn;
      abs_sum += babs;
    }
    s.rows_done = r1;
    if (opt.progress && v.n_rows > 0) opt.progress(pass_weight * static_cast<double>(r1) / static_cast<double>(v.n_rows));
  }
  if (s.finite > 0) {
    s.min = lo;
    s.max = hi;
    s.mean = mean;
    s.std = std::sqrt(m2 / static_cast<double>(s.finite));
    s.abs_mean = abs_sum / static_cast<double>(s.finite);
  }
  while (!heap.empty()) {
    s.top.push_back({heap.top().row, heap.top().col, heap.top().value});
    heap.pop();
  }
  std::reverse(s.top.begin(), s.top.end());
  if (s.cancelled || !two_pass) return s;

  // pass 2: linear histogram over [min, max]
  s.histogram.assign(static_cast<size_t>(opt.histogram_bins), 0);
  s.hist_lo = s.min;
  s.hist_hi = s.max;
  const double width = s.hist_hi - s.hist_lo;
  const int last = opt.histogram_bins - 1;
  for (int64_t r0 = 0; r0 < v.n_rows && s.finite > 0; r0 += rows_per_block) {
    if (cancelled(opt)) {
      s.cancelled = true;
      s.rows_done = r0;
      break;
    }
    const int64_t r1 = std::min(v.n_rows, r0 + rows_per_block);
    AKV_TRY(decode_rows(v, r0, r1, buf.data()));
    const size_t n = static_cast<size_t>(r1 - r0) * n_cols;
    for (size_t i = 0; i < n; ++i) {
      const float x = buf[i];
      if (!std::isfinite(x)) continue;
      int bin = width > 0 ? static_cast<int>((x - s.hist_lo) / width * opt.histogram_bins) : 0;
      ++s.histogram[static_cast<size_t>(std::clamp(bin, 0, last))];
    }
    if (opt.progress) opt.progress(0.5 + 0.5 * static_cast<double>(r1) / static_cast<double>(v.n_rows));
  }
  return s;
}

}  // namespace akview
