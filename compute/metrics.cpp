// Error metrics (see metrics.hpp), accumulated in double.
#include "compute/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace akview::compute {
namespace {

template <typename R>
ErrorStats compare(std::span<const float> y, std::span<const R> ref) {
  ErrorStats s;
  const size_t n = std::min(y.size(), ref.size());
  s.n = static_cast<int64_t>(n);
  if (n == 0) return s;
  double se = 0, sr = 0, sy = 0, syr = 0;
  for (size_t i = 0; i < n; ++i) {
    const double a = y[i], r = static_cast<double>(ref[i]), d = a - r;
    s.max_abs = std::max(s.max_abs, std::fabs(d));
    if (std::isnan(d)) s.max_abs = std::numeric_limits<double>::quiet_NaN();
    se += d * d;
    sr += r * r;
    sy += a * a;
    syr += a * r;
  }
  s.rms = std::sqrt(se / static_cast<double>(n));
  if (sr > 0) {
    s.nmse = se / sr;
    s.rel_rms = std::sqrt(s.nmse);
  } else {
    s.nmse = s.rel_rms = se > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  }
  if (sy > 0 && sr > 0) s.cosine = syr / std::sqrt(sy * sr);
  else s.cosine = (sy == 0 && sr == 0) ? 1.0 : 0.0;
  return s;
}

}   // namespace

ErrorStats compare_outputs(std::span<const float> y, std::span<const double> ref) { return compare(y, ref); }
ErrorStats compare_outputs(std::span<const float> y, std::span<const float> ref) { return compare(y, ref); }

}   // namespace akview::compute
