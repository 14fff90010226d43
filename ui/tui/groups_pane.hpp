// The Groups pane (PRODUCT.md "The terminal UI"): for the tensor selected in the Tensors
// pane, the quantization groups of a window of rows (computed on the worker, only for those rows):
// the per-group table, a heatmap of scales (and of biases or mins) over rows x groups with a legend,
// histograms of the values and of the levels used of 2^bits; Enter on a group opens its step-through
// (core/explain: bytes, codes, scales, formula, values) with the family's paragraph.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/decode/groups.hpp"
#include "ui/tui/overlay.hpp"
#include "ui/tui/pane.hpp"
#include "ui/tui/session.hpp"

namespace akview::tui {

// The groups of rows [row_begin, row_end) of one tensor, and what the pane draws from them.
struct GroupWindow {
  uint32_t tensor = kNone;
  int64_t row_begin = 0, row_end = 0, n_rows = 0;
  uint32_t groups_per_row = 0;
  std::vector<QuantGroup> groups;     // row-major
  std::vector<uint64_t> value_hist;   // values of those rows, kValueBins bins over [lo, hi]
  float lo = 0, hi = 0;
  int64_t requested_row = 0;   // the row the window was asked for (row_begin may be clamped)
  std::string problem;         // why there are no groups (plain dtype, bad view)
};
inline constexpr int64_t kGroupWindowRows = 32;
inline constexpr size_t kValueBins = 32;

// Computes the window (on the worker; reads only the model).
GroupWindow compute_group_window(const Model& model, uint32_t tensor, int64_t row_begin);

// The lines of a step-through: heading / text / values, ready to draw at any width.
struct StepLine {
  std::string text;
  Role role = Role::normal;
};
std::vector<StepLine> step_through_lines(const Model& model, uint32_t tensor, int64_t row, int64_t col, int width);

class GroupsPane : public Pane {
 public:
  GroupsPane(std::shared_ptr<ModelSession> session, std::function<uint32_t()> selected_tensor);
  Context context() const override { return steps_overlay_.open ? Context::detail : Context::groups; }
  void draw(Canvas& canvas, const Rect& area) override;
  bool act(Action action, PaneHost& host) override;
  void wheel(int rows) override;
  std::string position() const override;
  std::string hints() const override;
  void before_frame(PaneHost& host) override;
  bool ready() const override;

  // For tests.
  const GroupWindow* window() const { return window_.get(); }
  bool steps_open() const { return steps_overlay_.open; }

 private:
  void draw_table(Canvas& c, const Rect& area);
  void draw_maps(Canvas& c, const Rect& area);
  void draw_steps(Canvas& c, const Rect& area);
  void open_steps();

  std::shared_ptr<ModelSession> session_;
  std::function<uint32_t()> selected_;
  std::shared_ptr<const GroupWindow> window_;
  uint32_t want_tensor_ = kNone;
  int64_t want_row_ = 0;
  bool pending_ = false;
  ListView list_;              // over window_->groups
  bool jump_to_end_ = false;   // after moving up into the previous window: land on its last group
  bool cancelled_ = false;     // Esc stopped the job: ask again only when the selection moves
  int steps_width_ = 0;
  uint32_t steps_tensor_ = kNone;
  int64_t steps_row_ = 0, steps_col_ = 0;
  std::vector<StepLine> steps_;
  Overlay steps_overlay_;
  Lifeline life_;
};

}   // namespace akview::tui
