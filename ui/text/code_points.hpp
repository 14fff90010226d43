// What a code point does on a terminal: how many columns it takes, and whether it draws nothing yet
// changes how the text around it reads. One table of invisible and zero-width characters serves the
// escaping (escape.hpp) and the TUI's canvas.
#pragma once

namespace akview {

// Invisible format characters that can spoof text: bidi controls (an override makes "gpj.exe" display
// as "exe.jpg"), zero-width characters and separators, the BOM, invisible operators, tag characters.
// escape_for_terminal writes them as \u{202e}.
bool is_invisible(char32_t cp);
// Columns a terminal gives `cp`: 0 for combining marks and invisible characters, 2 for East Asian
// wide and fullwidth ones, else 1.
int char_width(char32_t cp);

}   // namespace akview
