// Error of a computed output against a reference output: max abs, RMS, relative RMS, cosine, NMSE.
#pragma once

#include <cstdint>
#include <span>

namespace akview::compute {

struct ErrorStats {
  int64_t n = 0;
  double max_abs = 0;   // max_i |y_i - r_i|
  double rms = 0;       // sqrt(mean (y - r)^2)
  double rel_rms = 0;   // rms / sqrt(mean r^2)  (0 when both are zero; inf when only r is zero)
  double cosine = 1;    // <y, r> / (|y| |r|)     (1 when both are zero vectors)
  double nmse = 0;      // sum (y - r)^2 / sum r^2 (= rel_rms^2)
};

ErrorStats compare_outputs(std::span<const float> y, std::span<const double> ref);
ErrorStats compare_outputs(std::span<const float> y, std::span<const float> ref);

}   // namespace akview::compute
