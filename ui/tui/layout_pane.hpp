// The Layout pane (PRODUCT.md "The terminal UI" pane 3): the region tree of one file of the model
// (core/layout) beside a hex + ASCII view of its bytes, the selected region's bytes coloured by
// the role of each child region. Enter on a tensor info or header entry jumps to the tensor's data;
// Enter on tensor data shows one block's fields (core/layout/block_fields) with its bytes coloured
// by field; `o` goes to a typed hex offset; `f` shows the model's next file; `/` searches regions by
// name. The pane follows the tensor selected in Tensors: shown after the selection there changed, it opens
// that tensor's file and selects its data (or, where that file holds no data regions, its header
// entry). The regions are collected on the worker, and only the rows on screen are drawn.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/layout/block_fields.hpp"
#include "core/layout/region.hpp"
#include "ui/tui/pane.hpp"
#include "ui/tui/session.hpp"

namespace akview::tui {

class LayoutPane : public Pane {
 public:
  // `selected_tensor`: the tensor selected in Tensors (kNone: none), followed when it changes.
  explicit LayoutPane(std::shared_ptr<ModelSession> session, std::function<uint32_t()> selected_tensor = nullptr);

  Context context() const override { return block_ ? Context::detail : Context::layout; }
  void draw(Canvas& canvas, const Rect& area) override;
  bool act(Action action, PaneHost& host) override;
  void click(int x, int y, PaneHost& host) override;
  void wheel(int rows) override;
  std::string position() const override;
  std::string state() const override;
  std::string hints() const override;
  void before_frame(PaneHost& host) override;
  bool ready() const override { return loaded_; }

  // For tests.
  const std::vector<Region>& regions() const { return regions_; }
  int64_t cursor_row() const { return list_.cursor.pos; }
  bool block_open() const { return block_.has_value(); }
  // Selects the deepest region holding `offset`; false when none does.
  bool go_to_offset(uint64_t offset);
  // Selects the region of `tensor`: its data, else the first region named after it; false when none.
  bool select_tensor_region(uint32_t tensor);
  // The next row from `from` (dir 1) or previous (dir -1), wrapping, whose name holds `needle`
  // (any case); -1 when none.
  int64_t search(std::string_view needle, int64_t from, int dir) const;

 private:
  void load(PaneHost& host);
  void follow(uint32_t tensor);
  void open_search(PaneHost& host);
  void select(int64_t row);
  bool enter(PaneHost& host);
  void open_block(uint32_t tensor, uint64_t block, PaneHost* host);
  void draw_tree(Canvas& canvas, const Rect& area);
  void draw_hex(Canvas& canvas, const Rect& area);
  void draw_block(Canvas& canvas, const Rect& area);
  // The role of byte `offset` in the hex view (the child of the selection holding it).
  Role byte_role(uint64_t offset) const;

  std::shared_ptr<ModelSession> session_;
  Lifeline life_;
  uint32_t file_ = 0;
  std::vector<Region> regions_;
  bool loading_ = false, loaded_ = false, truncated_ = false;
  std::string error_;
  ListView list_;
  uint64_t hex_top_ = 0;   // first byte shown in the hex view
  int bytes_per_row_ = 16;
  std::vector<size_t> children_;   // region indices of the selection's children
  std::optional<BlockReport> block_;
  uint32_t block_tensor_ = 0;
  std::function<uint32_t()> selected_tensor_;
  uint32_t followed_ = kNone;         // the Tensors selection last followed
  uint32_t pending_follow_ = kNone;   // ... to select once its file's regions are loaded
  std::string search_;
};

}   // namespace akview::tui
