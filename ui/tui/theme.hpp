// Style roles: panes say what a cell is (a header, the selected row, a quantized type), the theme
// table says how it looks with 256 colours, 8 colours or none.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace akview::tui {

enum class Role : uint8_t {
  normal,
  muted,         // secondary text: offsets, files, hints
  title,         // title bar
  title_alert,   // title bar: the file changed on disk
  tab,           // pane tabs
  tab_active,
  status,          // status bar
  status_key,      // a key in the status bar hints
  header,          // table column headers
  header_cursor,   // the column under the column cursor
  selected,        // the selected row
  group,           // a layer header row (group by layer)
  type_float,      // f32/f16/bf16...
  type_quant,      // block and composite quantized types
  type_other,      // integers, bool, unsupported
  number,
  spark,    // histogram sparklines
  key,      // metadata keys, names in detail views
  string,   // string values
  warn,     // unmapped, caveats, notes
  error,
  match,      // search hits
  prompt,     // the input line of a prompt
  progress,   // the filled part of a progress bar
  border,
  count_
};

struct Style {
  Role role;
  int16_t fg256, bg256;   // xterm-256 indices, -1 = the terminal's default
  int16_t fg8, bg8;       // 0..7, -1 = default
  bool bold;
  bool reverse_mono;     // without colours: shown reversed (bars, the selection)
  bool underline_mono;   // without colours: underlined (headers)
};

// One row per Role, in Role order (a static_assert keeps it complete).
std::span<const Style> theme();
std::string_view role_name(Role role);

}   // namespace akview::tui
