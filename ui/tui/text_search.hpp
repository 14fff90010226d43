// Case-insensitive substring search for the panes' `/` prompts and the highlight of what matched.
#pragma once

#include <string>
#include <string_view>

#include "ui/tui/canvas.hpp"

namespace akview::tui {

// ASCII lower case (keys and names are ASCII in practice; other bytes compare as they are).
std::string lower_ascii(std::string_view text);
// Byte position of `lower_needle` in `haystack` ignoring ASCII case; npos when absent or empty.
size_t find_ignore_case(std::string_view haystack, std::string_view lower_needle);
// After `text` was drawn at (x, y) in at most `max_w` columns: restyles the first match of
// `lower_needle` in it with Role::match. Returns whether there was one on screen.
bool highlight_match(Canvas& canvas, int x, int y, int max_w, std::string_view text, std::string_view lower_needle);

}  // namespace akview::tui
