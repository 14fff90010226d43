// The key table: one row per binding (keys, where it applies, the action, the help text). Input is
// dispatched through it and the Help pane and the README's key table are generated from it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace akview::tui {

// Key codes: a Unicode code point for a character, or one of these (above the Unicode range).
enum Key : int32_t {
  kKeyNone = 0,
  kKeyEnter = '\n',
  kKeyTab = '\t',
  kKeyCtrlU = 21,
  kKeyEsc = 27,
  kKeyBackspace = 127,
  kKeyUp = 0x110000,
  kKeyDown,
  kKeyLeft,
  kKeyRight,
  kKeyPageUp,
  kKeyPageDown,
  kKeyHome,
  kKeyEnd,
  kKeyBackTab,
  kKeyF1,
  kKeyDelete,
};

// Where a binding applies. Dispatch tries the innermost context first: a prompt, then the open
// detail, then the pane or list in front, then `nav` (any scrolling view), then `global`. The help
// lists them in this order (`prompt` last); a pane's context is named by its title (pane_table.hpp).
enum class Context : uint8_t {
  global,
  nav,
  model_list,
  tensors,
  detail,
  header,
  layout,
  groups,
  mapping,
  compute,
  diff,
  fit,
  help,
  prompt
};

enum class Action : uint8_t {
  quit,
  help,
  next_pane,
  prev_pane,
  show_pane,   // the pane whose key it is (pane_table.hpp)
  up,
  down,
  page_up,
  page_down,
  home,
  end,
  back,
  open,
  reload,
  cancel_work,
  restart_stats,
  column_left,
  column_right,
  sort_asc,
  sort_desc,
  filter,
  search,
  search_next,
  search_prev,
  group_layers,
  fold,
  toggle_canonical,
  toggle_raw,
  unmapped_only,
  prompt_accept,
  prompt_cancel,
  prompt_erase,
  prompt_clear,
  goto_offset,
  next_file,
  run,
  scope,
  backend_next,
  backend_prev,
  input,
  repeats_up,
  repeats_down,
  clear,
  run_pair,
  context_up,
  context_down,
  set_context,
  kv_type_next,
  gpu_memory,
  open_address,
};

struct KeyBinding {
  std::vector<int32_t> keys;
  Context context;
  Action action;
  std::string_view help;
};

std::span<const KeyBinding> key_table();
// The action bound to `key` in `context`, searching only that context; false when none.
bool find_binding(int32_t key, Context context, Action& action);
// "↑ k", "PgDn", "Ctrl-C": how a key is written in the help.
std::string key_label(int32_t key);
std::string_view context_title(Context context);
// The README's key table (Markdown), generated from the key table.
std::string key_table_markdown();

}   // namespace akview::tui
