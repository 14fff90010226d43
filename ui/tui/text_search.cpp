// Case-insensitive search and match highlighting (text_search.hpp).
#include "ui/tui/text_search.hpp"

#include <algorithm>

namespace akview::tui {

std::string lower_ascii(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

size_t find_ignore_case(std::string_view haystack, std::string_view lower_needle) {
  if (lower_needle.empty() || lower_needle.size() > haystack.size()) return std::string_view::npos;
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  auto it = std::search(haystack.begin(), haystack.end(), lower_needle.begin(), lower_needle.end(),
                        [&](char a, char b) { return lower(a) == b; });
  return it == haystack.end() ? std::string_view::npos : static_cast<size_t>(it - haystack.begin());
}

bool highlight_match(Canvas& canvas, int x, int y, int max_w, std::string_view text, std::string_view lower_needle) {
  const size_t at = find_ignore_case(text, lower_needle);
  if (at == std::string_view::npos) return false;
  const int col = display_width(text.substr(0, at));   // columns before the match, escaped as drawn
  if (col >= max_w) return false;
  const int w = std::min(display_width(text.substr(at, lower_needle.size())), max_w - col);
  canvas.restyle(x + col, y, w, Role::match);
  return true;
}

}  // namespace akview::tui
