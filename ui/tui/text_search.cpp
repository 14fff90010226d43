// The TUI's pattern language and match highlighting (text_search.hpp).
#include "ui/tui/text_search.hpp"

#include <algorithm>

#include <fmt/format.h>

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

bool has_regex_syntax(std::string_view text) { return text.find_first_of("\\^$|()[]{}*+?") != std::string_view::npos; }

std::string bad_pattern_message(std::string_view pattern, std::string_view why) {
  std::string reason(why);
  if (!reason.empty()) reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));
  while (!reason.empty() && reason.back() == '.') reason.pop_back();
  return fmt::format("bad pattern '{}': {}", pattern, reason);
}

Pattern::Pattern(std::string_view text, bool ignore_case)
    : text_(text), lower_(lower_ascii(text)), ignore_case_(ignore_case) {
  if (!has_regex_syntax(text)) return;
  try {
    auto flags = std::regex::ECMAScript | std::regex::optimize;
    if (ignore_case) flags |= std::regex::icase;
    regex_ = std::make_shared<const std::regex>(text_, flags);
  } catch (const std::regex_error& e) {
    error_ = bad_pattern_message(text, e.what());
  }
}

bool Pattern::find(std::string_view hay, size_t& at, size_t& len) const {
  if (text_.empty() || !error_.empty()) return false;
  if (regex_) {
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_search(hay.begin(), hay.end(), m, *regex_) || m.length(0) == 0) return false;
    at = static_cast<size_t>(m.position(0));
    len = static_cast<size_t>(m.length(0));
    return true;
  }
  at = ignore_case_ ? find_ignore_case(hay, lower_) : hay.find(text_);
  len = text_.size();
  return at != std::string_view::npos;
}

namespace {

bool restyle_span(Canvas& canvas, int x, int y, int max_w, std::string_view text, size_t at, size_t len) {
  const int col = display_width(text.substr(0, at));   // columns before the match, escaped as drawn
  if (col >= max_w) return false;
  const int w = std::min(display_width(text.substr(at, len)), max_w - col);
  canvas.restyle(x + col, y, w, Role::match);
  return true;
}

}   // namespace

bool highlight_match(Canvas& canvas, int x, int y, int max_w, std::string_view text, std::string_view lower_needle) {
  const size_t at = find_ignore_case(text, lower_needle);
  if (at == std::string_view::npos) return false;
  return restyle_span(canvas, x, y, max_w, text, at, lower_needle.size());
}

bool highlight_match(Canvas& canvas, int x, int y, int max_w, std::string_view text, const Pattern& pattern) {
  size_t at = 0, len = 0;
  if (!pattern.find(text, at, len)) return false;
  return restyle_span(canvas, x, y, max_w, text, at, len);
}

}   // namespace akview::tui
