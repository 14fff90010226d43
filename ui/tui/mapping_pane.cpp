// The Mapping pane (mapping_pane.hpp).
#include "ui/tui/mapping_pane.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "ui/batch/commands.hpp"
#include "ui/tui/text_search.hpp"

namespace akview::tui {
namespace {

// Beyond this many entries a filter is applied on Enter rather than on every keystroke.
constexpr size_t kLiveFilterMax = 200000;
constexpr int kConfigBesideFrom = 140;   // wide panes put the config beside the table
constexpr int kConfigWidth = 48;

// Maps up to this many entries are sorted on the UI thread (a few ms); bigger ones on the worker.
constexpr size_t kSyncSortMax = 50000;

// Entry indices in natural order of the native name, or of the canonical name with the unmapped
// ones after (by native name).
std::vector<uint32_t> sorted_entries(const Model& model, const NameMap& map, bool by_canonical) {
  std::vector<uint32_t> order(map.entries.size());
  std::iota(order.begin(), order.end(), 0u);
  auto native = [&](uint32_t e) { return model.tensors[map.entries[e].tensor].name; };
  if (by_canonical) {
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const NameMapEntry ea = map.entries[a];
      const NameMapEntry eb = map.entries[b];
      if (ea.mapped != eb.mapped) return ea.mapped;
      return ea.mapped ? natural_less(ea.canonical, eb.canonical) : natural_less(native(a), native(b));
    });
  } else {
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return natural_less(native(a), native(b)); });
  }
  return order;
}

std::string number_text(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:g}", v);
}

// The table's columns at a width: narrower tables drop the note, then the role.
struct Columns {
  int native_w, canonical_w, role_w, note_w;
};
Columns columns_for(int w) {
  if (w >= 100) {
    const int native = w * 34 / 100, canonical = w * 30 / 100, role = 16;
    return {native, canonical, role, w - native - canonical - role};
  }
  if (w >= 60) {
    const int role = 14, native = (w - role) / 2;
    return {native, w - role - native, role, 0};
  }
  return {w / 2, w - w / 2, 0, 0};
}

}   // namespace

MappingPane::MappingPane(std::shared_ptr<ModelSession> session) : session_(std::move(session)) {}

std::optional<NameMapEntry> MappingPane::entry_at(uint64_t row) const {
  if (!session_->names || row >= view_.size()) return std::nullopt;
  return session_->names->entries[view_[row]];
}

const std::vector<uint32_t>& MappingPane::order() {
  const NameMap& map = *session_->names;
  std::vector<uint32_t>& cache = by_canonical_ ? by_canonical_order_ : by_native_;
  if (cache.size() == map.entries.size()) return cache;
  if (map.entries.size() <= kSyncSortMax) {
    cache = sorted_entries(session_->model, map, by_canonical_);
    return cache;
  }
  // A big map is sorted on the worker (request_sort); meanwhile the rows come in model order.
  if (model_order_.size() != map.entries.size()) {
    model_order_.resize(map.entries.size());
    std::iota(model_order_.begin(), model_order_.end(), 0u);
  }
  return model_order_;
}

void MappingPane::request_sort(PaneHost& host) {
  if (!session_->names || session_->names->entries.size() <= kSyncSortMax || sort_cancelled_) return;
  const bool canonical = by_canonical_;
  const std::vector<uint32_t>& cache = canonical ? by_canonical_order_ : by_native_;
  if (cache.size() == session_->names->entries.size() || sorting_[canonical]) return;
  sorting_[canonical] = true;
  const Lifeline::Link life = life_.link();   // results land on the UI thread, where the pane may be gone
  std::shared_ptr<const NameMap> names = session_->names;
  host.worker().submit(Job{canonical ? "sorting canonical names" : "sorting native names",
                           [this, life, names, canonical, session = session_](JobContext& ctx) {
                             std::vector<uint32_t> order = sorted_entries(session->model, *names, canonical);
                             if (ctx.cancelled()) return;
                             ctx.post(life.guard([this, names, canonical, order = std::move(order)]() mutable {
                               sorting_[canonical] = false;
                               if (session_->names != names) return;   // a reload replaced the map meanwhile
                               (canonical ? by_canonical_order_ : by_native_) = std::move(order);
                               refresh();
                             }));
                           },
                           life.guard([this, canonical] {
                             sorting_[canonical] = false;
                             sort_cancelled_ = true;   // Esc: stay in model order until the sort is asked for again
                           }),
                           /*urgent=*/true});
}

void MappingPane::refresh() {
  const int64_t at = list_.cursor.pos;
  const bool on_entry = session_->names && static_cast<uint64_t>(at) < view_.size();
  const uint32_t keep = on_entry ? view_[static_cast<size_t>(at)] : kNone;
  ++view_version_;
  view_.clear();
  if (!session_->names) return;
  const NameMap& map = *session_->names;
  const Model& model = session_->model;
  for (uint32_t e : order()) {
    const NameMapEntry entry = map.entries[e];
    if (unmapped_only_ && entry.mapped) continue;
    if (filter_re_) {
      const std::string_view native = model.tensors[entry.tensor].name;
      const bool hit = std::regex_search(native.begin(), native.end(), *filter_re_) ||
                       (entry.mapped && std::regex_search(entry.canonical.begin(), entry.canonical.end(), *filter_re_));
      if (hit == filter_invert_) continue;
    }
    view_.push_back(e);
  }
  list_.cursor.pos = 0;
  if (keep != kNone)   // stay on the same tensor when it is still listed
    if (auto it = std::find(view_.begin(), view_.end(), keep); it != view_.end()) list_.cursor.pos = it - view_.begin();
  list_.clamp(static_cast<int64_t>(view_.size()));
}

void MappingPane::sync() {
  if (!session_->names || built_for_ == session_->names.get()) return;
  built_for_ = session_->names.get();   // a new map (first build or a reload): indices start over
  ++view_version_;
  view_.clear();
  by_native_.clear();
  by_canonical_order_.clear();
  sort_cancelled_ = false;
  refresh();
}

void MappingPane::before_frame(PaneHost& host) {
  sync();
  request_sort(host);
}

Status MappingPane::set_filter(const std::string& text) {
  filter_ = text;
  filter_error_.clear();
  const bool invert = !text.empty() && text[0] == '!';
  const std::string pattern = invert ? text.substr(1) : text;
  if (pattern.empty()) {
    filter_re_.reset();
    filter_invert_ = false;
    return Status();
  }
  try {
    std::regex re(pattern, std::regex::ECMAScript | std::regex::optimize);   // (emplace would empty it on a throw)
    filter_re_ = std::move(re);
    filter_invert_ = invert;
  } catch (const std::regex_error& e) {
    filter_error_ = bad_pattern_message(pattern, e.what());   // the last good regex stays while the user types
    return make_error(ErrorCode::usage, "", kNoOffset, filter_error_);
  }
  return Status();
}

void MappingPane::load_config() {
  if (config_loaded_) return;
  config_loaded_ = true;
  auto config = extract_config(session_->model);
  if (!config) {
    config_.push_back({"config", config.error().to_string(), "", Role::error});
    return;
  }
  const ModelConfig& c = *config;
  if (!c.arch.empty()) config_.push_back({"arch", c.arch, c.arch_source, Role::string});
  for (const ConfigFieldRow& row : config_fields()) {
    const ConfigValue& v = c.*row.field;
    if (v.present) config_.push_back({std::string(row.name), number_text(v.value), v.source, Role::number});
  }
  if (!c.sliding_window_pattern.empty())
    config_.push_back({"swa pattern", c.sliding_window_pattern, c.sliding_window_pattern_source, Role::string});
  if (!c.quantization.empty()) config_.push_back({"quant", c.quantization, c.quantization_source, Role::string});
  if (config_.empty()) config_.push_back({"config", "none found", "", Role::muted});
}

void MappingPane::draw(Canvas& canvas, const Rect& area) {
  canvas.fill(area, Role::normal);
  if (area.w <= 0 || area.h <= 0) return;
  if (!session_->names) {
    list_.page = std::max(1, area.h - 1);
    canvas.text(area.x, area.y, "building the name map…", Role::muted, area.w);
    return;
  }
  sync();
  load_config();
  Rect table = area, config = area;
  if (area.w >= kConfigBesideFrom) {
    config.w = kConfigWidth;
    table.w = area.w - kConfigWidth - 1;
    config.x = area.x + table.w + 1;
    for (int y = area.y; y < area.y + area.h; ++y) canvas.put(area.x + table.w, y, U'│', Role::border);
  } else {
    // Below the table: at least three lines, at most a third of the pane (the table keeps the rest).
    const int rows = static_cast<int>(config_.size()) + 1;
    config.h = std::min(rows, std::max(3, area.h / 3));
    table.h = area.h - config.h;
    config.y = area.y + table.h;
  }
  draw_table(canvas, table);
  draw_config(canvas, config);
}

void MappingPane::draw_table(Canvas& canvas, const Rect& area) {
  if (area.h <= 0) return;
  list_.page = std::max(1, area.h - 1);
  const Columns c = columns_for(area.w);
  const int x_can = area.x + c.native_w, x_role = x_can + c.canonical_w, x_note = x_role + c.role_w;
  canvas.fill(area.x, area.y, area.w, Role::header);
  canvas.text(area.x, area.y, "native", Role::header, c.native_w - 1);
  canvas.text(x_can, area.y, "canonical", Role::header, c.canonical_w - 1);
  if (c.role_w) canvas.text(x_role, area.y, "role", Role::header, c.role_w - 1);
  if (c.note_w) canvas.text(x_note, area.y, "note", Role::header, c.note_w);
  if (view_.empty()) {
    canvas.text(area.x, area.y + 1, "(no tensors match)", Role::muted, area.w);
    return;
  }
  list_.clamp(static_cast<int64_t>(view_.size()));
  const Model& model = session_->model;
  for (int k = 0; k < list_.page; ++k) {
    const int64_t row = list_.cursor.top + k;
    if (row >= static_cast<int64_t>(view_.size())) break;
    const int y = area.y + 1 + k;
    const NameMapEntry& e = session_->names->entries[view_[static_cast<size_t>(row)]];
    const std::string_view native = model.tensors[e.tensor].name;
    canvas.text_middle(area.x, y, native, e.mapped ? Role::normal : Role::warn, c.native_w - 1);
    if (e.mapped) canvas.text_middle(x_can, y, e.canonical, Role::key, c.canonical_w - 1);
    else canvas.text(x_can, y, "unmapped", Role::warn, c.canonical_w - 1);
    if (c.role_w) canvas.text(x_role, y, e.role, Role::type_other, c.role_w - 1);
    if (c.note_w) canvas.text(x_note, y, e.note, Role::muted, c.note_w);
    if (row == list_.cursor.pos) canvas.restyle(area.x, y, area.w, Role::selected);
    if (search_.active()) {
      highlight_match(canvas, area.x, y, c.native_w - 1, native, search_.pattern());
      if (e.mapped) highlight_match(canvas, x_can, y, c.canonical_w - 1, e.canonical, search_.pattern());
    }
  }
}

void MappingPane::draw_config(Canvas& canvas, const Rect& area) {
  if (area.h <= 0 || area.w <= 0) return;
  canvas.fill(area.x, area.y, area.w, Role::header);
  canvas.text(area.x, area.y, "config (value · source)", Role::header, area.w);
  const int name_w = area.w >= 60 ? 13 : 9;
  const int value_w = area.w >= 60 ? 16 : 10;   // the source gets the rest: it names the key
  for (int k = 0; k + 1 < area.h && k < static_cast<int>(config_.size()); ++k) {
    const ConfigLine& line = config_[static_cast<size_t>(k)];
    const int y = area.y + 1 + k;
    canvas.text(area.x, y, line.name, Role::key, name_w - 1);
    canvas.text(area.x + name_w, y, line.value, line.role, value_w - 1);
    canvas.text(area.x + name_w + value_w, y, line.source, Role::muted, area.w - name_w - value_w);
  }
}

Search::Target MappingPane::search_target() {
  Search::Target t;
  t.size = [this] { return static_cast<int64_t>(view_.size()); };
  t.current = [this] { return view_.empty() ? -1 : list_.cursor.pos; };
  t.matches = [this](int64_t row, const Pattern& p) {
    const auto e = entry_at(static_cast<uint64_t>(row));
    return e && (p.matches(session_->model.tensors[e->tensor].name) || (e->mapped && p.matches(e->canonical)));
  };
  t.go = [this](int64_t row) {
    list_.cursor.pos = row;
    list_.clamp(static_cast<int64_t>(view_.size()));
  };
  t.version = [this] { return view_version_; };
  return t;
}

void MappingPane::start_filter(PaneHost& host) {
  const std::string before = filter_;
  host.prompt("filter (regex, ! inverts)", filter_, [this, before, &host](const std::string& text, PromptEvent event) {
    const bool big = session_->names && session_->names->entries.size() > kLiveFilterMax;
    if (event == PromptEvent::edit && big) return;   // a million regex matches per key: wait for Enter
    // Esc restores the filter as it was (its error, if any, shows in the state again, not flashed).
    const Status set = set_filter(event == PromptEvent::cancel ? before : text);
    if (!set && event != PromptEvent::cancel) host.flash(set.error().message);
    refresh();
  });
}

bool MappingPane::act(Action action, PaneHost& host) {
  if (!session_->names) return list_.act(action, 0);
  sync();
  switch (action) {
    case Action::unmapped_only:
      unmapped_only_ = !unmapped_only_;
      refresh();
      return true;
    case Action::toggle_canonical:
      by_canonical_ = !by_canonical_;
      sort_cancelled_ = false;
      request_sort(host);
      refresh();
      return true;
    case Action::filter: start_filter(host); return true;
    case Action::search: search_.open(host); return true;
    case Action::search_next:
    case Action::search_prev: search_.next(host, action == Action::search_next ? 1 : -1); return true;
    default: return list_.act(action, static_cast<int64_t>(view_.size()));
  }
}

void MappingPane::click(int /*x*/, int y, PaneHost& /*host*/) {
  list_.click(y, static_cast<int64_t>(view_.size()));   // not on the column header, or the config below the table
}

void MappingPane::wheel(int rows) { list_.wheel(rows, static_cast<int64_t>(view_.size())); }

std::string MappingPane::position() const {
  if (view_.empty()) return {};
  return list_.position("row", static_cast<int64_t>(view_.size()));
}

std::string MappingPane::state() const {
  if (!session_->names) return "building the name map";
  std::string out = fmt::format("{} unmapped", session_->names->unmapped.size());
  if (unmapped_only_) out += " · unmapped only";
  if (!filter_.empty()) out += filter_error_.empty() ? fmt::format(" · filter {}", filter_) : " · " + filter_error_;
  out += by_canonical_ ? " · sort canonical" : " · sort native";
  if (sorting_[by_canonical_]) out += " (sorting…)";
  if (search_.active()) out += " · " + search_.status();
  return out;
}

std::string MappingPane::hints() const { return "u unmapped  \\ filter  / search  c sort"; }

}   // namespace akview::tui
