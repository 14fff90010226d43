// The theme table (theme.hpp): one row per style role, for 256 colours, 8 colours and none.
#include "ui/tui/theme.hpp"

#include <array>

namespace akview::tui {
namespace {

constexpr int kRoles = static_cast<int>(Role::count_);

//  role                 fg256 bg256  fg8 bg8  bold   rev    under
constexpr std::array<Style, kRoles> kTheme = {{
    {Role::normal, -1, -1, -1, -1, false, false, false},     {Role::muted, 245, -1, -1, -1, false, false, false},
    {Role::title, 231, 24, 7, 4, true, true, false},         {Role::title_alert, 231, 124, 7, 1, true, true, false},
    {Role::tab, 250, 236, 7, 0, false, false, false},        {Role::tab_active, 16, 214, 0, 3, true, true, false},
    {Role::status, 252, 238, 7, 0, false, true, false},      {Role::status_key, 214, 238, 3, 0, true, true, false},
    {Role::header, 214, -1, 3, -1, true, false, true},       {Role::header_cursor, 16, 214, 0, 3, true, true, false},
    {Role::selected, 16, 45, 0, 6, true, true, false},       {Role::group, 117, 235, 6, -1, true, false, false},
    {Role::type_float, 114, -1, 2, -1, false, false, false}, {Role::type_quant, 177, -1, 5, -1, false, false, false},
    {Role::type_other, 180, -1, 3, -1, false, false, false}, {Role::number, -1, -1, -1, -1, false, false, false},
    {Role::spark, 78, -1, 2, -1, false, false, false},       {Role::key, 117, -1, 6, -1, false, false, false},
    {Role::string, 186, -1, 3, -1, false, false, false},     {Role::warn, 214, -1, 3, -1, false, false, false},
    {Role::error, 203, -1, 1, -1, true, false, false},       {Role::match, 16, 226, 0, 3, true, true, false},
    {Role::prompt, 231, 237, 7, 0, false, false, false},     {Role::progress, 16, 78, 0, 2, false, true, false},
    {Role::border, 240, -1, -1, -1, false, false, false},
}};

constexpr bool rows_in_role_order() {
  for (int i = 0; i < kRoles; ++i)
    if (static_cast<int>(kTheme[i].role) != i) return false;
  return true;
}
static_assert(rows_in_role_order(), "theme rows must follow the Role enum, one per role");

constexpr std::array<std::string_view, kRoles> kNames = {
    "normal",        "muted",    "title", "title_alert", "tab",        "tab_active", "status", "status_key", "header",
    "header_cursor", "selected", "group", "type_float",  "type_quant", "type_other", "number", "spark",      "key",
    "string",        "warn",     "error", "match",       "prompt",     "progress",   "border",
};

}   // namespace

std::span<const Style> theme() { return kTheme; }
std::string_view role_name(Role role) { return kNames[static_cast<size_t>(role)]; }

}   // namespace akview::tui
