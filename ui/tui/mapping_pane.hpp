// The Mapping pane (PRODUCT.md "The terminal UI" pane 5): native ↔ canonical ↔ role for every
// mapped-or-not tensor of the name map, unmapped ones flagged and filterable, the conversion note,
// and the extracted config with each value's source (beside the table when wide, below it when not).
// The table is virtual: its rows are name-map entry indices, and only the rows on screen are drawn.
#pragma once

#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "core/names/model_config.hpp"
#include "ui/tui/pane.hpp"
#include "ui/tui/search.hpp"
#include "ui/tui/session.hpp"

namespace akview::tui {

class MappingPane : public Pane {
 public:
  explicit MappingPane(std::shared_ptr<ModelSession> session);

  Context context() const override { return Context::mapping; }
  void draw(Canvas& canvas, const Rect& area) override;
  bool act(Action action, PaneHost& host) override;
  void click(int x, int y, PaneHost& host) override;
  void wheel(int rows) override;
  std::string position() const override;
  std::string state() const override;
  std::string hints() const override;
  void before_frame(PaneHost& host) override;

  // For the shell and tests.
  uint64_t row_count() const { return view_.size(); }
  int64_t cursor_row() const { return list_.cursor.pos; }
  // The name-map entry shown at `row` (nullptr when none or the map is not built yet).
  std::optional<NameMapEntry> entry_at(uint64_t row) const;
  bool sorted_by_canonical() const { return by_canonical_; }

 private:
  void sync();                            // picks up a name map built (or rebuilt) since the last frame
  void refresh();                         // the map arrived or the filter/sort changed: rebuild the view
  const std::vector<uint32_t>& order();   // entries in the current sort (cached per sort)
  void request_sort(PaneHost& host);      // a big map's sort goes to the worker
  Search::Target search_target();
  void start_filter(PaneHost& host);
  // Fails for a bad regex: the last good one stays, and filter_error_ says why.
  Status set_filter(const std::string& text);
  void draw_table(Canvas& canvas, const Rect& area);
  void draw_config(Canvas& canvas, const Rect& area);
  void load_config();

  std::shared_ptr<ModelSession> session_;
  const NameMap* built_for_ = nullptr;
  std::vector<uint32_t> view_;   // entry indices, filtered and sorted
  std::vector<uint32_t> by_native_, by_canonical_order_, model_order_;
  bool sorting_[2] = {false, false};   // a worker sort is under way: [by canonical]
  bool sort_cancelled_ = false;
  Lifeline life_;
  bool by_canonical_ = false;
  bool unmapped_only_ = false;
  std::string filter_;   // as typed (a leading ! inverts)
  std::optional<std::regex> filter_re_;
  bool filter_invert_ = false;
  std::string filter_error_;    // bad_pattern_message of the filter typed, else ""
  uint64_t view_version_ = 0;   // bumped when view_ is rebuilt
  Search search_{search_target()};
  ListView list_;

  struct ConfigLine {
    std::string name, value, source;
    Role role;
  };
  bool config_loaded_ = false;
  std::vector<ConfigLine> config_;
};

}   // namespace akview::tui
