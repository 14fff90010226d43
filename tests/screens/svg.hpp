// SVG rendering of a Screen for people (STACK.md §4): 9x18 px cells, DejaVu Sans Mono 15, a <rect>
// per non-default background, one <text> per glyph, the xterm-256 palette, reverse as swapped
// colours, U+2581..U+2588 drawn as rectangles. `render_png.sh DIR` turns the SVGs into PNGs.
#pragma once

#include <filesystem>
#include <string>

#include "tests/screens/screen.hpp"

namespace akview::testing {

std::string render_svg(const Screen& screen);
// Writes render_svg(screen) to path (creating its folder); false when the file cannot be written.
bool write_svg(const Screen& screen, const std::filesystem::path& path);
// "#rrggbb" of an xterm-256 palette index.
std::string xterm_rgb(int index);

}   // namespace akview::testing
