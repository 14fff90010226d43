// The Tensors pane: the virtual tensor table (tensor_table.hpp) drawn with as many columns as fit,
// a column cursor for sorting, filter and incremental search prompts, layer groups, value
// statistics as the worker fills them in, and a tensor's detail on Enter.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ui/tui/overlay.hpp"
#include "ui/tui/pane.hpp"
#include "ui/tui/search.hpp"
#include "ui/tui/tensor_table.hpp"
#include "ui/tui/value_stats.hpp"

namespace akview::tui {

// Every field of one tensor, its companions, canonical name and role, value statistics, the first
// decoded values and the caveat or the reason it cannot be decoded, as label/value lines.
std::vector<DetailLine> tensor_detail_lines(const ModelSession& session, uint32_t tensor);

class TensorsPane : public Pane {
 public:
  TensorsPane(std::shared_ptr<ModelSession> session, std::shared_ptr<StatsPlan> plan,
              std::function<void()> restart_stats);
  Context context() const override { return detail_overlay_.open ? Context::detail : Context::tensors; }
  void draw(Canvas& canvas, const Rect& area) override;
  bool act(Action action, PaneHost& host) override;
  void click(int x, int y, PaneHost& host) override;
  void wheel(int rows) override;
  std::string position() const override;
  std::string state() const override;
  std::string hints() const override;
  void before_frame(PaneHost& host) override;

  // For tests and the frame benchmark.
  TensorTable& table() { return table_; }
  int64_t cursor_row() const { return list_.cursor.pos; }
  bool detail_open() const { return detail_overlay_.open; }
  uint32_t selected_tensor() const;   // kNone on a layer row or an empty table (the Groups and Compute panes follow it)
  // Moves the cursor to `tensor` (the Diff pane's `x`); false when the table does not show it (filtered out).
  bool select_tensor(uint32_t tensor);

 private:
  struct Layout {
    std::vector<Column> columns;   // shown, in display order
    int name_width = 0;
  };
  Layout layout(int width) const;
  int column_width(Column c, const Layout& l) const;
  int fixed_width(Column c) const;   // every column but the name's
  void draw_row(Canvas& c, int x, int y, const Layout& l, uint32_t row);
  void draw_detail(Canvas& c, const Rect& area);
  void draw_totals(Canvas& c, const Rect& area);
  void keep_selection(uint32_t tensor);
  void open_filter(PaneHost& host);
  Search::Target search_target();
  void request_name_sort(PaneHost& host);   // a big table's name sort, on the worker

  std::shared_ptr<ModelSession> session_;
  std::shared_ptr<StatsPlan> plan_;
  std::function<void()> restart_stats_;
  bool stats_fetch_armed_ = false;   // a remote model: the first s said how much statistics fetch
  TensorTable table_;
  ListView list_;
  int width_ = 120;
  int type_width_ = 11;    // the longest type name in the model
  int shape_width_ = 14;   // the longest shape in the model
  Column column_cursor_ = Column::name;
  Search search_{search_target()};
  uint64_t seen_values_ = 0, seen_names_ = 0;
  std::vector<DetailLine> detail_;
  Overlay detail_overlay_;
  Lifeline life_;
};

}   // namespace akview::tui
