// The Layout pane (layout_pane.hpp).
#include "ui/tui/layout_pane.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include <fmt/format.h>

#include "core/fault_guard.hpp"
#include "core/layout/layout.hpp"
#include "ui/batch/explain_report.hpp"
#include "ui/tui/search.hpp"
#include "ui/tui/text_search.hpp"

namespace akview::tui {
namespace {

// More regions than this are not kept (a header of millions of tensors): the tree says so.
constexpr size_t kMaxRegions = 2'000'000;
constexpr int kTreeBesideFrom = 70;   // narrower panes put the hex view below the tree

// The colour of a region kind in the tree and the hex view (one row per RegionKind).
constexpr std::array<Role, static_cast<size_t>(RegionKind::count_)> kKindRoles = {
    Role::key,          // header
    Role::key,          // magic
    Role::number,       // version
    Role::number,       // count
    Role::number,       // length
    Role::string,       // json
    Role::muted,        // json_syntax
    Role::string,       // entry
    Role::key,          // metadata
    Role::string,       // kv
    Role::key,          // key
    Role::type_other,   // value_type
    Role::string,       // value
    Role::string,       // array
    Role::string,       // elements
    Role::key,          // tensor_infos
    Role::key,          // tensor_info
    Role::key,          // name
    Role::number,       // dims
    Role::type_other,   // type
    Role::number,       // offset
    Role::muted,        // padding
    Role::type_float,   // data
    Role::type_quant,   // tensor
    Role::type_float,   // companion
    Role::type_quant,   // storage
    Role::key,          // record
    Role::string,       // record_data
    Role::key,          // central_directory
    Role::key,          // directory_entry
    Role::key,          // end_record
    Role::string,       // pickle
    Role::key,          // opcode
    Role::string,       // text
    Role::error,        // gap
    Role::error,        // overlap
    Role::type_quant,   // shared
    Role::error,        // failure
};
Role kind_role(RegionKind k) { return kKindRoles[static_cast<size_t>(k)]; }

// The colour of a block field by what it holds.
Role field_role(FieldRole r) {
  static constexpr Role kRoles[] = {Role::type_float, Role::string, Role::key,   Role::type_quant,
                                    Role::warn,       Role::spark,  Role::muted, Role::number};
  return kRoles[static_cast<size_t>(r)];
}

bool is_data(RegionKind k) { return k == RegionKind::tensor || k == RegionKind::companion; }

// Bytes [at, at + n) of a mapped file, clipped to the mapping, read through the guard (the file may
// have shrunk since it was opened): the bytes, or the error naming what is gone.
Result<std::vector<uint8_t>> read_shown(std::span<const uint8_t> file, uint64_t at, uint64_t n) {
  std::vector<uint8_t> out;
  if (at >= file.size()) return out;
  out.resize(static_cast<size_t>(std::min<uint64_t>(n, file.size() - at)));
  if (Status st = copy_mapped(file.subspan(static_cast<size_t>(at), out.size()), out.data()); !st.ok())
    return st.error();
  return out;
}

}   // namespace

LayoutPane::LayoutPane(std::shared_ptr<ModelSession> session, std::function<uint32_t()> selected_tensor)
    : session_(std::move(session)), selected_tensor_(std::move(selected_tensor)) {
  // The selection at open is the table's first row, not a choice: the file is shown from its start
  // until a tensor is chosen.
  if (selected_tensor_) followed_ = selected_tensor_();
}

void LayoutPane::before_frame(PaneHost& host) {
  if (selected_tensor_)
    if (const uint32_t t = selected_tensor_(); t != followed_ && t < session_->model.tensors.size()) follow(t);
  if (!loaded_ && !loading_) load(host);
}

void LayoutPane::follow(uint32_t tensor) {
  followed_ = tensor;
  block_.reset();
  const uint32_t file = session_->model.tensors[tensor].file;
  if (file < session_->model.files.size() && file != file_ && !loading_) {
    file_ = file;
    regions_.clear();
    loaded_ = false;
    list_.cursor = {};
  }
  if (loaded_) select_tensor_region(tensor);
  else pending_follow_ = tensor;   // selected when the regions land
}

bool LayoutPane::select_tensor_region(uint32_t tensor) {
  const std::string_view name = session_->model.tensors[tensor].name;
  int64_t entry = -1;
  for (size_t i = 0; i < regions_.size(); ++i) {
    if (regions_[i].label != name) continue;
    if (is_data(regions_[i].kind)) {
      select(static_cast<int64_t>(i));
      return true;
    }
    if (entry < 0) entry = static_cast<int64_t>(i);
  }
  if (entry >= 0) select(entry);
  return entry >= 0;
}

int64_t LayoutPane::search(std::string_view needle, int64_t from, int dir) const {
  const int64_t n = static_cast<int64_t>(regions_.size());
  if (n == 0 || needle.empty()) return -1;
  const std::string lower = lower_ascii(needle);
  from = std::clamp<int64_t>(from, 0, n - 1);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t r = ((from + (dir >= 0 ? k : -k)) % n + n) % n;
    const Region& region = regions_[static_cast<size_t>(r)];
    const std::string_view name = region.label.empty() ? region_kind_name(region.kind) : std::string_view(region.label);
    if (find_ignore_case(name, lower) != std::string_view::npos) return r;
  }
  return -1;
}

void LayoutPane::open_search(PaneHost& host) {
  const int64_t start = list_.cursor.pos;
  host.prompt("search regions", "", [this, start, &host](const std::string& text, PromptEvent ev) {
    if (ev == PromptEvent::cancel) {
      select(start);
      return;
    }
    const int64_t r = search(text, start, 1);
    if (r >= 0) select(r);
    if (ev == PromptEvent::accept) {
      search_ = text;
      if (r < 0 && !text.empty()) host.flash(fmt::format("no match for '{}'", text));
    }
  });
}

void LayoutPane::load(PaneHost& host) {
  loading_ = true;
  Job job;
  job.label = "layout";
  job.urgent = true;   // the pane waits for it (and keys typed meanwhile wait with it): before the statistics
  const Lifeline::Link life = life_.link();
  job.run = [s = session_, file = file_, life, this](JobContext& ctx) {
    auto regions = std::make_shared<std::vector<Region>>();
    bool truncated = false;
    Status st = walk_layout(s->model, file, [&](const Region& r) {
      if (ctx.cancelled()) return false;
      if (regions->size() >= kMaxRegions) {
        truncated = true;
        return false;
      }
      regions->push_back(r);
      return true;
    });
    std::string error = st.ok() ? std::string() : st.error().to_string();
    ctx.post(life.guard([regions, truncated, error, this] {
      regions_ = std::move(*regions);
      truncated_ = truncated;
      error_ = error;
      loading_ = false;
      loaded_ = true;
      select(0);
      if (pending_follow_ == kNone) return;
      const uint32_t t = pending_follow_;
      pending_follow_ = kNone;
      follow(t);   // its region here, or its file next (chosen while this one was loading)
    }));
  };
  job.on_cancel = life.guard([this] {
    loading_ = false;
    loaded_ = true;
    error_ = "cancelled (R reloads)";
  });
  host.worker().submit(std::move(job));
}

void LayoutPane::select(int64_t row) {
  list_.cursor.pos = row;
  list_.clamp(static_cast<int64_t>(regions_.size()));
  children_.clear();
  if (regions_.empty()) return;
  const size_t at = static_cast<size_t>(list_.cursor.pos);
  const Region& sel = regions_[at];
  for (size_t i = at + 1; i < regions_.size() && regions_[i].depth > sel.depth; ++i)
    if (regions_[i].depth == sel.depth + 1) children_.push_back(i);
  const uint64_t row_bytes = static_cast<uint64_t>(bytes_per_row_);
  hex_top_ = sel.offset / row_bytes * row_bytes;
}

bool LayoutPane::go_to_offset(uint64_t offset) {
  int64_t best = -1;
  for (size_t i = 0; i < regions_.size(); ++i) {
    const Region& r = regions_[i];
    if (r.offset > offset) break;
    if (offset < r.offset + r.size) best = static_cast<int64_t>(i);   // later rows are deeper
  }
  if (best < 0) return false;
  select(best);
  const uint64_t row_bytes = static_cast<uint64_t>(bytes_per_row_);
  hex_top_ = offset / row_bytes * row_bytes;
  return true;
}

void LayoutPane::open_block(uint32_t tensor, uint64_t block, PaneHost* host) {
  auto r = describe_block(session_->model, tensor, block);
  if (!r) {
    if (host) host->flash(r.error().message);
    return;
  }
  block_ = std::move(*r);
  block_tensor_ = tensor;
}

bool LayoutPane::enter(PaneHost& host) {
  if (regions_.empty()) return false;
  // The selection, or the nearest region above it in the tree that names a tensor (Enter on a
  // tensor info's name length works like Enter on the info).
  size_t at = static_cast<size_t>(list_.cursor.pos);
  const Tensor* t = session_->model.find(regions_[at].label);
  for (size_t i = at, depth = regions_[at].depth; !t && i-- > 0 && depth > 0;) {
    if (regions_[i].depth >= depth) continue;
    depth = regions_[i].depth;
    at = i;
    t = session_->model.find(regions_[i].label);
  }
  if (!t) return false;
  const Region& sel = regions_[at];
  if (is_data(sel.kind)) {
    open_block(static_cast<uint32_t>(t - session_->model.tensors.data()), 0, &host);
    return true;
  }
  // A tensor info or header entry: jump to the tensor's data.
  for (size_t i = 0; i < regions_.size(); ++i)
    if (is_data(regions_[i].kind) && regions_[i].label == sel.label) {
      select(static_cast<int64_t>(i));
      return true;
    }
  host.flash("its data is in another file (f: next file)");
  return true;
}

bool LayoutPane::act(Action action, PaneHost& host) {
  if (block_) {
    const uint64_t n = block_->n_blocks, b = block_->block;
    uint64_t next = b;
    switch (action) {
      case Action::back: block_.reset(); return true;
      case Action::up: next = b > 0 ? b - 1 : 0; break;
      case Action::down: next = b + 1 < n ? b + 1 : b; break;
      case Action::page_up: next = b > 16 ? b - 16 : 0; break;
      case Action::page_down: next = std::min(n - 1, b + 16); break;
      case Action::home: next = 0; break;
      case Action::end: next = n - 1; break;
      default: return false;
    }
    if (next != b) open_block(block_tensor_, next, &host);
    return true;
  }
  switch (action) {
    case Action::open: return enter(host);
    case Action::search: open_search(host); return true;
    case Action::search_next:
    case Action::search_prev:
      step_plain_search(
          host, search_, list_.cursor.pos, action == Action::search_next ? 1 : -1,
          [this](int64_t from, int dir) { return search(search_, from, dir); }, [this](int64_t r) { select(r); });
      return true;
    case Action::next_file:
      if (session_->model.files.size() < 2) return true;
      file_ = (file_ + 1) % static_cast<uint32_t>(session_->model.files.size());
      regions_.clear();
      loaded_ = false;
      list_.cursor = {};
      return true;
    case Action::goto_offset:
      host.prompt("offset 0x", "", [this, &host](const std::string& text, PromptEvent event) {
        if (event != PromptEvent::accept) return;
        std::string_view t = text;
        if (t.starts_with("0x") || t.starts_with("0X")) t.remove_prefix(2);
        uint64_t offset = 0;
        auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), offset, 16);
        if (ec != std::errc() || end != t.data() + t.size() || t.empty()) host.flash("not a hex offset");
        else if (!go_to_offset(offset)) host.flash(fmt::format("0x{:x} is past the end of the file", offset));
      });
      return true;
    default: break;
  }
  if (list_.act(action, static_cast<int64_t>(regions_.size()))) {
    select(list_.cursor.pos);
    return true;
  }
  return false;
}

void LayoutPane::click(int x, int y, PaneHost& host) {
  if (list_.click(y, static_cast<int64_t>(regions_.size()))) select(list_.cursor.pos);
}

void LayoutPane::wheel(int rows) {
  list_.wheel(rows, static_cast<int64_t>(regions_.size()));
  select(list_.cursor.pos);
}

std::string LayoutPane::position() const {
  if (!loaded_) return {};
  return list_.position("region", static_cast<int64_t>(regions_.size()));
}

std::string LayoutPane::state() const {
  std::string s = fmt::format("file {}/{}", file_ + 1, session_->model.files.size());
  if (truncated_) s += fmt::format(" · first {} regions", regions_.size());
  if (block_) s += fmt::format(" · block {}/{}", block_->block, block_->n_blocks);
  return s;
}

std::string LayoutPane::hints() const {
  return block_ ? "↑↓ block  Esc close" : "Enter data/block  / search  o offset  f file";
}

Role LayoutPane::byte_role(uint64_t offset) const {
  if (regions_.empty()) return Role::muted;
  const Region& sel = regions_[static_cast<size_t>(list_.cursor.pos)];
  if (offset < sel.offset || offset >= sel.offset + sel.size) return Role::muted;
  if (children_.empty()) return Role::selected;
  // Children are in file order: the last one starting at or before `offset`.
  auto it = std::upper_bound(children_.begin(), children_.end(), offset,
                             [&](uint64_t o, size_t i) { return o < regions_[i].offset; });
  if (it == children_.begin()) return Role::selected;
  const Region& child = regions_[*(it - 1)];
  return offset < child.offset + child.size ? kind_role(child.kind) : Role::selected;
}

void LayoutPane::draw(Canvas& c, const Rect& area) {
  c.fill(area, Role::normal);
  const SourceFile& f = session_->model.files[file_];
  const std::string head = fmt::format("{} ({}, {} bytes)", f.path,
                                       layout_format_name(detect_layout_format(session_->model, file_)), f.map.size());
  c.text(area.x, area.y, head, Role::header, area.w);
  const Rect body{area.x, area.y + 1, area.w, area.h - 1};
  if (body.h <= 0) return;
  if (!loaded_) {
    c.text(body.x, body.y, "reading the layout...", Role::muted, body.w);
    return;
  }
  // The walk's error has lines of its own under the tree and the bytes (wrapped, at most three).
  Rect rest = body;
  if (!error_.empty()) {
    auto lines = wrap_words(error_, static_cast<size_t>(std::max(10, body.w)));
    const int n = std::min<int>({static_cast<int>(lines.size()), 3, std::max(0, body.h - 2)});
    rest.h = body.h - n;
    for (int k = 0; k < n; ++k) c.text(body.x, rest.y + rest.h + k, lines[static_cast<size_t>(k)], Role::error, body.w);
  }
  Rect tree = rest, right = rest;
  if (rest.w >= kTreeBesideFrom) {
    tree.w = rest.w * 45 / 100;
    right.x = rest.x + tree.w + 1;
    right.w = rest.w - tree.w - 1;
    for (int y = rest.y; y < rest.y + rest.h; ++y) c.put(rest.x + tree.w, y, U'│', Role::border);
  } else {
    tree.h = std::max(1, rest.h / 2);
    right.y = rest.y + tree.h;
    right.h = rest.h - tree.h;
  }
  int bpr = 4;
  while (bpr * 2 * 4 + 9 <= right.w && bpr < 16) bpr *= 2;
  if (bpr != bytes_per_row_) {
    bytes_per_row_ = bpr;
    hex_top_ = hex_top_ / static_cast<uint64_t>(bpr) * static_cast<uint64_t>(bpr);
  }
  draw_tree(c, tree);
  if (block_) draw_block(c, right);
  else draw_hex(c, right);
}

void LayoutPane::draw_tree(Canvas& c, const Rect& a) {
  list_.page = std::max(1, a.h);
  if (regions_.empty())
    c.text(a.x + 1, a.y, error_.empty() ? "no regions" : "no regions (why: below)", Role::muted, a.w - 1);
  list_.clamp(static_cast<int64_t>(regions_.size()));
  const bool offsets = a.w >= 40;
  for (int row = 0; row < a.h; ++row) {
    const int64_t i = list_.cursor.top + row;
    if (i >= static_cast<int64_t>(regions_.size())) break;
    const Region& r = regions_[static_cast<size_t>(i)];
    const int y = a.y + row;
    int x = a.x;
    if (offsets) x += c.text(x, y, fmt::format("{:08x} ", r.offset), Role::muted, a.w);
    const int indent = std::min<int>(2 * r.depth, std::max(0, a.x + a.w - x - 8));
    x += indent;
    const std::string name = r.label.empty() ? std::string(region_kind_name(r.kind)) : r.label;
    x += c.text_middle(x, y, name, kind_role(r.kind), a.x + a.w - x);
    if (!r.value.empty() && x + 2 < a.x + a.w) c.text(x + 1, y, r.value, Role::muted, a.x + a.w - x - 1);
    if (i == list_.cursor.pos) c.restyle(a.x, y, a.w, Role::selected);
  }
}

void LayoutPane::draw_hex(Canvas& c, const Rect& a) {
  const uint64_t bpr = static_cast<uint64_t>(bytes_per_row_);
  const auto shown =
      read_shown(session_->model.files[file_].map.bytes(), hex_top_, bpr * static_cast<uint64_t>(std::max(0, a.h)));
  if (!shown) {   // the file shrank under the bytes on screen: say so where they were
    const auto lines = wrap_words(shown.error().to_string() + " (R reloads)", static_cast<size_t>(std::max(10, a.w)));
    for (int k = 0; k < a.h && k < static_cast<int>(lines.size()); ++k)
      c.text(a.x, a.y + k, lines[static_cast<size_t>(k)], Role::error, a.w);
    return;
  }
  const std::vector<uint8_t>& bytes = *shown;
  for (int row = 0; row < a.h; ++row) {
    const uint64_t rel = static_cast<uint64_t>(row) * bpr;
    if (rel >= bytes.size()) break;
    const uint64_t at = hex_top_ + rel;
    const int y = a.y + row;
    c.text(a.x, y, fmt::format("{:08x}", at), Role::muted, a.w);
    for (uint64_t k = 0; k < bpr && rel + k < bytes.size(); ++k) {
      const uint8_t b = bytes[rel + k];
      const Role role = byte_role(at + k);
      const int hx = a.x + 9 + static_cast<int>(3 * k);
      const int ax = a.x + 9 + static_cast<int>(3 * bpr) + static_cast<int>(k);
      if (hx + 2 <= a.x + a.w) c.text(hx, y, fmt::format("{:02x}", b), role, 2);
      if (ax < a.x + a.w) c.put(ax, y, b >= 0x20 && b < 0x7f ? static_cast<char32_t>(b) : U'.', role);
    }
  }
}

void LayoutPane::draw_block(Canvas& c, const Rect& a) {
  const BlockReport& b = *block_;
  int y = a.y;
  const int bottom = a.y + a.h;
  auto line = [&](const std::string& text, Role role) {
    if (y < bottom) c.text(a.x, y++, text, role, a.w);
  };
  line(fmt::format("{} {} block {}/{}: {} elements in {} bytes", b.name, b.type, b.block, b.n_blocks, b.block_elems,
                   b.block_bytes),
       Role::header);
  for (const FieldReport& f : b.fields) {
    if (y >= bottom) break;
    int x = a.x + c.text(a.x, y, fmt::format("{:<8}", f.name), field_role(f.role), a.w);
    x += c.text(x, y, fmt::format(" @{:#x} {}B ", f.offset, f.size), Role::muted, a.x + a.w - x);
    c.text(x, y, f.value.empty() ? f.meaning : f.value, Role::normal, a.x + a.w - x);
    ++y;
  }
  // The block's bytes, each coloured by its field (fields of other files are listed above only).
  const uint64_t bpr = static_cast<uint64_t>(bytes_per_row_);
  const uint64_t begin = b.fields.empty() ? 0 : b.fields.front().offset;
  uint64_t end = begin;
  for (const FieldReport& f : b.fields)
    if (f.file == b.file && f.offset == end) end += f.size;
  const uint64_t first = begin / bpr * bpr;
  const auto shown = read_shown(session_->model.files[b.file].map.bytes(), first, end - first);
  if (!shown) {
    line(shown.error().to_string(), Role::error);
    return;
  }
  const std::vector<uint8_t>& bytes = *shown;
  for (uint64_t at = first; at < end && y < bottom; at += bpr, ++y) {
    c.text(a.x, y, fmt::format("{:08x}", at), Role::muted, a.w);
    for (uint64_t k = 0; k < bpr && at - first + k < bytes.size(); ++k) {
      const uint64_t o = at + k;
      Role role = Role::muted;
      for (const FieldReport& f : b.fields)
        if (f.file == b.file && o >= f.offset && o < f.offset + f.size) role = field_role(f.role);
      const int hx = a.x + 9 + static_cast<int>(3 * k);
      if (hx + 2 <= a.x + a.w) c.text(hx, y, fmt::format("{:02x}", bytes[o - first]), role, 2);
    }
  }
}

}   // namespace akview::tui
