// The Diff pane (PRODUCT.md "The terminal UI"): with a second model (`akview A --ref B`), every tensor
// of A against B through canonical names (core/diff.hpp, the engine of `akview diff`): both types
// and shapes, and the value error (relative RMS, cosine, max abs) computed on the worker, worst first.
// Missing tensors, shape changes and tensors that could not be compared are flagged on top; MoE
// experts pair expert by expert. Enter shows both tensors side by side; `x` runs the pair in Compute.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/diff.hpp"
#include "ui/tui/diff_order.hpp"
#include "ui/tui/overlay.hpp"
#include "ui/tui/pane.hpp"
#include "ui/tui/session.hpp"

namespace akview::tui {

class DiffPane : public Pane {
 public:
  // The value statistics of one side of a pair, for the side-by-side view.
  struct SideStats {
    double min = 0, max = 0, mean = 0, std = 0;
    uint64_t elements = 0;
    std::string problem;   // why there are none
  };

  // `run_pair` runs A's tensor in the Compute pane (with B as its reference) and shows that pane.
  DiffPane(std::shared_ptr<ModelSession> a, std::shared_ptr<ModelSession> b,
           std::function<void(uint32_t, PaneHost&)> run_pair);
  ~DiffPane() override;

  Context context() const override { return detail_overlay_.open ? Context::detail : Context::diff; }
  void draw(Canvas& canvas, const Rect& area) override;
  bool act(Action action, PaneHost& host) override;
  void click(int x, int y, PaneHost& host) override;
  void wheel(int rows) override;
  std::string position() const override;
  std::string state() const override;
  std::string hints() const override;
  void before_frame(PaneHost& host) override;

  // For tests: the pairs in the order shown, and whether the errors are still being computed.
  std::vector<const TensorDiff*> shown() const;
  bool computing() const { return computing_; }
  bool detail_open() const { return detail_overlay_.open; }

 private:
  // The widest cell of each column over every pair, measured on the worker when the pairs are listed.
  struct Widths {
    int key = 0, type_a = 0, type_b = 0, shape = 0;
  };
  // One line of the side-by-side view: a label and A's and B's values, or one value for the pair.
  struct DetailLine {
    std::string label, a, b;
    Role role = Role::normal;
    bool pair = false;   // `a` is the pair's (the error of A against B), drawn across both columns
  };
  void start(PaneHost& host);
  void resort(const std::vector<uint32_t>* changed);
  void open_detail(PaneHost& host);
  std::vector<DetailLine> detail_lines() const;
  void draw_detail(Canvas& c, const Rect& area);
  std::string side_name(const Model& m, uint32_t index, int64_t expert) const;

  std::shared_ptr<ModelSession> a_, b_;
  std::function<void(uint32_t, PaneHost&)> run_pair_;
  Lifeline life_;
  std::vector<DiffRow> rows_;
  WorstFirst order_;
  Widths widths_;
  bool started_ = false, listed_ = false, computing_ = false, cancelled_ = false;
  size_t valued_ = 0, to_value_ = 0;
  size_t only_a_ = 0, only_b_ = 0, shape_changes_ = 0;
  ListView list_;
  bool moved_ = false;   // the user moved the cursor: keep its row when rows move
  uint32_t detail_row_ = 0;
  std::optional<SideStats> detail_a_, detail_b_;
  Overlay detail_overlay_;   // the side-by-side view scrolls when the pane is short
  size_t detail_count_ = 0;
};

// The value statistics of rows [row0, row0 + rows) of a tensor (all rows when rows < 0), decoded in
// chunks; `cancel` stops it.
DiffPane::SideStats side_stats(const Model& model, uint32_t index, int64_t expert, int64_t expert_rows,
                               const std::atomic<bool>* cancel);

}   // namespace akview::tui
