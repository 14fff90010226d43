// The Header pane (header_pane.hpp): rows are spans over the tree's visible nodes, plus one span of
// element rows per unfolded GGUF array; a row's text is made only when it is on screen.
#include "ui/tui/header_pane.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/formats/gguf.hpp"
#include "ui/tui/text_search.hpp"

namespace akview::tui {
namespace {

constexpr int kMaxIndent = 6;
constexpr int kMaxTypeColumn = 23;    // "ARRAY[ARRAY[STRING]]" and a gap
constexpr int kTypeColumnFrom = 60;   // narrower panes drop the type column
constexpr uint64_t kNestedPreview = 6;
constexpr uint64_t kArrayChunk = 1024;   // elements read at a time for an array opened whole

int indent(int depth) { return std::min(depth, kMaxIndent); }

// Bytes of `text` from `begin` that fit `width` columns once escaped (at least one code point):
// printable ASCII takes 1, control bytes and invalid UTF-8 4 (\xNN), zero-width marks their
// \u{NNNN}, wide characters 2.
size_t wrap_end(std::string_view text, size_t begin, int width) {
  size_t i = begin;
  int used = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t len = 1;
    int w = 1;
    if (c < 0x20 || c == 0x7f) {
      w = 4;
    } else if (c >= 0x80) {
      len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
      bool valid = len > 0 && i + len <= text.size();
      char32_t cp = len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
      for (size_t k = 1; valid && k < len; ++k) {
        const auto cc = static_cast<unsigned char>(text[i + k]);
        valid = (cc & 0xc0) == 0x80;
        cp = (cp << 6) | (cc & 0x3f);
      }
      if (!valid) {
        len = 1;
        w = 4;
      } else {
        const int cw = char_width(cp);
        w = cw == 0 ? (cp > 0xffff ? 9 : 8) : cw;
      }
    }
    if (used + w > width && i > begin) break;
    used += w;
    i += len;
  }
  return i;
}

}   // namespace

HeaderPane::HeaderPane(std::shared_ptr<ModelSession> session)
    : session_(std::move(session)), tree_(build_header_tree(session_->model)) {
  for (const HeaderNode& n : tree_.nodes)
    if (n.kind != HeaderNodeKind::section) {
      max_key_w_ = std::max(max_key_w_, indent(n.depth) + 2 + display_width(n.key));
      max_type_w_ = std::max(max_type_w_, display_width(n.type));
    }
  rebuild_rows();
}

void HeaderPane::rebuild_rows() {
  spans_.clear();
  span_start_.clear();
  rows_ = 0;
  const auto n = static_cast<uint32_t>(tree_.nodes.size());
  for (uint32_t i = 0; i < n;) {
    const HeaderNode& node = tree_.nodes[i];
    spans_.push_back({i, false});
    span_start_.push_back(rows_++);
    if (node.gguf_array() && !node.folded) {
      spans_.push_back({i, true});
      span_start_.push_back(rows_);
      rows_ += node.elements;
    }
    i = node.folded ? std::max(node.end, i + 1) : i + 1;
  }
}

HeaderPane::RowRef HeaderPane::row_at(uint64_t row) const {
  if (row >= rows_) return {};
  const size_t k =
      static_cast<size_t>(std::upper_bound(span_start_.begin(), span_start_.end(), row) - span_start_.begin()) - 1;
  return RowRef{spans_[k].node, spans_[k].elements, row - span_start_[k]};
}

int64_t HeaderPane::row_of_node(uint32_t node) const {
  for (size_t k = 0; k < spans_.size(); ++k)
    if (spans_[k].node == node && !spans_[k].elements) return static_cast<int64_t>(span_start_[k]);
  return -1;
}

uint64_t HeaderPane::row_count() const { return raw_ ? raw_rows_.size() : rows_; }

void HeaderPane::toggle_fold() {
  const RowRef ref = row_at(static_cast<uint64_t>(list_.cursor.pos));
  if (ref.node == kNone) return;
  HeaderNode& node = tree_.nodes[ref.node];
  if (ref.element) node.folded = true;   // Enter on an element folds its array
  else if (node.foldable(ref.node)) node.folded = !node.folded;
  else return;
  rebuild_rows();
  list_.cursor.pos = row_of_node(ref.node);
  list_.clamp(static_cast<int64_t>(rows_));
}

void HeaderPane::open_row() {
  const RowRef ref = row_at(static_cast<uint64_t>(list_.cursor.pos));
  if (ref.node == kNone) return;
  const HeaderNode& node = tree_.nodes[ref.node];
  if (node.gguf_array()) {   // the array, or one of its elements: the whole array, there
    open_array(ref.node, ref.element ? ref.index : 0);
    return;
  }
  const bool long_value = node.value.find('\n') != std::string::npos || display_width(node.value) > value_w_;
  if (!node.foldable(ref.node) && long_value) {
    viewer_.emplace(node.key, node.value);
    return;
  }
  toggle_fold();
}

std::string HeaderPane::element_text(const MetaEntry& entry, const MetaValue& v) const {
  std::string text = meta_value_text(v);
  if (v.type == MetaType::array) {   // a nested array: its first elements inline
    if (auto inner = read_gguf_array(session_->model, entry, v, kNestedPreview)) {
      for (size_t i = 0; i < inner->size(); ++i) text += (i ? ", " : " ") + meta_value_text((*inner)[i]);
      if (v.count > inner->size()) text += ", …";
    }
  }
  return text;
}

void HeaderPane::open_array(uint32_t node, uint64_t at) {
  // Elements are read a chunk at a time as lines are asked for (the screen's, or a search's), the
  // two chunks read last kept: a 150,000-token vocabulary opens after reading one chunk.
  struct Chunk {
    uint64_t first = 0;
    std::vector<std::string> lines;
  };
  const HeaderNode& n = tree_.nodes[node];
  const uint32_t meta = n.meta;
  const uint64_t count = n.elements;
  const int digits = static_cast<int>(fmt::format("{}", count ? count - 1 : 0).size());
  auto chunks = std::make_shared<std::vector<Chunk>>();
  TextViewer::Source source;
  source.count = count;
  source.elements = true;
  source.line = [this, meta, count, digits, chunks](uint64_t i) -> std::string {
    const uint64_t first = i / kArrayChunk * kArrayChunk;
    auto have = std::find_if(chunks->begin(), chunks->end(), [&](const Chunk& c) { return c.first == first; });
    if (have == chunks->end()) {
      const MetaEntry& entry = session_->model.meta[meta];
      const uint64_t n = std::min(kArrayChunk, count - first);
      Chunk c{first, {}};
      auto values = read_gguf_array_range(session_->model, entry, entry.value, first, n);
      elements_read_ += n;
      largest_read_ = std::max(largest_read_, n);
      for (uint64_t k = 0; k < n; ++k) {
        const std::string value = !values              ? "(unreadable: " + values.error().to_string() + ")"
                                  : k < values->size() ? element_text(entry, (*values)[k])
                                                       : std::string("(unreadable)");
        c.lines.push_back(fmt::format("[{:>{}}] {}", first + k, digits, value));
      }
      if (chunks->size() >= 2) chunks->erase(chunks->begin());
      chunks->push_back(std::move(c));
      have = chunks->end() - 1;
    }
    return have->lines[i - first];
  };
  viewer_.emplace(n.key, std::move(source));
  viewer_->go_to(at);
}

void HeaderPane::read_visible_pages(int rows) {
  struct Want {
    uint32_t node;
    uint64_t lo, hi;
  };
  std::vector<Want> wants;
  for (int k = 0; k < rows; ++k) {
    const RowRef ref = row_at(static_cast<uint64_t>(list_.cursor.top + k));
    if (ref.node == kNone) break;
    if (!ref.element) continue;
    if (wants.empty() || wants.back().node != ref.node) wants.push_back({ref.node, ref.index, ref.index});
    wants.back().hi = ref.index;
  }
  std::vector<Page> next;
  for (const Want& w : wants) {
    auto have = std::find_if(pages_.begin(), pages_.end(), [&](const Page& p) {
      return p.node == w.node && p.first <= w.lo && p.first + p.values.size() > w.hi;
    });
    if (have != pages_.end()) {
      next.push_back(std::move(*have));
      continue;
    }
    const MetaEntry& entry = session_->model.meta[tree_.nodes[w.node].meta];
    Page page{w.node, w.lo, {}, {}};
    const uint64_t n = w.hi - w.lo + 1;
    auto values = read_gguf_array_range(session_->model, entry, entry.value, w.lo, n);
    elements_read_ += n;
    largest_read_ = std::max(largest_read_, n);
    if (values) page.values = std::move(*values);
    else page.error = values.error().to_string();
    next.push_back(std::move(page));
  }
  pages_ = std::move(next);
}

const MetaValue* HeaderPane::element(uint32_t node, uint64_t index, std::string& error) const {
  for (const Page& p : pages_) {
    if (p.node != node) continue;
    if (index >= p.first && index - p.first < p.values.size()) return &p.values[index - p.first];
    error = p.error.empty() ? "(unreadable)" : p.error;
    return nullptr;
  }
  error = "…";
  return nullptr;
}

void HeaderPane::draw(Canvas& canvas, const Rect& area) {
  canvas.fill(area, Role::normal);
  if (area.w <= 0 || area.h <= 0) return;
  list_.page = raw_list_.page = std::max(1, area.h - 1);
  if (viewer_) viewer_->draw(canvas, area);
  else if (raw_) draw_raw(canvas, area);
  else draw_tree(canvas, area);
}

void HeaderPane::draw_tree(Canvas& canvas, const Rect& area) {
  const int w = area.w;
  const int type_w = w >= kTypeColumnFrom ? std::clamp(max_type_w_ + 2, 8, kMaxTypeColumn) : 0;
  const int key_w = type_w ? std::clamp(max_key_w_ + 1, 12, w * 2 / 5) : std::clamp(max_key_w_ + 1, 10, w / 2);
  canvas.fill(area.x, area.y, w, Role::header);
  canvas.text(area.x, area.y, "key", Role::header, key_w);
  if (type_w) canvas.text(area.x + key_w, area.y, "type", Role::header, type_w);
  canvas.text(area.x + key_w + type_w, area.y, "value", Role::header, w - key_w - type_w);
  value_w_ = w - key_w - type_w;
  if (rows_ == 0) {
    canvas.text(area.x, area.y + 1, "(no metadata)", Role::muted, w);
    return;
  }
  list_.clamp(static_cast<int64_t>(rows_));
  read_visible_pages(list_.page);
  for (int k = 0; k < list_.page; ++k) {
    const int64_t row = list_.cursor.top + k;
    const RowRef ref = row_at(static_cast<uint64_t>(row));
    if (ref.node == kNone) break;
    const int y = area.y + 1 + k;
    const HeaderNode& node = tree_.nodes[ref.node];
    if (node.kind == HeaderNodeKind::section) {
      canvas.fill(area.x, y, w, Role::group);
      int children = 0;
      for (uint32_t c = ref.node + 1; c < node.end; c = std::max(tree_.nodes[c].end, c + 1)) ++children;
      const std::string label =
          fmt::format("{} {}  ({} key{})", node.folded ? "▸" : "▾", node.key, children, children == 1 ? "" : "s");
      canvas.text(area.x, y, label, Role::group, w);
      if (row == list_.cursor.pos) canvas.restyle(area.x, y, w, Role::selected);
      if (search_.active()) highlight_match(canvas, area.x + 2, y, w - 2, node.key, search_.pattern());
      continue;
    }
    const int kx = area.x + indent(ref.element ? node.depth + 1 : node.depth);
    const int key_room = area.x + key_w - 1 - (kx + 2);
    const int vx = area.x + key_w + type_w;
    const int value_w = w - key_w - type_w;
    if (ref.element) {
      canvas.text(kx + 2, y, fmt::format("[{}]", ref.index), Role::muted, key_room);
      std::string error;
      const MetaValue* v = element(ref.node, ref.index, error);
      if (!v) {
        canvas.text(vx, y, error, Role::error, value_w);
      } else {
        if (type_w) canvas.text(area.x + key_w, y, meta_type_label(*v), Role::type_other, type_w - 1);
        canvas.text(vx, y, element_text(session_->model.meta[node.meta], *v), meta_value_role(*v), value_w);
      }
    } else {
      if (node.foldable(ref.node)) canvas.put(kx, y, node.folded ? U'▸' : U'▾', Role::muted);
      canvas.text(kx + 2, y, node.key, Role::key, key_room);
      if (type_w) canvas.text(area.x + key_w, y, node.type, Role::type_other, type_w - 1);
      canvas.text(vx, y, node.value, node.value_role, value_w);
    }
    if (row == list_.cursor.pos) canvas.restyle(area.x, y, w, Role::selected);
    if (search_.active() && !ref.element) {
      highlight_match(canvas, kx + 2, y, key_room, node.key, search_.pattern());
      highlight_match(canvas, vx, y, value_w, node.value, search_.pattern());
    }
  }
}

void HeaderPane::wrap_raw(int width) {
  raw_rows_.clear();
  for (uint32_t li = 0; li < raw_lines_.size(); ++li) {
    const RawLine& line = raw_lines_[li];
    if (line.title || line.meta != kNone || line.text.empty()) {
      raw_rows_.push_back({li, 0, 0});
      continue;
    }
    for (size_t begin = 0; begin < line.text.size();) {
      const size_t end = wrap_end(line.text, begin, width);
      raw_rows_.push_back({li, static_cast<uint32_t>(end - begin), begin});
      begin = end;
    }
  }
  raw_width_ = width;
}

void HeaderPane::draw_raw(Canvas& canvas, const Rect& area) {
  const int w = area.w;
  if (!raw_built_) {
    raw_lines_ = build_raw_lines(session_->model, tree_);
    raw_built_ = true;
  }
  if (raw_width_ != w) wrap_raw(w);
  canvas.fill(area.x, area.y, w, Role::header);
  canvas.text(area.x, area.y, "raw text of each source (r: tree)", Role::header, w);
  raw_list_.clamp(static_cast<int64_t>(raw_rows_.size()));
  const Model& model = session_->model;
  for (int k = 0; k < raw_list_.page; ++k) {
    const int64_t row = raw_list_.cursor.top + k;
    if (row >= static_cast<int64_t>(raw_rows_.size())) break;
    const int y = area.y + 1 + k;
    const VisualRow& vr = raw_rows_[static_cast<size_t>(row)];
    const RawLine& line = raw_lines_[vr.line];
    if (line.title) {
      canvas.fill(area.x, y, w, Role::group);
      canvas.text(area.x, y, line.text, Role::group, w);
    } else if (line.meta != kNone) {   // GGUF: offset, key, type, value
      const MetaEntry& m = model.meta[line.meta];
      int x = area.x;
      const int end = area.x + w;
      x += canvas.text(x, y, fmt::format("{:#010x}", m.offset), Role::muted, end - x) + 1;
      x += canvas.text(x, y, m.key, Role::key, end - x) + 1;
      x += canvas.text(x, y, meta_type_label(m.value), Role::type_other, end - x) + 1;
      if (x < end) canvas.text(x, y, meta_value_text(m.value), meta_value_role(m.value), end - x);
    } else {
      canvas.text(area.x, y, line.text.substr(vr.begin, vr.len), Role::normal, w);
    }
    if (row == raw_list_.cursor.pos) canvas.restyle(area.x, y, w, Role::selected);
  }
}

Search::Target HeaderPane::search_target() {
  Search::Target t;
  t.size = [this] { return static_cast<int64_t>(tree_.nodes.size()); };
  t.current = [this]() -> int64_t {
    if (rows_ == 0) return -1;
    const RowRef here = row_at(static_cast<uint64_t>(list_.cursor.pos));
    return here.node == kNone ? 0 : here.node;
  };
  t.matches = [this](int64_t i, const Pattern& p) {
    const HeaderNode& n = tree_.nodes[static_cast<size_t>(i)];
    return p.matches(n.key) || p.matches(n.value);
  };
  t.go = [this](int64_t i) {
    bool unfolded = false;   // a match inside a folded object: open what hides it
    for (uint32_t p = tree_.nodes[static_cast<size_t>(i)].parent; p != kNone; p = tree_.nodes[p].parent)
      if (tree_.nodes[p].folded) tree_.nodes[p].folded = false, unfolded = true;
    if (unfolded) rebuild_rows();
    const int64_t row = row_of_node(static_cast<uint32_t>(i));
    if (row >= 0) list_.cursor.pos = row;
    list_.clamp(static_cast<int64_t>(rows_));
  };
  return t;
}

bool HeaderPane::act(Action action, PaneHost& host) {
  if (viewer_) {
    if (action == Action::back) {
      viewer_.reset();
      return true;
    }
    return viewer_->act(action, host);
  }
  if (action == Action::toggle_raw) {
    raw_ = !raw_;
    return true;
  }
  if (raw_) {
    switch (action) {   // the raw view scrolls; the tree's own actions wait for it
      case Action::search:
      case Action::search_next:
      case Action::search_prev: host.flash("search works in the tree view (r)"); return true;
      case Action::fold: return true;
      default: return raw_list_.act(action, static_cast<int64_t>(raw_rows_.size()));
    }
  }
  switch (action) {
    case Action::fold: toggle_fold(); return true;
    case Action::open: open_row(); return true;
    case Action::search: search_.open(host); return true;
    case Action::search_next:
    case Action::search_prev: search_.next(host, action == Action::search_next ? 1 : -1); return true;
    default: return list_.act(action, static_cast<int64_t>(rows_));
  }
}

void HeaderPane::click(int /*x*/, int y, PaneHost& /*host*/) {
  if (viewer_) return;   // the long value has no rows to pick
  (raw_ ? raw_list_ : list_).click(y, static_cast<int64_t>(row_count()));
}

void HeaderPane::wheel(int rows) {
  if (viewer_) {
    viewer_->wheel(rows);
    return;
  }
  (raw_ ? raw_list_ : list_).wheel(rows, static_cast<int64_t>(row_count()));
}

std::string HeaderPane::position() const {
  if (viewer_) return viewer_->position();
  if (raw_) return fmt::format("line {}/{}", raw_list_.cursor.pos + 1, raw_rows_.size());
  if (rows_ == 0) return {};
  const RowRef ref = row_at(static_cast<uint64_t>(list_.cursor.pos));
  if (ref.element) return fmt::format("[{}] of {}", ref.index, tree_.nodes[ref.node].elements);
  return list_.position("key", static_cast<int64_t>(rows_));
}

std::string HeaderPane::state() const {
  if (viewer_) return viewer_->state();
  if (raw_) return "raw";
  return search_.status();
}

std::string HeaderPane::hints() const {
  if (viewer_) return "↑↓ scroll  / search  n/N next  Esc close";
  return raw_ ? "r tree" : "Enter open  Space fold  r raw  / search  n/N next";
}

}   // namespace akview::tui
