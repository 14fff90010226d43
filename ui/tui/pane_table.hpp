// The pane table: one row per pane of a model's view, in the order of its tabs — its title, the key
// that shows it, its line in the help, the key-table context of its own bindings, and how it is made.
// The shell, the tabs, the key table and the help read it; a new pane is its own file and a row in
// pane_table.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "ui/tui/keys.hpp"

namespace akview::tui {

class ModelView;
class Pane;

struct PaneRow {
  std::string_view title;                           // the tab: "Tensors"
  int32_t key;                                      // the global key that shows it: '1'
  std::string_view key_help;                        // that key's line in the help: "Tensors pane"
  Context context;                                  // where its own bindings apply (nav: it has none but the lists')
  bool needs_ref;                                   // only with a second model (akview A --ref B)
  std::unique_ptr<Pane> (*make)(ModelView& view);   // the view outlives its panes
};

std::span<const PaneRow> pane_table();

}   // namespace akview::tui
