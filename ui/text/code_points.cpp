// The tables of code point classes (code_points.hpp).
#include "ui/text/code_points.hpp"

#include <algorithm>
#include <iterator>
#include <span>

namespace akview {
namespace {

// A range of code points that draws nothing: `invisible` ones are escaped as text by
// escape_for_terminal; the others (combining marks, variation selectors) are zero-width, and the
// canvas shows them escaped too.
struct ZeroWidthRange {
  char32_t lo, hi;
  bool invisible;
};
constexpr ZeroWidthRange kZeroWidth[] = {
    {0x00ad, 0x00ad, true},                                                        // soft hyphen
    {0x0300, 0x036f, false},                                                       // combining diacritical marks
    {0x0483, 0x0489, false},                                                       // Cyrillic combining marks
    {0x0591, 0x05c7, false},                                                       // Hebrew points
    {0x0610, 0x061b, false},                                                       // Arabic marks
    {0x061c, 0x061c, true},                                                        // Arabic letter mark (bidi)
    {0x064b, 0x065f, false},                                                       // Arabic vowel marks
    {0x0670, 0x0670, false},   {0x06d6, 0x06ed, false}, {0x0e31, 0x0e31, false},   // Thai vowel and tone marks
    {0x0e34, 0x0e3a, false},   {0x0e47, 0x0e4e, false}, {0x180e, 0x180e, true},    // Mongolian vowel separator
    {0x1ab0, 0x1aff, false},                                                       // combining marks extended
    {0x1dc0, 0x1dff, false},                                                       // combining marks supplement
    {0x200b, 0x200f, true},                              // zero-width space / non-joiner / joiner, LRM, RLM
    {0x2028, 0x2029, true},                              // line and paragraph separators
    {0x202a, 0x202e, true},                              // LRE, RLE, PDF, LRO, RLO
    {0x2060, 0x2064, true},                              // word joiner, invisible operators
    {0x2065, 0x2065, false},   {0x2066, 0x206f, true},   // LRI, RLI, FSI, PDI, deprecated format controls
    {0x20d0, 0x20ff, false},                             // combining marks for symbols
    {0xfe00, 0xfe0f, false},                             // variation selectors
    {0xfe20, 0xfe2f, false},                             // combining half marks
    {0xfeff, 0xfeff, true},                              // zero-width no-break space (BOM)
    {0xfff9, 0xfffb, true},                              // interlinear annotation controls
    {0xe0000, 0xe007f, true},                            // tag characters
    {0xe0080, 0xe0fff, false},                           // variation selectors supplement
};

struct Range {
  char32_t lo, hi;
};
// East Asian Wide and Fullwidth blocks (the ranges terminals agree on: CJK, Hangul, kana, fullwidth
// forms, the common emoji blocks).
constexpr Range kWide[] = {
    {0x1100, 0x115f}, {0x2329, 0x232a},   {0x2e80, 0x303e},   {0x3041, 0x33ff},   {0x3400, 0x4dbf},   {0x4e00, 0x9fff},
    {0xa000, 0xa4cf}, {0xac00, 0xd7a3},   {0xf900, 0xfaff},   {0xfe10, 0xfe19},   {0xfe30, 0xfe6f},   {0xff00, 0xff60},
    {0xffe0, 0xffe6}, {0x1f300, 0x1f64f}, {0x1f900, 0x1f9ff}, {0x20000, 0x2fffd}, {0x30000, 0x3fffd},
};

// The row of a sorted table of ranges that holds `c`, or nullptr.
template <typename Row>
const Row* find_range(std::span<const Row> table, char32_t c) {
  auto it = std::upper_bound(table.begin(), table.end(), c, [](char32_t v, const Row& r) { return v < r.lo; });
  return it != table.begin() && c <= std::prev(it)->hi ? &*std::prev(it) : nullptr;
}

// Everything below the first zero-width range (ASCII and Latin-1 up to the soft hyphen) is in neither
// table: the common case answers without a search.
constexpr char32_t kFirstRanged = kZeroWidth[0].lo;
static_assert(kFirstRanged < kWide[0].lo);

}   // namespace

bool is_invisible(char32_t cp) {
  if (cp < kFirstRanged) return false;
  const ZeroWidthRange* r = find_range<ZeroWidthRange>(kZeroWidth, cp);
  return r && r->invisible;
}

int char_width(char32_t cp) {
  if (cp < kFirstRanged) return 1;
  if (find_range<ZeroWidthRange>(kZeroWidth, cp)) return 0;
  return find_range<Range>(kWide, cp) ? 2 : 1;
}

}   // namespace akview
