// Text safe for a terminal, for the batch printers and the TUI alike: a hostile tensor name never
// reaches the terminal raw.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace akview {

// Control characters (C0, DEL, C1, also C1 encoded as UTF-8) and bytes that are not well-formed
// UTF-8 become \xNN per byte; invisible format characters that can spoof text (code_points.hpp:
// bidi controls, zero-width characters, line/paragraph separators, BOM, tags) become \u{202e};
// everything else, wide (CJK) characters included, passes through unchanged.
std::string escape_for_terminal(std::string_view s);
bool printable_ascii(std::string_view s);   // bytes 0x20..0x7e only: nothing to escape, one column each
size_t escaped_size(std::string_view s);    // escape_for_terminal(s).size(), without it for plain ASCII

}   // namespace akview
