// The pattern language of every `/` search and `\` filter in the TUI, and the highlight of what
// matched: plain text matches as a case-insensitive substring; text with a regex metacharacter
// (\ ^ $ | ( ) [ ] { } * + ?) is an ECMAScript regex. A regex that does not compile is reported with
// one message wherever it was typed (bad_pattern_message).
#pragma once

#include <memory>
#include <regex>
#include <string>
#include <string_view>

#include "ui/tui/canvas.hpp"

namespace akview::tui {

// ASCII lower case (keys and names are ASCII in practice; other bytes compare as they are).
std::string lower_ascii(std::string_view text);
// Byte position of `lower_needle` in `haystack` ignoring ASCII case; npos when absent or empty.
size_t find_ignore_case(std::string_view haystack, std::string_view lower_needle);
// Whether `text` holds a regex metacharacter (a '.' alone does not make a regex).
bool has_regex_syntax(std::string_view text);
// The one message for a pattern that is not a valid regex: "bad pattern '(': <why>".
std::string bad_pattern_message(std::string_view pattern, std::string_view why);

class Pattern {
 public:
  Pattern() = default;
  // Compiles `text` (case-insensitive with `ignore_case`); error() says why it is not valid.
  explicit Pattern(std::string_view text, bool ignore_case = true);
  bool empty() const { return text_.empty(); }
  bool valid() const { return error_.empty(); }
  bool is_regex() const { return regex_ != nullptr; }
  const std::string& text() const { return text_; }
  const std::string& error() const { return error_; }
  // Where the first match in `hay` starts and how many bytes it spans; false when none (or empty,
  // or invalid).
  bool find(std::string_view hay, size_t& at, size_t& len) const;
  bool matches(std::string_view hay) const {
    size_t at, len;
    return find(hay, at, len);
  }

 private:
  std::string text_, lower_, error_;
  bool ignore_case_ = true;
  std::shared_ptr<const std::regex> regex_;
};

// After `text` was drawn at (x, y) in at most `max_w` columns: restyles the first match of
// `lower_needle` in it with Role::match. Returns whether there was one on screen.
bool highlight_match(Canvas& canvas, int x, int y, int max_w, std::string_view text, std::string_view lower_needle);
// The same for a pattern (a regex's match, or the text's).
bool highlight_match(Canvas& canvas, int x, int y, int max_w, std::string_view text, const Pattern& pattern);

}   // namespace akview::tui
