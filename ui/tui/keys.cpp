// The key table (keys.hpp). Keys follow htop/VisiData/less habits: arrows and hjkl, PgUp/PgDn,
// g/G, / n N, q, Esc.
#include "ui/tui/keys.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ui/tui/pane_table.hpp"

namespace akview::tui {
namespace {

using enum Action;
using C = Context;

// The bindings with each pane's key (pane_table.hpp) after the global ones that move between panes.
std::vector<KeyBinding> with_pane_keys(std::vector<KeyBinding> rows) {
  auto at = std::find_if(rows.begin(), rows.end(), [](const KeyBinding& b) { return b.action == prev_pane; }) + 1;
  for (const PaneRow& pane : pane_table()) at = rows.insert(at, {{pane.key}, C::global, show_pane, pane.key_help}) + 1;
  return rows;
}

const std::vector<KeyBinding>& bindings() {
  static const std::vector<KeyBinding> kBindings = with_pane_keys({
      {{'q'}, C::global, quit, "quit (restores the terminal)"},
      {{'?', kKeyF1}, C::global, help, "help: this list (again: back to the pane before)"},
      {{kKeyTab}, C::global, next_pane, "next pane"},
      {{kKeyBackTab}, C::global, prev_pane, "previous pane"},
      {{'R'}, C::global, reload, "reload the model from disk"},
      {{kKeyEsc}, C::global, back, "cancel background work, close a detail or Help, back to the model list"},
      {{kKeyBackspace}, C::global, back, "back to the model list"},
      {{kKeyUp, 'k'}, C::nav, up, "move up"},
      {{kKeyDown, 'j'}, C::nav, down, "move down"},
      {{kKeyPageUp}, C::nav, page_up, "page up"},
      {{kKeyPageDown, ' '}, C::nav, page_down, "page down"},
      {{kKeyHome, 'g'}, C::nav, home, "first row"},
      {{kKeyEnd, 'G'}, C::nav, end, "last row"},
      {{kKeyEnter}, C::model_list, open, "open the model"},
      {{'/'}, C::model_list, search, "search names"},
      {{'n'}, C::model_list, search_next, "next match"},
      {{'N'}, C::model_list, search_prev, "previous match"},
      {{'o'}, C::model_list, open_address, "open a path or a remote address (hf://, ollama://, https://)"},
      {{kKeyEnter}, C::tensors, open, "open the tensor's detail (on a layer row: fold it)"},
      {{' '}, C::tensors, fold, "grouped by layer (z): fold or unfold the cursor's layer; else page down"},
      {{'<', kKeyLeft, 'h'}, C::tensors, column_left, "column cursor left"},
      {{'>', kKeyRight, 'l'}, C::tensors, column_right, "column cursor right"},
      {{'['}, C::tensors, sort_asc, "sort by the column under the cursor, ascending"},
      {{']'}, C::tensors, sort_desc, "sort by the column under the cursor, descending"},
      {{'\\'}, C::tensors, filter, "filter: name regex, type:q6_k, layer:1, role:norm (all must match; ! inverts one)"},
      {{'/'}, C::tensors, search, "incremental search"},
      {{'n'}, C::tensors, search_next, "next match"},
      {{'N'}, C::tensors, search_prev, "previous match"},
      {{'z'}, C::tensors, group_layers, "group rows by layer"},
      {{'c'}, C::tensors, toggle_canonical, "show canonical or native names"},
      {{'s'}, C::tensors, restart_stats, "compute value statistics again (after Esc)"},
      {{kKeyEnter},
       C::header,
       open,
       "on a long value or a GGUF array: open it whole (an array one element a line), searchable; else fold"},
      {{' '}, C::header, fold, "fold or unfold the key or array under the cursor"},
      {{'r'}, C::header, toggle_raw, "raw text / tree"},
      {{'/'}, C::header, search, "search keys and values"},
      {{'n'}, C::header, search_next, "next match"},
      {{'N'}, C::header, search_prev, "previous match"},
      {{'u'}, C::mapping, unmapped_only, "only unmapped tensors / all"},
      {{'\\'}, C::mapping, filter, "filter by regex (a leading ! inverts)"},
      {{'/'}, C::mapping, search, "search names"},
      {{'n'}, C::mapping, search_next, "next match"},
      {{'N'}, C::mapping, search_prev, "previous match"},
      {{'c'}, C::mapping, toggle_canonical, "sort by native or canonical name"},
      {{kKeyEnter}, C::layout, open, "on a tensor info or entry: its data; on tensor data: its block's fields"},
      {{'o'}, C::layout, goto_offset, "go to a hex offset"},
      {{'/'}, C::layout, search, "search regions by name"},
      {{'n'}, C::layout, search_next, "next match"},
      {{'N'}, C::layout, search_prev, "previous match"},
      {{'f'}, C::layout, next_file, "the model's next file"},
      {{kKeyEnter}, C::groups, open, "step through the group under the cursor: bytes, codes, scales, formula, values"},
      {{'r', 'x', kKeyEnter}, C::compute, run, "run the selection on the backend (Esc cancels; x runs, as in Diff)"},
      {{'s'}, C::compute, scope, "select: the Tensors pane's tensor, its whole layer, or the filter"},
      {{'\\'}, C::compute, filter, "filter by regex (selects the filter)"},
      {{'b'}, C::compute, backend_next, "next backend (each OpenCL device by its index and name)"},
      {{'B'}, C::compute, backend_prev, "previous backend"},
      {{'i'}, C::compute, input, "input: seeded, ones, or a raw f32 file (prompts for its path)"},
      {{'+'}, C::compute, repeats_up, "more timed repeats"},
      {{'-'}, C::compute, repeats_down, "fewer timed repeats"},
      {{'X'}, C::compute, clear, "clear the results"},
      {{kKeyEnter}, C::diff, open, "both tensors side by side: shapes, types, value statistics, the error"},
      {{'x'}, C::diff, run_pair, "run the pair in Compute (A's tensor, its error against B's)"},
      {{'s'}, C::diff, restart_stats, "compute the errors again (after Esc)"},
      {{'+', '='}, C::fit, context_up, "double the context"},
      {{'-'}, C::fit, context_down, "halve the context"},
      {{'c'}, C::fit, set_context, "type a context in tokens (0: the model's trained context)"},
      {{'v'}, C::fit, kv_type_next, "next KV cache type (f16, q8_0, q4_0, ...)"},
      {{'m'}, C::fit, gpu_memory, "GPU memory in GiB, one figure per GPU (24 or 24,12): the layers each one holds"},
      {{'/'}, C::help, search, "search the keys and what they do"},
      {{'n'}, C::help, search_next, "next match"},
      {{'N'}, C::help, search_prev, "previous match"},
      {{kKeyEsc, kKeyEnter, 'q'}, C::detail, back, "close the detail"},
      {{'/'}, C::detail, search, "search a long value's lines or an array's elements"},
      {{'n'}, C::detail, search_next, "next match"},
      {{'N'}, C::detail, search_prev, "previous match"},
      {{kKeyEnter}, C::prompt, prompt_accept, "accept"},
      {{kKeyEsc}, C::prompt, prompt_cancel, "cancel (restores what was there)"},
      {{kKeyBackspace}, C::prompt, prompt_erase, "erase a character"},
      {{kKeyCtrlU}, C::prompt, prompt_clear, "clear the prompt"},
  });
  return kBindings;
}

}   // namespace

std::span<const KeyBinding> key_table() { return bindings(); }

bool find_binding(int32_t key, Context context, Action& action) {
  for (const KeyBinding& b : bindings()) {
    if (b.context != context) continue;
    for (int32_t k : b.keys)
      if (k == key) {
        action = b.action;
        return true;
      }
  }
  return false;
}

std::string key_label(int32_t key) {
  switch (key) {   // the named keys; everything else is its character
    case kKeyEnter: return "Enter";
    case kKeyTab: return "Tab";
    case kKeyBackTab: return "Shift-Tab";
    case kKeyEsc: return "Esc";
    case kKeyBackspace: return "Backspace";
    case kKeyUp: return "↑";
    case kKeyDown: return "↓";
    case kKeyLeft: return "←";
    case kKeyRight: return "→";
    case kKeyPageUp: return "PgUp";
    case kKeyPageDown: return "PgDn";
    case kKeyHome: return "Home";
    case kKeyEnd: return "End";
    case kKeyF1: return "F1";
    case kKeyCtrlU: return "Ctrl-U";
    case kKeyDelete: return "Del";
    case ' ': return "Space";
    default: break;
  }
  std::string s;
  if (key < 0x80) s += static_cast<char>(key);
  return s;
}

std::string_view context_title(Context context) {
  struct Title {
    Context context;
    std::string_view title;
  };
  static constexpr Title kShell[] = {{C::global, "Everywhere"},
                                     {C::nav, "Lists and tables"},
                                     {C::model_list, "Model list"},
                                     {C::detail, "Tensor detail"},
                                     {C::prompt, "Prompts (filter, search)"}};
  for (const Title& t : kShell)
    if (t.context == context) return t.title;
  for (const PaneRow& pane : pane_table())   // a pane's own bindings: its title
    if (pane.context == context) return pane.title;
  return {};
}

std::string key_table_markdown() {
  std::string out = "| where | keys | what |\n|---|---|---|\n";
  for (const KeyBinding& b : bindings()) {
    std::string keys;
    for (int32_t k : b.keys)
      keys += fmt::format("{}`{}`", keys.empty() ? "" : " ", key_label(k) == "`" ? "` ` `" : key_label(k));
    out += fmt::format("| {} | {} | {} |\n", context_title(b.context), keys, b.help);
  }
  return out;
}

}   // namespace akview::tui
