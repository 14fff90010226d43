// Pane 1, Tensors (tensors_pane.hpp).
#include "ui/tui/tensors_pane.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/decode/decode.hpp"
#include "core/remote/mirror.hpp"
#include "ui/text/format.hpp"
#include "ui/tui/text_search.hpp"

namespace akview::tui {
namespace {

Role type_role(TypeId type) {
  switch (type_info(type).kind) {   // one role per kind of type
    case TypeKind::floating: return Role::type_float;
    case TypeKind::block_quant:
    case TypeKind::composite: return Role::type_quant;
    default: return Role::type_other;
  }
}

std::string short_number(float v) { return fmt::format("{:.3g}", v); }

std::string base_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

const ColumnSpec& spec(Column c) { return column_specs()[static_cast<size_t>(c)]; }

// The width of format_shape's "[4096, 14336]", counted without formatting it.
int shape_text_width(std::span<const int64_t> shape) {
  int w = 2 + 2 * (shape.empty() ? 0 : static_cast<int>(shape.size()) - 1);
  for (int64_t d : shape) {
    if (d < 0) ++w;
    uint64_t v = d < 0 ? 0 - static_cast<uint64_t>(d) : static_cast<uint64_t>(d);
    do ++w;
    while (v /= 10);
  }
  return w;
}

}   // namespace

TensorsPane::TensorsPane(std::shared_ptr<ModelSession> session, std::shared_ptr<StatsPlan> plan,
                         std::function<void()> restart_stats)
    : session_(std::move(session)),
      plan_(std::move(plan)),
      restart_stats_(std::move(restart_stats)),
      table_(*session_) {
  seen_names_ = session_->names_version;
  // The type column is as wide as the longest type name this model uses (4 for "q4_k", 11 for
  // "f8_e4m3fnuz"), so narrow terminals keep room for names.
  // The shape column likewise: as wide as the longest shape (the title at least), so the names get
  // what a model of small shapes leaves.
  std::array<bool, static_cast<size_t>(TypeId::count_)> seen{};
  const Model& m = session_->model;
  shape_width_ = static_cast<int>(spec(Column::shape).title.size());
  for (const Tensor& t : m.tensors) {
    seen[static_cast<size_t>(t.type)] = true;
    shape_width_ = std::max(shape_width_, shape_text_width(m.shape(t)));
  }
  shape_width_ = std::min(shape_width_, spec(Column::shape).width);
  type_width_ = 4;
  for (size_t k = 0; k < seen.size(); ++k)
    if (seen[k]) type_width_ = std::max(type_width_, static_cast<int>(type_info(static_cast<TypeId>(k)).name.size()));
  type_width_ = std::min(type_width_, spec(Column::type).width);
}

int TensorsPane::column_width(Column c, const Layout& l) const {
  return c == Column::name ? l.name_width : fixed_width(c);
}

int TensorsPane::fixed_width(Column c) const {
  return c == Column::type ? type_width_ : c == Column::shape ? shape_width_ : spec(c).width;
}

TensorsPane::Layout TensorsPane::layout(int width) const {
  // Drop columns by priority until the name column has room (narrow terminals keep name, type, shape).
  const int min_name = std::clamp(width / 2, 16, 28);
  std::vector<Column> cols;
  for (const ColumnSpec& s : column_specs()) cols.push_back(s.id);
  auto used = [&] {
    int w = 0;
    for (Column c : cols)
      if (c != Column::name) w += fixed_width(c) + 1;
    return w;
  };
  while (cols.size() > 1 && width - used() < min_name) {
    auto worst = std::max_element(cols.begin(), cols.end(),
                                  [](Column a, Column b) { return spec(a).priority < spec(b).priority; });
    cols.erase(worst);
  }
  return {cols, std::max(1, width - used())};
}

uint32_t TensorsPane::selected_tensor() const {
  const auto& rows = table_.rows();
  if (rows.empty()) return kNone;
  const int64_t last = static_cast<int64_t>(rows.size()) - 1;
  uint32_t r = rows[static_cast<size_t>(std::clamp<int64_t>(list_.cursor.pos, 0, last))];
  return table_.is_group(r) ? kNone : r;
}

void TensorsPane::keep_selection(uint32_t tensor) {
  if (tensor != kNone)
    if (int64_t r = table_.row_of(tensor); r >= 0) list_.cursor.pos = r;
  list_.clamp(static_cast<int64_t>(table_.rows().size()));
}

bool TensorsPane::select_tensor(uint32_t tensor) {
  if (tensor == kNone || table_.row_of(tensor) < 0) return false;
  keep_selection(tensor);
  return true;
}

void TensorsPane::request_name_sort(PaneHost& host) {
  auto request = table_.take_name_sort_request();
  if (!request) return;
  const Lifeline::Link life = life_.link();   // the result lands on the UI thread, where the pane may be gone
  const bool canonical = request->canonical;
  const uint64_t version = request->names_version;
  host.worker().submit(
      Job{"sorting names",
          [this, life, canonical, version, session = session_, request = std::move(*request)](JobContext& ctx) {
            NameOrders orders = natural_name_orders(session->model, request);
            if (ctx.cancelled()) return;
            ctx.post(life.guard([this, canonical, version, orders = std::move(orders)]() mutable {
              const uint32_t t = selected_tensor();
              table_.install_name_orders(canonical, version, std::move(orders));
              keep_selection(t);
            }));
          },
          life.guard([this] {
            const uint32_t t = selected_tensor();
            table_.cancel_name_sort();   // Esc: the model's order
            keep_selection(t);
          }),
          /*urgent=*/true});
}

void TensorsPane::before_frame(PaneHost& host) {
  const bool names = session_->names_version != seen_names_;
  const bool values = session_->values_version != seen_values_;
  seen_names_ = session_->names_version;
  seen_values_ = session_->values_version;
  if (names || (values && table_.sorted_by_values())) {
    uint32_t t = selected_tensor();
    table_.refresh(names);
    keep_selection(t);
  }
  request_name_sort(host);
  // Rows on screen get their statistics first.
  std::vector<uint32_t> visible;
  const auto& rows = table_.rows();
  const int64_t top = list_.cursor.top;
  for (int64_t r = top; r < std::min<int64_t>(top + list_.page, static_cast<int64_t>(rows.size())); ++r)
    if (!table_.is_group(rows[static_cast<size_t>(r)])) visible.push_back(rows[static_cast<size_t>(r)]);
  plan_->set_visible(std::move(visible));
}

void TensorsPane::draw_row(Canvas& c, int x0, int y, const Layout& l, uint32_t row) {
  const Model& m = session_->model;
  if (table_.is_group(row)) {
    const auto& g = table_.group(row);
    std::string label = g.layer < 0 ? "outside layers" : fmt::format("layer {}", g.layer);
    c.fill(x0, y, width_, Role::group);
    c.text(x0, y,
           fmt::format("{} {}  · {} tensor{} · {}", g.folded ? "▸" : "▾", label, g.tensors, g.tensors == 1 ? "" : "s",
                       format_bytes(g.bytes)),
           Role::group, width_);
    return;
  }
  const Tensor& t = m.tensors[row];
  const bool companion = t.flags & kTensorCompanion;
  int x = x0;
  for (Column col : l.columns) {
    const int w = column_width(col, l);
    const ValueSummary* v = session_->value(row);
    auto stat = [&](float ValueSummary::*f) -> std::pair<std::string, Role> {
      if (companion) return {"", Role::muted};
      if (!v) return {"…", Role::muted};
      if (v->state != ValueSummary::State::done) return {"n/a", Role::muted};
      return {short_number(v->*f), Role::number};
    };
    std::string text;
    Role role = Role::normal;
    switch (col) {   // one cell per column
      case Column::name:
        text = companion ? "  ↳ " + std::string(t.name) : std::string(table_.display_name(row));
        role = companion                                               ? Role::muted
               : (t.flags & kTensorUnsupported) || !can_decode(t.type) ? Role::warn
                                                                       : Role::normal;
        break;
      case Column::type:
        text = std::string(type_info(t.type).name);
        role = type_role(t.type);
        break;
      case Column::shape: {
        auto s = m.shape(t);
        text = format_shape(std::vector<int64_t>(s.begin(), s.end()));
        break;
      }
      case Column::params:
        text = format_count(m.n_elements(t));
        role = Role::number;
        break;
      case Column::bytes:
        text = format_bytes(t.nbytes);
        role = Role::number;
        break;
      case Column::bpw:
        text = fmt::format("{:.2f}", table_.bits_per_weight(row));
        role = Role::number;
        break;
      case Column::file:
        text = t.file < m.files.size() ? base_name(m.files[t.file].path) : "";
        role = Role::muted;
        break;
      case Column::offset:
        text = format_offset(t.offset);
        role = Role::muted;
        break;
      case Column::min: std::tie(text, role) = stat(&ValueSummary::min); break;
      case Column::max: std::tie(text, role) = stat(&ValueSummary::max); break;
      case Column::std: std::tie(text, role) = stat(&ValueSummary::std); break;
      case Column::hist:
        if (!companion && v && v->state == ValueSummary::State::done)
          for (int k = 0; k < 8 && k < w; ++k) c.put(x + k, y, kSpark[v->spark[k]], Role::spark);
        else if (!companion) c.text(x, y, v ? "n/a" : "…", Role::muted, w);
        x += w + 1;
        continue;
      case Column::count_: break;
    }
    if (spec(col).right) c.text_right(x, y, w, text, role);
    else if (col == Column::name) c.text_middle(x, y, text, role, w);   // layer and role both stay visible
    else c.text(x, y, text, role, w);
    if (col == Column::name && !companion && search_.active()) highlight_match(c, x, y, w, text, search_.pattern());
    x += w + 1;
  }
}

void TensorsPane::draw(Canvas& c, const Rect& area) {
  width_ = area.w;
  if (detail_overlay_.open) {
    draw_detail(c, area);
    return;
  }
  const Layout l = layout(area.w);
  // A filter adds a totals line at the bottom: what the rows shown add up to.
  const bool totals = !table_.filter().empty() && area.h >= 4;
  list_.page = std::max(1, area.h - 1 - (totals ? 1 : 0));
  if (totals) draw_totals(c, Rect{area.x, area.y + area.h - 1, area.w, 1});
  const auto& rows = table_.rows();
  list_.clamp(static_cast<int64_t>(rows.size()));
  // Header: titles, the sort arrow, the column cursor.
  c.fill(area.x, area.y, area.w, Role::header);
  int x = area.x;
  for (Column col : l.columns) {
    const int w = column_width(col, l);
    std::string title(spec(col).title);
    if (col == Column::name) title = table_.show_canonical() ? "name (canonical)" : "name (native)";
    if (table_.sorted() && table_.sort_column() == col) title += table_.sort_descending() ? " ▼" : " ▲";
    const Role role = col == column_cursor_ ? Role::header_cursor : Role::header;
    c.fill(x, area.y, w, role);
    if (spec(col).right) c.text_right(x, area.y, w, title, role);
    else c.text(x, area.y, title, role, w);
    x += w + 1;
  }
  if (rows.empty()) {
    c.text(area.x + 1, area.y + 2, table_.filter().empty() ? "no tensors" : "no tensor matches the filter", Role::muted,
           area.w - 2);
    return;
  }
  for (int k = 0; k < list_.page; ++k) {
    int64_t r = list_.cursor.top + k;
    if (r >= static_cast<int64_t>(rows.size())) break;
    const int y = area.y + 1 + k;
    draw_row(c, area.x, y, l, rows[static_cast<size_t>(r)]);
    if (r == list_.cursor.pos) c.restyle(area.x, y, area.w, Role::selected);
  }
}

void TensorsPane::draw_totals(Canvas& c, const Rect& area) {
  const uint64_t all = table_.all_bytes();
  const double share = all ? 100.0 * static_cast<double>(table_.shown_bytes()) / static_cast<double>(all) : 0.0;
  const std::string pct = share > 0 && share < 1 ? "<1%" : fmt::format("{:.0f}%", share);
  const uint64_t n = table_.shown_units();
  c.fill(area.x, area.y, area.w, Role::header);
  c.text(area.x, area.y,
         fmt::format("shown: {} tensor{} · {} params · {} · {} of the model's bytes", n, n == 1 ? "" : "s",
                     format_count(table_.shown_parameters()), format_bytes(table_.shown_bytes()), pct),
         Role::header, area.w);
}

void TensorsPane::draw_detail(Canvas& c, const Rect& area) {
  detail_overlay_.draw_title(c, area, "tensor detail  (Esc closes)", static_cast<int64_t>(detail_.size()));
  draw_detail_lines(c, area.x, area.y + 1, area.w, detail_overlay_.view.page, std::min(14, area.w / 3), detail_,
                    detail_overlay_.view.top());
}

bool TensorsPane::act(Action action, PaneHost& host) {
  if (detail_overlay_.open) return detail_overlay_.act(action, static_cast<int64_t>(detail_.size()));
  const auto& rows = table_.rows();
  if (list_.act(action, static_cast<int64_t>(rows.size()))) return true;
  const Layout l = layout(width_);
  auto col_index = [&] {
    auto it = std::find(l.columns.begin(), l.columns.end(), column_cursor_);
    return it == l.columns.end() ? 0 : static_cast<int>(it - l.columns.begin());
  };
  switch (action) {   // the Tensors context of the key table
    case Action::fold: {
      // Grouped by layer: the layer the cursor is in (its header row or one of its tensors) folds,
      // and the cursor lands on its header. Not grouped: Space is the nav context's page down.
      if (!table_.grouping() || rows.empty()) return false;
      int64_t r = list_.cursor.pos;
      while (r > 0 && !table_.is_group(rows[static_cast<size_t>(r)])) --r;
      if (!table_.is_group(rows[static_cast<size_t>(r)])) return false;
      table_.toggle_fold(rows[static_cast<size_t>(r)]);
      list_.cursor.pos = r;
      list_.clamp(static_cast<int64_t>(table_.rows().size()));
      return true;
    }
    case Action::open: {
      if (rows.empty()) return true;
      uint32_t row = rows[static_cast<size_t>(list_.cursor.pos)];
      if (table_.is_group(row)) {
        table_.toggle_fold(row);
        list_.clamp(static_cast<int64_t>(table_.rows().size()));
      } else {
        detail_ = tensor_detail_lines(*session_, row);
        detail_overlay_.show();
      }
      return true;
    }
    case Action::column_left:
      column_cursor_ = l.columns[static_cast<size_t>(std::max(0, col_index() - 1))];
      return true;
    case Action::column_right:
      column_cursor_ =
          l.columns[static_cast<size_t>(std::min<int>(static_cast<int>(l.columns.size()) - 1, col_index() + 1))];
      return true;
    case Action::sort_asc:
    case Action::sort_desc: {
      uint32_t t = selected_tensor();
      table_.set_sort(column_cursor_, action == Action::sort_desc);
      keep_selection(t);
      return true;
    }
    case Action::filter: open_filter(host); return true;
    case Action::search: search_.open(host); return true;
    case Action::search_next:
    case Action::search_prev: search_.next(host, action == Action::search_next ? 1 : -1); return true;
    case Action::group_layers: {
      uint32_t t = selected_tensor();
      table_.set_grouping(!table_.grouping());
      keep_selection(t);
      return true;
    }
    case Action::toggle_canonical: {
      uint32_t t = selected_tensor();
      table_.set_show_canonical(!table_.show_canonical());
      session_->show_canonical = table_.show_canonical();   // Groups and Compute name tensors alike
      table_.refresh(true);
      keep_selection(t);
      return true;
    }
    case Action::restart_stats: {
      // A remote model's statistics read every tensor: say how much that fetches, start on a second s.
      const uint64_t missing =
          remote::is_remote_model(session_->model) ? remote::unfetched_tensor_bytes(session_->model) : 0;
      if (missing > 0 && !stats_fetch_armed_) {
        stats_fetch_armed_ = true;
        host.flash(fmt::format("statistics read every tensor: {} to fetch from the server; s again starts",
                               format_bytes(missing)));
        return true;
      }
      stats_fetch_armed_ = false;
      restart_stats_();
      return true;
    }
    default: return false;
  }
}

void TensorsPane::open_filter(PaneHost& host) {
  const std::string before = table_.filter();
  const uint32_t t = selected_tensor();
  host.prompt(std::string(kFilterPrompt), before, [this, before, t, &host](const std::string& text, PromptEvent ev) {
    const Status set = table_.set_filter(ev == PromptEvent::cancel ? before : text);
    if (!set) host.flash(set.error().message);   // on the prompt line while typing, in the status bar after
    keep_selection(t);
  });
}

Search::Target TensorsPane::search_target() {
  Search::Target t;
  t.size = [this] { return static_cast<int64_t>(table_.rows().size()); };
  t.current = [this] { return table_.rows().empty() ? -1 : list_.cursor.pos; };
  t.matches = [this](int64_t i, const Pattern& p) {
    const uint32_t row = table_.rows()[static_cast<size_t>(i)];
    return !table_.is_group(row) && p.matches(table_.display_name(row));
  };
  t.go = [this](int64_t i) {
    list_.cursor.pos = i;
    list_.clamp(static_cast<int64_t>(table_.rows().size()));
  };
  t.version = [this] {
    return table_.rows_version() * 2 + (table_.show_canonical() ? 1 : 0) + (session_->names_version << 40);
  };
  return t;
}

void TensorsPane::click(int x, int y, PaneHost&) {
  if (!detail_overlay_.open) list_.click(y, static_cast<int64_t>(table_.rows().size()));
}

void TensorsPane::wheel(int rows) {
  if (detail_overlay_.open) detail_overlay_.view.wheel(rows, static_cast<int64_t>(detail_.size()));
  else list_.wheel(rows, static_cast<int64_t>(table_.rows().size()));
}

std::string TensorsPane::position() const {
  if (detail_overlay_.open) return "detail";
  return list_.position("row", static_cast<int64_t>(table_.rows().size()));
}

std::string TensorsPane::state() const {
  std::string s;
  if (table_.sorted())
    s += fmt::format("sort {} {}{}", spec(table_.sort_column()).title, table_.sort_descending() ? "▼" : "▲",
                     table_.name_sort_pending() ? " (sorting…)" : "");
  if (!table_.filter().empty())
    s += fmt::format("{}filter {} ({} of {})", s.empty() ? "" : " · ", table_.filter(), table_.shown_tensors(),
                     session_->model.tensors.size());
  if (table_.grouping()) s += s.empty() ? "by layer" : " · by layer";
  if (search_.active()) s += fmt::format("{}{}", s.empty() ? "" : " · ", search_.status());
  return s;
}

std::string TensorsPane::hints() const {
  return detail_overlay_.open ? "Esc close" : "Enter detail  [ ] sort  \\ filter  / search  z layers  c names";
}

}   // namespace akview::tui
