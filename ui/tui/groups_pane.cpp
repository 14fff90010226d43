// The Groups pane (groups_pane.hpp): a window of rows' groups computed on the worker, drawn as a
// table, heatmaps and histograms; the step-through of the group under the cursor on Enter.
#include "ui/tui/groups_pane.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/decode/decode.hpp"
#include "core/tensor_view.hpp"
#include "ui/batch/explain_report.hpp"

namespace akview::tui {
namespace {

constexpr char32_t kShade[5] = {U'·', U'░', U'▒', U'▓', U'█'};   // 0, then quarters of [smallest, largest] magnitude

// The magnitude range of a heatmap (non-zero, finite values only).
struct MagnitudeRange {
  float lo = 0, hi = 0;
  void add(float v) {
    const float a = std::fabs(v);
    if (!(a > 0) || !std::isfinite(a)) return;
    lo = lo > 0 ? std::min(lo, a) : a;
    hi = std::max(hi, a);
  }
  char32_t shade(float v) const {
    const float a = std::fabs(v);
    if (!(a > 0) || !std::isfinite(a)) return kShade[0];
    const float span = hi - lo;
    return kShade[1 + (span > 0 ? std::min(3, static_cast<int>((a - lo) / span * 4.0f)) : 3)];
  }
};

std::string num(float v) { return fmt::format("{:.4g}", v); }

// Eighths of the largest bin, one cell per bin.
void draw_spark(Canvas& c, int x, int y, int w, const std::vector<uint64_t>& bins) {
  uint64_t peak = 0;
  for (uint64_t b : bins) peak = std::max(peak, b);
  for (size_t i = 0; i < bins.size() && static_cast<int>(i) < w; ++i)
    c.put(x + static_cast<int>(i), y, kSpark[peak == 0 || bins[i] == 0 ? 0 : 1 + (bins[i] * 7) / peak], Role::spark);
}

}   // namespace

GroupWindow compute_group_window(const Model& model, uint32_t tensor, int64_t row_begin) {
  GroupWindow w;
  w.tensor = tensor;
  w.requested_row = row_begin;
  const Tensor& t = model.tensors[tensor];
  if (!has_groups(t.type) || (t.flags & kTensorUnsupported)) {
    w.problem = fmt::format("{} is {}: no quantization groups (pick a quantized tensor in 1 Tensors)", t.name,
                            type_info(t.type).name);
    return w;
  }
  auto view = make_tensor_view(model, t);
  if (!view) {
    w.problem = view.error().to_string();
    return w;
  }
  w.n_rows = view->n_rows;
  w.row_begin = std::clamp<int64_t>(row_begin, 0, std::max<int64_t>(0, view->n_rows - 1));
  w.row_end = std::min(view->n_rows, w.row_begin + kGroupWindowRows);
  auto groups = list_groups(*view, w.row_begin, w.row_end);
  if (!groups) {
    w.problem = groups.error().to_string();
    return w;
  }
  w.groups = std::move(*groups);
  w.groups_per_row = w.row_end > w.row_begin
                         ? static_cast<uint32_t>(w.groups.size() / static_cast<size_t>(w.row_end - w.row_begin))
                         : 0;
  std::vector<float> values(static_cast<size_t>((w.row_end - w.row_begin) * view->n_cols));
  if (!decode_rows(*view, w.row_begin, w.row_end, values.data()).ok()) return w;
  bool any = false;
  for (float v : values) {
    if (!std::isfinite(v)) continue;
    w.lo = any ? std::min(w.lo, v) : v;
    w.hi = any ? std::max(w.hi, v) : v;
    any = true;
  }
  w.value_hist.assign(kValueBins, 0);
  const float span = w.hi - w.lo;
  for (float v : values) {
    if (!std::isfinite(v)) continue;
    const size_t bin =
        span > 0 ? std::min(kValueBins - 1, static_cast<size_t>((v - w.lo) / span * kValueBins)) : kValueBins / 2;
    ++w.value_hist[bin];
  }
  return w;
}

std::vector<StepLine> step_through_lines(const Model& model, uint32_t tensor, int64_t row, int64_t col, int width) {
  std::vector<StepLine> out;
  const size_t wrap = static_cast<size_t>(std::max(10, width - 5));
  auto r = make_explain_report(model, ExplainQuery{std::string(model.tensors[tensor].name), row, col});
  if (!r) {
    out.push_back({r.error().to_string(), Role::error});
    return out;
  }
  const GroupExplanation& e = r->explanation;
  out.push_back({fmt::format("{} {} [{}, {}]: group of {}, columns {}..{}", r->name, r->type, e.row, e.col, e.group_n,
                             e.group_col, e.group_col + e.group_n - 1),
                 Role::key});
  out.push_back({fmt::format("bytes @{:#x} in {} ({} bytes)", e.bytes_offset, r->file, e.bytes.size()), Role::muted});
  const size_t per_line = std::max<size_t>(4, static_cast<size_t>(std::max(12, width - 4)) / 3);
  for (size_t i = 0; i < e.bytes.size(); i += per_line) {
    std::string hex;
    for (size_t k = i; k < std::min(e.bytes.size(), i + per_line); ++k)
      hex += fmt::format("{}{:02x}", k == i ? "" : " ", e.bytes[k]);
    out.push_back({"  " + hex, Role::number});
  }
  int n = 0;
  auto add_step = [&](const ExplainStep& s) {
    out.push_back({fmt::format("{}. {}", ++n, s.label), Role::header});
    for (auto& line : wrap_words(s.formula, wrap)) out.push_back({"    " + line, Role::normal});
    if (!s.values.empty())
      for (auto& line : wrap_words("= " + step_values_line(s.values, 64), wrap))
        out.push_back({"    " + line, Role::number});
  };
  for (const auto& s : e.steps) add_step(s);
  std::vector<double> values(e.values.begin(), e.values.end());
  add_step({fmt::format("values (columns {}..{})", e.group_col, e.group_col + e.group_n - 1), "", values});
  const ExplainStep family = family_step(e);
  out.push_back({family.label, Role::header});
  for (auto& line : wrap_words(family.formula, wrap)) out.push_back({"    " + line, Role::normal});
  return out;
}

GroupsPane::GroupsPane(std::shared_ptr<ModelSession> session, std::function<uint32_t()> selected_tensor)
    : session_(std::move(session)), selected_(std::move(selected_tensor)) {}

void GroupsPane::before_frame(PaneHost& host) {
  const uint32_t t = selected_ ? selected_() : kNone;
  if (t != want_tensor_) {
    want_tensor_ = t;
    want_row_ = 0;
    list_.cursor = {};
    steps_overlay_.open = false;
    cancelled_ = false;
  }
  if (t == kNone || pending_ || cancelled_) return;
  if (window_ && window_->tensor == t && window_->requested_row == want_row_) return;
  pending_ = true;
  const Lifeline::Link life = life_.link();
  host.worker().submit(
      Job{"groups",
          [this, life, session = session_, t, row = want_row_](JobContext& ctx) {
            auto w = std::make_shared<const GroupWindow>(compute_group_window(session->model, t, row));
            if (ctx.cancelled()) return;
            ctx.post(life.guard([this, w] {
              pending_ = false;
              window_ = w;
              if (jump_to_end_) list_.cursor.pos = static_cast<int64_t>(w->groups.size()) - 1;
              jump_to_end_ = false;
              list_.clamp(static_cast<int64_t>(w->groups.size()));
            }));
          },
          life.guard([this] {
            pending_ = false;
            cancelled_ = true;
          }),
          /*urgent=*/true});   // the pane (and keys typed meanwhile) wait for it: before the statistics
}

bool GroupsPane::ready() const {
  const uint32_t t = selected_ ? selected_() : kNone;
  if (steps_overlay_.open || t == kNone || (cancelled_ && t == want_tensor_)) return true;
  return !pending_ && window_ && window_->tensor == t && window_->requested_row == want_row_;
}

void GroupsPane::open_steps() {
  if (!window_ || window_->groups.empty()) return;
  const int64_t last = static_cast<int64_t>(window_->groups.size()) - 1;
  const QuantGroup& g = window_->groups[static_cast<size_t>(std::clamp<int64_t>(list_.cursor.pos, 0, last))];
  steps_tensor_ = window_->tensor;
  steps_row_ = g.row;
  steps_col_ = g.col;
  steps_width_ = 0;   // laid out at the next draw, at its width
  steps_overlay_.show();
}

bool GroupsPane::act(Action action, PaneHost& host) {
  if (steps_overlay_.open) return steps_overlay_.act(action, static_cast<int64_t>(steps_.size()));
  if (action == Action::open) {
    open_steps();
    return true;
  }
  if (!window_ || window_->groups.empty()) return false;
  const int64_t count = static_cast<int64_t>(window_->groups.size());
  // Past either end of the window: the next or previous rows, computed on the worker.
  if ((action == Action::down || action == Action::page_down) && list_.cursor.pos == count - 1 &&
      window_->row_end < window_->n_rows) {
    want_row_ = window_->row_end;
    list_.cursor = {};
    return true;
  }
  if ((action == Action::up || action == Action::page_up) && list_.cursor.pos == 0 && window_->row_begin > 0) {
    want_row_ = std::max<int64_t>(0, window_->row_begin - kGroupWindowRows);
    jump_to_end_ = true;
    return true;
  }
  // G / End and g / Home: the tensor's last and first group, moving the window there.
  if (action == Action::end && window_->row_end < window_->n_rows) {
    want_row_ = std::max<int64_t>(0, window_->n_rows - kGroupWindowRows);
    jump_to_end_ = true;
    return true;
  }
  if (action == Action::home && window_->row_begin > 0) {
    want_row_ = 0;
    list_.cursor = {};
    return true;
  }
  return list_.act(action, count);
}

void GroupsPane::wheel(int rows) {
  if (steps_overlay_.open) return steps_overlay_.view.wheel(rows, static_cast<int64_t>(steps_.size()));
  if (window_) list_.wheel(rows, static_cast<int64_t>(window_->groups.size()));
}

std::string GroupsPane::position() const {
  if (steps_overlay_.open) return fmt::format("line {}/{}", steps_overlay_.view.top() + 1, steps_.size());
  if (!window_ || window_->groups.empty()) return {};
  return fmt::format("group {}/{} · rows {}..{} of {}", list_.cursor.pos + 1, window_->groups.size(),
                     window_->row_begin, window_->row_end - 1, window_->n_rows);
}

std::string GroupsPane::hints() const { return steps_overlay_.open ? "Esc close" : "Enter step-through"; }

void GroupsPane::draw(Canvas& c, const Rect& area) {
  if (area.h < 2 || area.w < 10) return;
  if (steps_overlay_.open) return draw_steps(c, area);
  const uint32_t t = selected_ ? selected_() : kNone;
  if (t == kNone) {
    c.text(area.x + 1, area.y + 1, "No tensor selected: pick one in 1 Tensors", Role::muted, area.w - 2);
    return;
  }
  const Tensor& tensor = session_->model.tensors[t];
  c.fill(area.x, area.y, area.w, Role::header);
  std::string head = fmt::format("{}  {}", session_->shown_name(t), type_info(tensor.type).name);
  if (window_ && window_->tensor == t && window_->problem.empty())
    head += fmt::format("  rows {}..{} of {} · {} groups of {} per row", window_->row_begin, window_->row_end - 1,
                        window_->n_rows, window_->groups_per_row,
                        window_->groups.empty() ? 0 : window_->groups.front().n_cols);
  c.text(area.x, area.y, head, Role::header, area.w);
  if (!window_ || window_->tensor != t) {
    c.text(area.x + 1, area.y + 1,
           cancelled_ ? "cancelled (select another tensor to compute again)" : "computing groups…", Role::muted,
           area.w - 2);
    return;
  }
  if (!window_->problem.empty()) {
    c.text(area.x + 1, area.y + 1, window_->problem, Role::muted, area.w - 2);
    return;
  }
  const Rect body{area.x, area.y + 1, area.w, area.h - 1};
  if (area.w >= 110) {
    draw_table(c, Rect{body.x, body.y, 70, body.h});
    draw_maps(c, Rect{body.x + 72, body.y, body.w - 72, body.h});
  } else if (body.h >= 14) {
    const int table_h = body.h / 2;
    draw_table(c, Rect{body.x, body.y, body.w, table_h});
    draw_maps(c, Rect{body.x, body.y + table_h, body.w, body.h - table_h});
  } else {
    draw_table(c, body);
  }
}

void GroupsPane::draw_table(Canvas& c, const Rect& area) {
  // Columns that fit: row, col, scale, [bias], [min, max], levels.
  const bool wide = area.w >= 67, mid = area.w >= 44;
  std::string header = fmt::format("{:>6} {:>6} {:>9}", "row", "col", "scale");
  if (mid) header += fmt::format(" {:>9}", "bias");
  if (wide) header += fmt::format(" {:>9} {:>9} {:>4}", "min", "max", "n");
  header += fmt::format(" {:>8}", "levels");
  c.text(area.x, area.y, header, Role::header, area.w);
  list_.page = std::max(1, area.h - 1);
  const auto& groups = window_->groups;
  list_.clamp(static_cast<int64_t>(groups.size()));
  for (int k = 0; k < list_.page; ++k) {
    const int64_t i = list_.cursor.top + k;
    if (i >= static_cast<int64_t>(groups.size())) break;
    const QuantGroup& g = groups[static_cast<size_t>(i)];
    std::string line = fmt::format("{:>6} {:>6} {:>9}", g.row, g.col, num(g.scale));
    if (mid) line += fmt::format(" {:>9}", num(g.bias));
    if (wide) line += fmt::format(" {:>9} {:>9} {:>4}", num(g.value_min), num(g.value_max), g.n_cols);
    line += g.levels_total ? fmt::format(" {:>8}", fmt::format("{}/{}", g.levels_used, g.levels_total))
                           : fmt::format(" {:>8}", fmt::format("{} vals", g.levels_used));
    const int y = area.y + 1 + k;
    const bool selected = i == list_.cursor.pos;
    if (selected) c.fill(area.x, y, area.w, Role::selected);
    c.text(area.x, y, line, selected ? Role::selected : Role::number, area.w);
  }
}

void GroupsPane::draw_maps(Canvas& c, const Rect& area) {
  const GroupWindow& w = *window_;
  if (area.h < 4 || w.groups_per_row == 0) return;
  const int label_w = 6;
  const int cols = std::min<int>(static_cast<int>(w.groups_per_row), area.w - label_w);
  const int64_t n_rows = w.row_end - w.row_begin;
  bool has_bias = false;
  MagnitudeRange scales, biases;
  for (const auto& g : w.groups) {
    scales.add(g.scale);
    biases.add(g.bias);
    has_bias = has_bias || g.bias != 0;
  }
  // Lines: 2 histograms at the bottom; per heatmap a title, its rows and a legend.
  const int hist_lines = area.h >= 10 ? 2 : 0;
  const int maps = has_bias && area.h - hist_lines >= 10 ? 2 : 1;
  const int per_map = (area.h - hist_lines) / maps;
  const int map_rows = static_cast<int>(std::min<int64_t>(n_rows, per_map - 2));
  const int64_t cursor_row = w.groups.empty() ? -1 : w.groups[static_cast<size_t>(list_.cursor.pos)].row;
  const int64_t cursor_group = w.groups.empty() ? -1 : list_.cursor.pos % w.groups_per_row;
  // Keep the cursor's row in view.
  const int64_t first =
      std::clamp<int64_t>(cursor_row - w.row_begin - map_rows + 1, 0, std::max<int64_t>(0, n_rows - map_rows));
  for (int m = 0; m < maps; ++m) {
    const bool bias = m == 1;
    const MagnitudeRange& range = bias ? biases : scales;
    int y = area.y + m * per_map;
    c.text(
        area.x, y++,
        fmt::format(
            "{} · rows x groups{}", bias ? "|bias| (min)" : "|scale|",
            cols < static_cast<int>(w.groups_per_row) ? fmt::format(" 0..{} of {}", cols - 1, w.groups_per_row) : ""),
        Role::header, area.w);
    for (int r = 0; r < map_rows && r + first < n_rows; ++r, ++y) {
      const int64_t row = w.row_begin + first + r;
      c.text(area.x, y, fmt::format("{:>5}", row), Role::muted, label_w);
      for (int g = 0; g < cols; ++g) {
        const QuantGroup& q = w.groups[static_cast<size_t>((first + r) * w.groups_per_row + g)];
        const bool at_cursor = row == cursor_row && g == cursor_group;
        c.put(area.x + label_w + g, y, range.shade(bias ? q.bias : q.scale), at_cursor ? Role::selected : Role::number);
      }
    }
    c.text(area.x, y, fmt::format("· 0  ░ ▒ ▓ █ quarters of {}..{}", num(range.lo), num(range.hi)), Role::muted,
           area.w);
  }
  if (hist_lines == 0) return;
  int y = area.y + area.h - 2;
  const std::string vlabel = fmt::format("values [{}, {}] ", num(w.lo), num(w.hi));
  const int used = c.text(area.x, y, vlabel, Role::muted, area.w);
  draw_spark(c, area.x + used, y, area.w - used, w.value_hist);
  ++y;
  const uint32_t levels = w.groups.front().levels_total;
  if (levels == 0 || levels > 256) {
    c.text(area.x, y, "levels: lattice codebook (grid points, not levels)", Role::muted, area.w);
    return;
  }
  // How many of the type's levels (codes 0..levels-1) each group uses: 1 to all of them.
  std::vector<uint64_t> used_hist(levels, 0);
  for (const auto& g : w.groups) ++used_hist[std::clamp<uint32_t>(g.levels_used, 1, levels) - 1];
  const std::string llabel = fmt::format("levels used per group (1..{} of codes 0..{}) ", levels, levels - 1);
  const int lw = c.text(area.x, y, llabel, Role::muted, area.w);
  draw_spark(c, area.x + lw, y, area.w - lw, used_hist);
}

void GroupsPane::draw_steps(Canvas& c, const Rect& area) {
  if (steps_width_ != area.w) {
    steps_ = step_through_lines(session_->model, steps_tensor_, steps_row_, steps_col_, area.w);
    steps_width_ = area.w;
  }
  steps_overlay_.draw_title(c, area, "step-through  (Esc closes)", static_cast<int64_t>(steps_.size()));
  for (int k = 0; k < steps_overlay_.view.page; ++k) {
    const int64_t i = steps_overlay_.view.top() + k;
    if (i >= static_cast<int64_t>(steps_.size())) break;
    const StepLine& line = steps_[static_cast<size_t>(i)];
    c.text(area.x + 1, area.y + 1 + k, line.text, line.role, area.w - 1);
  }
}

}   // namespace akview::tui
