// Small text helpers shared by the printers and the TUI: sizes, counts, shapes, escaping.
#include <fmt/format.h>

#include "ui/batch/printers.hpp"

namespace akview {

std::string escape_for_terminal(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool valid = len > 0 && i + len <= s.size();
    for (size_t k = 1; valid && k < len; ++k) valid = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    if (valid && len == 2) valid = c >= 0xc2;                                   // no overlong forms
    if (valid && len == 2 && c == 0xc2) valid = static_cast<unsigned char>(s[i + 1]) >= 0xa0;   // C1 controls
    if (!valid || (len == 1 && (c < 0x20 || c == 0x7f))) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

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

std::string dump_json(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

void print_json(std::FILE* out, const nlohmann::json& j) { fmt::print(out, "{}\n", dump_json(j)); }

}  // namespace akview
