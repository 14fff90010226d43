// Sizes, counts, shapes and offsets (format.hpp).
#include "ui/text/format.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace akview {

std::string format_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.2f} {}", v, kUnits[u]);
}

std::string format_count(uint64_t n) {
  static constexpr const char* kSuffix[] = {"", "K", "M", "B", "T"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1000.0 && u < 4) {
    v /= 1000.0;
    ++u;
  }
  return u == 0 ? fmt::format("{}", n) : fmt::format("{:.1f}{}", v, kSuffix[u]);
}

std::string format_shape(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

std::string format_offset(uint64_t offset) { return fmt::format("{:#x}", offset); }

}   // namespace akview
