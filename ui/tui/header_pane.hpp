// The Header pane (PRODUCT.md "The terminal UI" pane 2): the metadata as a tree — the tokenizer
// summary, each source's keys with their types, JSON values as nested foldable rows, GGUF arrays
// folded as [count] and unfolded into element rows of which only those on screen are read — and,
// with `r`, the raw text of every source. `/` searches keys and values (not GGUF array elements:
// the tree's search never reads a whole vocabulary). Enter on a value wider than its column (a chat
// template, a long string) opens it whole, wrapped and searchable (text_viewer.hpp); Enter on a GGUF
// array (or one of its elements) opens the whole array the same way, one element a line, read as it
// comes on screen, where `/` does search every element. Space folds and unfolds.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ui/tui/header_tree.hpp"
#include "ui/tui/pane.hpp"
#include "ui/tui/search.hpp"
#include "ui/tui/session.hpp"
#include "ui/tui/text_viewer.hpp"

namespace akview::tui {

class HeaderPane : public Pane {
 public:
  explicit HeaderPane(std::shared_ptr<ModelSession> session);

  Context context() const override { return viewer_ ? Context::detail : Context::header; }
  void draw(Canvas& canvas, const Rect& area) override;
  bool act(Action action, PaneHost& host) override;
  void click(int x, int y, PaneHost& host) override;
  void wheel(int rows) override;
  std::string position() const override;
  std::string state() const override;
  std::string hints() const override;

  // For the shell and tests.
  bool raw() const { return raw_; }
  uint64_t row_count() const;   // rows of the view in front (tree or raw)
  int64_t cursor_row() const { return raw_ ? raw_list_.cursor.pos : list_.cursor.pos; }
  const HeaderTree& tree() const { return tree_; }
  uint64_t elements_read() const { return elements_read_; }   // array elements decoded so far
  uint64_t largest_read() const { return largest_read_; }     // the most decoded by one call
  const TextViewer* viewer() const { return viewer_ ? &*viewer_ : nullptr; }

 private:
  // A run of tree rows: one node, or the element rows of an unfolded GGUF array.
  struct Span {
    uint32_t node;
    bool elements;
  };
  struct RowRef {
    uint32_t node = kNone;
    bool element = false;
    uint64_t index = 0;   // element index
  };
  // The elements of one array on screen (read once per change of what is visible).
  struct Page {
    uint32_t node = kNone;
    uint64_t first = 0;
    std::vector<MetaValue> values;
    std::string error;
  };
  struct VisualRow {   // raw view: a piece of a RawLine that fits the width
    uint32_t line;
    uint32_t len;
    uint64_t begin;
  };

  void rebuild_rows();
  RowRef row_at(uint64_t row) const;
  int64_t row_of_node(uint32_t node) const;
  void toggle_fold();
  void open_row();   // Enter: a long value or a GGUF array whole, else fold
  void open_array(uint32_t node, uint64_t at);
  // An element's text as its row shows it (a nested array: its count and first elements).
  std::string element_text(const MetaEntry& entry, const MetaValue& v) const;
  void read_visible_pages(int rows);
  const MetaValue* element(uint32_t node, uint64_t index, std::string& error) const;
  void draw_tree(Canvas& canvas, const Rect& area);
  void draw_tree_row(Canvas& canvas, int x, int y, int w, const RowRef& ref);
  void draw_raw(Canvas& canvas, const Rect& area);
  void wrap_raw(int width);
  Search::Target search_target();

  std::shared_ptr<ModelSession> session_;
  HeaderTree tree_;
  std::vector<Span> spans_;
  std::vector<uint64_t> span_start_;   // first row of each span
  uint64_t rows_ = 0;
  ListView list_;
  int max_key_w_ = 0, max_type_w_ = 0;
  int value_w_ = 0;   // the value column's width when last drawn
  std::optional<TextViewer> viewer_;
  std::vector<Page> pages_;
  uint64_t elements_read_ = 0, largest_read_ = 0;

  bool raw_ = false;
  bool raw_built_ = false;
  std::vector<RawLine> raw_lines_;
  std::vector<VisualRow> raw_rows_;
  int raw_width_ = -1;
  ListView raw_list_;

  Search search_{search_target()};   // over the tree's nodes (not array elements)
};

}   // namespace akview::tui
