// Pane 8, Diff (diff_pane.hpp).
#include "ui/tui/diff_pane.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "ui/text/format.hpp"

namespace akview::tui {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::string_view kDash = "—";

int64_t rows_of(const Model& m, const Tensor& t) {
  auto s = m.shape(t);
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < s.size(); ++i) rows *= s[i];
  return rows;
}

std::string shape_text(const Model& m, uint32_t index, int64_t expert) {
  if (index == kNone) return std::string(kDash);
  auto s = m.shape(m.tensors[index]);
  std::vector<int64_t> v(s.begin() + (expert >= 0 && !s.empty() ? 1 : 0), s.end());
  return fmt::format("[{}]", fmt::join(v, ", "));
}

std::string type_text(const Model& m, uint32_t index) {
  return index == kNone ? std::string(kDash) : std::string(type_info(m.tensors[index].type).name);
}
Role type_role(const Model& m, uint32_t index) {
  return index != kNone && type_info(m.tensors[index].type).kind == TypeKind::floating ? Role::type_float
                                                                                       : Role::type_quant;
}

// What a row says beside its numbers, and whether that is a finding (flagged, on top).
struct RowStatus {
  std::string text;
  bool problem = false;
};
RowStatus row_status(const DiffRow& r, bool cancelled) {
  const TensorDiff& d = r.diff;
  if (d.b == kNone) return {"only in A", true};
  if (d.a == kNone) return {"only in B", true};
  if (d.shape_differs) return {"shapes differ", true};
  if (!r.valued) return {cancelled ? "not compared (Esc)" : "…", false};
  if (!d.has_values) return {d.value_problem.empty() ? "not compared" : d.value_problem, true};
  if (std::isnan(d.error.rel_rmse)) return {"NaN in the values", true};
  return {d.note.empty() ? std::string() : std::string(d.note), false};
}

std::string shape_cell(const Model& a, const Model& b, const TensorDiff& d) {
  const std::string sa = shape_text(a, d.a, d.a_expert), sb = shape_text(b, d.b, d.b_expert);
  return d.shape_differs ? sa + " ≠ " + sb : d.a != kNone ? sa : sb;
}

// The table's columns, each as wide as its widest cell; the tensor's key takes what the others
// leave (at least kKeyWant columns, or the longest key), the status column what is left after the
// key. Narrow panes drop the columns with the highest `drop` first.
enum ColumnId { kTypeA, kTypeB, kShape, kRelRms, kCosine, kMaxAbs, kStatus, kColumnCount };
struct Column {
  std::string_view title;
  int drop;
  bool right;
};
constexpr Column kColumns[kColumnCount] = {
    {"A type", 3, false}, {"B type", 4, false}, {"shape", 5, false}, {"rel rms", 0, true},
    {"cosine", 1, true},  {"max abs", 2, true}, {"", 6, false},
};
constexpr int kKeyWant = 28, kStatusMin = 14, kShapeMax = 28;

struct Layout {
  std::vector<int> columns;   // ColumnId, in display order
  int widths[kColumnCount] = {};
  int key_w = 0;
};

Layout layout_for(int w, int key_w, int type_a_w, int type_b_w, int shape_w) {
  Layout l;
  const int title = static_cast<int>(kColumns[kTypeA].title.size());
  l.widths[kTypeA] = std::max(type_a_w, title) + 2;
  l.widths[kTypeB] = std::max(type_b_w, title) + 2;
  l.widths[kShape] = std::min(std::max(shape_w, 5), kShapeMax) + 2;
  l.widths[kRelRms] = 10;
  l.widths[kCosine] = 11;
  l.widths[kMaxAbs] = 10;
  l.widths[kStatus] = kStatusMin;
  const int key_natural = std::max(key_w + 1, 8);
  const int key_floor = std::min(key_natural, kKeyWant);
  l.columns = {kTypeA, kTypeB, kShape, kRelRms, kCosine, kMaxAbs, kStatus};
  auto used = [&] {
    int sum = 0;
    for (int c : l.columns) sum += l.widths[c];
    return sum;
  };
  while (!l.columns.empty() && key_floor + used() > w) {
    auto worst = std::max_element(l.columns.begin(), l.columns.end(),
                                  [](int a, int b) { return kColumns[a].drop < kColumns[b].drop; });
    l.columns.erase(worst);
  }
  const int rest = w - used();
  l.key_w = std::max(1, std::min(key_natural, rest));
  if (std::find(l.columns.begin(), l.columns.end(), kStatus) != l.columns.end()) l.widths[kStatus] += rest - l.key_w;
  else l.key_w = std::max(1, rest);
  return l;
}

std::string error_text(double v, const char* format) {
  return std::isnan(v) ? std::string("NaN") : fmt::format(fmt::runtime(format), v);
}

}   // namespace

DiffPane::SideStats side_stats(const Model& model, uint32_t index, int64_t expert, int64_t expert_rows,
                               const std::atomic<bool>* cancel) {
  DiffPane::SideStats s;
  if (index == kNone) return s.problem = "missing", s;
  const Tensor& t = model.tensors[index];
  auto shape = model.shape(t);
  const int64_t cols = shape.empty() ? 1 : shape.back();
  const int64_t row0 = expert >= 0 ? expert * expert_rows : 0;
  const int64_t rows = expert >= 0 ? expert_rows : rows_of(model, t);
  const int64_t per_chunk = std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(1, cols));
  std::vector<float> buf;
  double sum = 0, sum_sq = 0;
  s.min = INFINITY;
  s.max = -INFINITY;
  for (int64_t r = 0; r < rows; r += per_chunk) {
    if (cancel && cancel->load()) return s.problem = "cancelled", s;
    const int64_t end = std::min(rows, r + per_chunk);
    buf.resize(static_cast<size_t>((end - r) * cols));
    if (auto st = decode_tensor_rows(model, index, row0 + r, row0 + end, buf.data()); !st.ok())
      return s.problem = st.error().to_string(), s;
    for (float v : buf) {
      s.min = std::min<double>(s.min, v);
      s.max = std::max<double>(s.max, v);
      sum += v;
      sum_sq += static_cast<double>(v) * v;
    }
  }
  s.elements = static_cast<uint64_t>(rows * cols);
  if (s.elements == 0) return s.min = s.max = 0, s;
  const double n = static_cast<double>(s.elements);
  s.mean = sum / n;
  s.std = std::sqrt(std::max(0.0, sum_sq / n - s.mean * s.mean));
  return s;
}

DiffPane::DiffPane(std::shared_ptr<ModelSession> a, std::shared_ptr<ModelSession> b,
                   std::function<void(uint32_t, PaneHost&)> run_pair)
    : a_(std::move(a)), b_(std::move(b)), run_pair_(std::move(run_pair)) {}

DiffPane::~DiffPane() = default;

void DiffPane::before_frame(PaneHost& host) {
  if (!started_) start(host);
}

// One job: the pairs (names, shapes, types: quick) land first, then each pair's value error, posted
// in batches; it steps aside for urgent jobs and goes on where it stopped.
void DiffPane::start(PaneHost& host) {
  started_ = computing_ = true;
  cancelled_ = false;
  const Lifeline::Link life = life_.link();
  struct State {
    std::vector<TensorDiff> rows;
    bool listed = false;
    size_t next = 0;
  };
  auto state = std::make_shared<State>();
  const bool relist = listed_;   // after Esc: the pairs are here; compute what is missing
  if (relist) {
    state->listed = true;
    for (const DiffRow& r : rows_) state->rows.push_back(r.diff);
  }
  std::vector<uint8_t> done;
  for (const DiffRow& r : rows_) done.push_back(r.valued);
  host.worker().submit(Job{"diff",
                           [this, life, a = a_, b = b_, state, done = std::move(done)](JobContext& ctx) {
                             if (!state->listed) {
                               DiffReport report = diff_models(a->model, b->model, DiffOptions{},
                                                               [&](const TensorDiff& d) { state->rows.push_back(d); });
                               state->listed = true;
                               Widths widths;
                               for (const TensorDiff& d : state->rows) {
                                 widths.key = std::max(widths.key, display_width(d.key));
                                 widths.type_a = std::max(widths.type_a, display_width(type_text(a->model, d.a)));
                                 widths.type_b = std::max(widths.type_b, display_width(type_text(b->model, d.b)));
                                 widths.shape =
                                     std::max(widths.shape, display_width(shape_cell(a->model, b->model, d)));
                               }
                               ctx.post(life.guard([this, rows = state->rows, report, widths] {
                                 rows_.clear();
                                 for (const TensorDiff& d : rows) rows_.push_back(DiffRow{d, false});
                                 only_a_ = report.only_a;
                                 only_b_ = report.only_b;
                                 shape_changes_ = report.shape_changes;
                                 to_value_ = 0;
                                 for (const DiffRow& r : rows_) to_value_ += diff_rank(r) == DiffRank::waiting;
                                 widths_ = widths;
                                 listed_ = true;
                                 resort(nullptr);
                               }));
                             }
                             DiffOptions options;
                             options.cancel = &ctx.cancel();
                             std::vector<std::pair<size_t, TensorDiff>> batch;
                             auto flush = [&] {
                               if (batch.empty()) return;
                               ctx.post(life.guard([this, results = std::move(batch)] {
                                 std::vector<uint32_t> changed;
                                 for (const auto& [i, d] : results)
                                   if (i < rows_.size() && !rows_[i].valued) {
                                     rows_[i] = DiffRow{d, true};
                                     changed.push_back(static_cast<uint32_t>(i));
                                     ++valued_;
                                   }
                                 resort(&changed);
                               }));
                               batch.clear();
                             };
                             auto last_post = Clock::now();
                             const size_t n = state->rows.size();
                             for (; state->next < n && !ctx.cancelled(); ++state->next) {
                               if (ctx.should_yield()) {
                                 flush();
                                 ctx.requeue();
                                 return;
                               }
                               const size_t i = state->next;
                               TensorDiff& d = state->rows[i];
                               if ((i < done.size() && done[i]) || d.a == kNone || d.b == kNone || d.shape_differs)
                                 continue;
                               auto err = compare_values(a->model, b->model, d, options);
                               if (ctx.cancelled()) break;
                               if (err) {
                                 d.has_values = true;
                                 d.error = *err;
                               } else {
                                 d.value_problem = err.error().to_string();
                               }
                               batch.emplace_back(i, d);
                               ctx.progress(static_cast<double>(i + 1) / static_cast<double>(n));
                               if (Clock::now() - last_post > std::chrono::milliseconds(50)) {
                                 flush();
                                 last_post = Clock::now();
                               }
                             }
                             flush();
                             ctx.post(life.guard([this] { computing_ = false; }));
                           },
                           life.guard([this] {
                             computing_ = false;
                             cancelled_ = true;
                           })});
}

// The order is diff_order's; `changed` (rows that just got their errors) is merged in, or, without
// it, everything is sorted again.
void DiffPane::resort(const std::vector<uint32_t>* changed) {
  // The row the user moved to stays selected as rows move; until then the cursor stays on the worst.
  const auto& order = order_.order();
  const int64_t at = list_.cursor.pos;
  const uint32_t keep = moved_ && at < static_cast<int64_t>(order.size()) ? order[static_cast<size_t>(at)] : kNone;
  if (changed) order_.merge(rows_, *changed);
  else order_.rebuild(rows_);
  if (keep != kNone)
    if (auto it = std::find(order.begin(), order.end(), keep); it != order.end()) list_.cursor.pos = it - order.begin();
  list_.clamp(static_cast<int64_t>(order.size()));
}

std::vector<const TensorDiff*> DiffPane::shown() const {
  std::vector<const TensorDiff*> out;
  for (uint32_t i : order_.order()) out.push_back(&rows_[i].diff);
  return out;
}

std::string DiffPane::side_name(const Model& m, uint32_t index, int64_t expert) const {
  if (index == kNone) return std::string(kDash);
  return std::string(m.tensors[index].name) + (expert >= 0 ? fmt::format("[{}]", expert) : "");
}

void DiffPane::open_detail(PaneHost& host) {
  const auto& order = order_.order();
  if (list_.cursor.pos >= static_cast<int64_t>(order.size())) return;
  detail_overlay_.show();
  detail_row_ = order[static_cast<size_t>(list_.cursor.pos)];
  detail_a_.reset();
  detail_b_.reset();
  const TensorDiff d = rows_[detail_row_].diff;
  // An expert's slice spans as many rows as the other side's tensor.
  const int64_t a_rows = d.a != kNone ? rows_of(a_->model, a_->model.tensors[d.a]) : 0;
  const int64_t b_rows = d.b != kNone ? rows_of(b_->model, b_->model.tensors[d.b]) : 0;
  const Lifeline::Link life = life_.link();
  host.worker().submit(Job{"diff detail",
                           [this, life, a = a_, b = b_, d, a_rows, b_rows, row = detail_row_](JobContext& ctx) {
                             SideStats sa = side_stats(a->model, d.a, d.a_expert, b_rows, &ctx.cancel());
                             SideStats sb = side_stats(b->model, d.b, d.b_expert, a_rows, &ctx.cancel());
                             ctx.post(life.guard([this, sa, sb, row] {
                               if (!detail_overlay_.open || detail_row_ != row) return;
                               detail_a_ = sa;
                               detail_b_ = sb;
                             }));
                           },
                           {},
                           /*urgent=*/true});
}

bool DiffPane::act(Action action, PaneHost& host) {
  if (detail_overlay_.open) return detail_overlay_.act(action, static_cast<int64_t>(detail_count_));
  const auto& order = order_.order();
  const auto n = static_cast<int64_t>(order.size());
  switch (action) {
    case Action::open: open_detail(host); return true;
    case Action::run_pair: {
      if (list_.cursor.pos >= n) return true;
      const TensorDiff& d = rows_[order[static_cast<size_t>(list_.cursor.pos)]].diff;
      if (d.a == kNone) {
        host.flash("only in B: nothing of A to run");
        return true;
      }
      run_pair_(d.a, host);
      return true;
    }
    case Action::restart_stats:
      if (!computing_) {
        started_ = false;
        start(host);
      }
      return true;
    default:
      if (!list_.act(action, n)) return false;
      moved_ = true;
      return true;
  }
}

void DiffPane::click(int /*x*/, int y, PaneHost& /*host*/) {
  if (!detail_overlay_.open && list_.click(y, static_cast<int64_t>(order_.order().size()))) moved_ = true;
}

void DiffPane::wheel(int rows) {
  if (detail_overlay_.open) return detail_overlay_.view.wheel(rows, static_cast<int64_t>(detail_count_));
  list_.wheel(rows, static_cast<int64_t>(order_.order().size()));
  moved_ = true;
}

void DiffPane::draw(Canvas& c, const Rect& area) {
  c.fill(area, Role::normal);
  if (area.w <= 0 || area.h <= 0) return;
  if (detail_overlay_.open) return draw_detail(c, area);
  int y = area.y;
  // Which model is the reference (A is in the title bar), then what differs.
  // Both paths, each cut in the middle to its share of the width when they do not fit whole.
  std::string both = fmt::format("A {} · B {}", a_->model.path, b_->model.path);
  if (display_width(both) > area.w) {
    const int room = std::max(2, area.w - 7);   // "A ", " · ", "B "
    const int a_w = std::min(display_width(a_->model.path), std::max(1, room / 2));
    both = fmt::format("A {} · B {}", elide_middle(a_->model.path, a_w),
                       elide_middle(b_->model.path, std::max(1, room - a_w)));
  }
  c.text(area.x, y, both, Role::key, area.w);
  if (++y >= area.y + area.h) return;
  std::string counts = cancelled_ ? "cancelled before the pairs were listed (s starts again)" : "pairing tensors…";
  if (listed_) {
    counts = fmt::format("{} pairs · errors {}/{}", rows_.size(), valued_, to_value_);
    if (cancelled_ && valued_ < to_value_) counts += " (Esc: s goes on)";
    const std::pair<size_t, const char*> findings[] = {
        {only_a_, "only in A"}, {only_b_, "only in B"}, {shape_changes_, "shape changes"}};
    bool any = false;
    for (const auto& [n, what] : findings)
      if (n) counts += fmt::format(" · {} {}", n, what), any = true;
    if (!any) counts += " · none missing, no shape changes";
  }
  c.text(area.x, y, counts, Role::muted, area.w);
  if (++y >= area.y + area.h) return;
  const Layout l = layout_for(area.w, widths_.key, widths_.type_a, widths_.type_b, widths_.shape);
  c.fill(area.x, y, area.w, Role::header);
  const std::string_view key_title = l.key_w > 20 ? "tensor (worst first)" : "tensor";
  c.text(area.x, y, key_title, Role::header, l.key_w - 1);
  int cx = area.x + l.key_w;
  for (int col : l.columns) {
    const int w = l.widths[col] - 1;
    if (kColumns[col].right) c.text_right(cx, y, w, kColumns[col].title, Role::header);
    else c.text(cx, y, kColumns[col].title, Role::header, w);
    cx += l.widths[col];
  }
  const auto& order = order_.order();
  list_.page = std::max(1, area.y + area.h - y - 1);
  list_.first_y = y + 1 - area.y;
  list_.clamp(static_cast<int64_t>(order.size()));
  for (int k = 0; k < list_.page; ++k) {
    const int64_t i = list_.cursor.top + k;
    if (i >= static_cast<int64_t>(order.size())) break;
    const DiffRow& r = rows_[order[static_cast<size_t>(i)]];
    const TensorDiff& d = r.diff;
    const RowStatus st = row_status(r, cancelled_);
    const int ry = y + 1 + k;
    c.text(area.x, ry, elide_middle(d.key, l.key_w - 1), st.problem ? Role::warn : Role::normal, l.key_w - 1);
    cx = area.x + l.key_w;
    const bool v = r.valued && d.has_values;
    for (int col : l.columns) {
      const int w = l.widths[col] - 1;
      switch (col) {
        case kTypeA: c.text(cx, ry, type_text(a_->model, d.a), type_role(a_->model, d.a), w); break;
        case kTypeB: c.text(cx, ry, type_text(b_->model, d.b), type_role(b_->model, d.b), w); break;
        case kShape:
          c.text(cx, ry, shape_cell(a_->model, b_->model, d), d.shape_differs ? Role::error : Role::muted, w);
          break;
        case kRelRms:
          c.text_right(cx, ry, w, v ? error_text(d.error.rel_rmse, "{:.3g}") : std::string(kDash), Role::number);
          break;
        case kCosine:
          c.text_right(cx, ry, w, v ? error_text(d.error.cosine, "{:.6f}") : std::string(kDash), Role::number);
          break;
        case kMaxAbs:
          c.text_right(cx, ry, w, v ? error_text(d.error.max_abs, "{:.3g}") : std::string(kDash), Role::number);
          break;
        case kStatus: c.text(cx, ry, st.text, st.problem ? Role::error : Role::muted, w); break;
      }
      cx += l.widths[col];
    }
    if (i == list_.cursor.pos) c.restyle(area.x, ry, area.w, Role::selected);
  }
  if (listed_ && order.empty() && y + 1 < area.y + area.h) c.text(area.x, y + 1, "(no tensors)", Role::muted, area.w);
}

// name, type, shape and the value statistics of each side, then the error of A against B.
std::vector<DiffPane::DetailLine> DiffPane::detail_lines() const {
  const DiffRow& r = rows_[detail_row_];
  const TensorDiff& d = r.diff;
  std::vector<DetailLine> out;
  auto side = [&](std::string label, std::string a, std::string b, Role role = Role::normal) {
    out.push_back({std::move(label), std::move(a), std::move(b), role, false});
  };
  auto pair = [&](std::string label, std::string value, Role role = Role::number) {
    out.push_back({std::move(label), std::move(value), {}, role, true});
  };
  side("name", side_name(a_->model, d.a, d.a_expert), side_name(b_->model, d.b, d.b_expert));
  side("type", type_text(a_->model, d.a), type_text(b_->model, d.b));
  side("shape", shape_text(a_->model, d.a, d.a_expert), shape_text(b_->model, d.b, d.b_expert),
       d.shape_differs ? Role::error : Role::normal);
  auto stat = [&](const std::optional<SideStats>& s, double SideStats::*field) {
    if (!s) return std::string("computing…");
    if (!s->problem.empty()) return s->problem;
    return fmt::format("{:.6g}", (*s).*field);
  };
  side("min", stat(detail_a_, &SideStats::min), stat(detail_b_, &SideStats::min), Role::number);
  side("max", stat(detail_a_, &SideStats::max), stat(detail_b_, &SideStats::max), Role::number);
  side("mean", stat(detail_a_, &SideStats::mean), stat(detail_b_, &SideStats::mean), Role::number);
  side("std", stat(detail_a_, &SideStats::std), stat(detail_b_, &SideStats::std), Role::number);
  auto bytes = [](const Model& m, uint32_t i) {
    return i == kNone ? std::string(kDash) : format_bytes(m.tensors[i].nbytes);
  };
  side("bytes", bytes(a_->model, d.a), bytes(b_->model, d.b));
  out.push_back({"A against B", {}, {}, Role::key, true});
  if (r.valued && d.has_values) {
    pair("rel rms", error_text(d.error.rel_rmse, "{:.4g}"));
    pair("cosine", error_text(d.error.cosine, "{:.7f}"));
    pair("max abs", error_text(d.error.max_abs, "{:.4g}"));
    pair("rms", error_text(d.error.rmse, "{:.4g}"));
    pair("elements", fmt::format("{}", d.error.elements));
  } else {
    const RowStatus st = row_status(r, cancelled_);
    pair("error", st.text, st.problem ? Role::error : Role::muted);
  }
  if (!d.note.empty()) pair("expect", std::string(d.note), Role::warn);
  return out;
}

void DiffPane::draw_detail(Canvas& c, const Rect& area) {
  const TensorDiff& d = rows_[detail_row_].diff;
  const int label_w = std::min(12, area.w / 4), col_w = std::max(1, (area.w - label_w) / 2);
  auto line = [&](int y, const DetailLine& l) {
    c.text(area.x, y, l.label, Role::key, (l.pair && l.a.empty() ? area.w : label_w - 1));
    if (l.pair) return void(c.text(area.x + label_w, y, l.a, l.role, area.w - label_w));
    c.text(area.x + label_w, y, l.a, l.role, col_w - 1);
    c.text(area.x + label_w + col_w, y, l.b, l.role, area.w - label_w - col_w);
  };
  // The pair's key and the two models stay on top; the lines under them scroll.
  int y = area.y;
  c.text(area.x, y++, d.key, Role::header, area.w);
  // Paths cut in the middle keep their file names.
  if (y < area.y + area.h)
    line(y++, {"", "A " + elide_middle(a_->model.path, col_w - 3),
               "B " + elide_middle(b_->model.path, area.w - label_w - col_w - 2), Role::muted, false});
  const std::vector<DetailLine> lines = detail_lines();
  detail_count_ = lines.size();
  detail_overlay_.view.fit(static_cast<int64_t>(lines.size()), area.y + area.h - y);
  for (int k = 0; k < detail_overlay_.view.page && y < area.y + area.h; ++k) {
    const int64_t i = detail_overlay_.view.top() + k;
    if (i >= static_cast<int64_t>(lines.size())) break;
    line(y++, lines[static_cast<size_t>(i)]);
  }
}

std::string DiffPane::position() const {
  if (detail_overlay_.open) {
    if (detail_count_ <= static_cast<size_t>(detail_overlay_.view.page)) return "detail";
    const ScrollView& v = detail_overlay_.view;
    const int64_t last = std::min<int64_t>(v.top() + v.page, static_cast<int64_t>(detail_count_));
    return fmt::format("detail {}-{}/{}", detail_overlay_.view.top() + 1, last, detail_count_);
  }
  const auto n = order_.order().size();
  return list_.position("row", static_cast<int64_t>(n));
}

std::string DiffPane::state() const {
  if (computing_) return fmt::format("comparing values {}/{}", valued_, to_value_);
  return cancelled_ && (!listed_ || valued_ < to_value_) ? "cancelled" : "worst first";
}

std::string DiffPane::hints() const {
  if (!detail_overlay_.open) return "Enter side by side  x run in Compute  s again";
  return detail_count_ > static_cast<size_t>(detail_overlay_.view.page) ? "Esc close  ↑↓ scroll" : "Esc close";
}

}   // namespace akview::tui
