// Pane 8, Diff (diff_pane.hpp).
#include "ui/tui/diff_pane.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "ui/batch/printers.hpp"

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
  return index != kNone && type_info(m.tensors[index].type).kind == TypeKind::floating ? Role::type_float : Role::type_quant;
}

// What a row says when it has no error numbers, and whether that is a finding (flagged, on top).
struct RowStatus {
  std::string text;
  bool problem = false;
};
RowStatus row_status(const TensorDiff& d, bool valued, bool cancelled) {
  if (d.b == kNone) return {"only in A", true};
  if (d.a == kNone) return {"only in B", true};
  if (d.shape_differs) return {"shapes differ", true};
  if (!valued) return {cancelled ? "not compared (Esc)" : "…", false};
  if (!d.has_values) return {d.value_problem.empty() ? "not compared" : d.value_problem, true};
  return {d.note.empty() ? std::string() : std::string(d.note), false};
}

// The table's columns; the tensor's key takes what the others leave. Narrow panes drop the columns
// with the highest `drop` first.
struct Column {
  std::string_view title;
  int width, drop;
  bool right;
};
enum ColumnId { kTypeA, kTypeB, kShape, kRelRms, kCosine, kMaxAbs, kStatus, kColumnCount };
constexpr Column kColumns[kColumnCount] = {
    {"A type", 11, 3, false}, {"B type", 11, 4, false}, {"shape", 16, 5, false}, {"rel rms", 10, 0, true},
    {"cosine", 11, 1, true},  {"max abs", 10, 2, true},  {"", 16, 6, false},
};
constexpr int kKeyMin = 14;

std::vector<int> columns_for(int w) {
  std::vector<int> shown(kColumnCount);
  std::iota(shown.begin(), shown.end(), 0);
  auto used = [&] {
    int sum = kKeyMin;
    for (int c : shown) sum += kColumns[c].width;
    return sum;
  };
  while (!shown.empty() && used() > w) {
    auto worst = std::max_element(shown.begin(), shown.end(), [](int a, int b) { return kColumns[a].drop < kColumns[b].drop; });
    shown.erase(worst);
  }
  return shown;
}

}  // namespace

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

DiffPane::DiffPane(std::shared_ptr<ModelSession> a, std::shared_ptr<ModelSession> b, std::function<void(uint32_t, PaneHost&)> run_pair)
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
  std::weak_ptr<bool> alive = alive_;
  struct State {
    std::vector<TensorDiff> rows;
    bool listed = false;
    size_t next = 0;
  };
  auto state = std::make_shared<State>();
  const bool relist = listed_;   // after Esc: the pairs are here; compute what is missing
  if (relist) {
    state->listed = true;
    for (const Row& r : rows_) state->rows.push_back(r.diff);
  }
  std::vector<uint8_t> done;
  for (const Row& r : rows_) done.push_back(r.valued);
  host.worker().submit(Job{
      "diff",
      [this, alive, a = a_, b = b_, state, done = std::move(done)](JobContext& ctx) {
        if (!state->listed) {
          DiffReport report = diff_models(a->model, b->model, DiffOptions{}, [&](const TensorDiff& d) { state->rows.push_back(d); });
          state->listed = true;
          ctx.post([this, alive, rows = state->rows, report] {
            if (alive.expired()) return;
            rows_.clear();
            for (const TensorDiff& d : rows) rows_.push_back(Row{d, false});
            only_a_ = report.only_a;
            only_b_ = report.only_b;
            shape_changes_ = report.shape_changes;
            to_value_ = 0;
            for (const Row& r : rows_) to_value_ += r.diff.a != kNone && r.diff.b != kNone && !r.diff.shape_differs;
            listed_ = true;
            resort();
          });
        }
        DiffOptions options;
        options.cancel = &ctx.cancel();
        std::vector<std::pair<size_t, TensorDiff>> batch;
        auto flush = [&] {
          if (batch.empty()) return;
          ctx.post([this, alive, results = std::move(batch)] {
            if (alive.expired()) return;
            for (const auto& [i, d] : results)
              if (i < rows_.size()) {
                rows_[i].diff = d;
                rows_[i].valued = true;
                ++valued_;
              }
            resort();
          });
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
          if ((i < done.size() && done[i]) || d.a == kNone || d.b == kNone || d.shape_differs) continue;
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
        ctx.post([this, alive] {
          if (!alive.expired()) computing_ = false;
        });
      },
      [this, alive] {
        if (alive.expired()) return;
        computing_ = false;
        cancelled_ = true;
        resort();
      }});
}

// Worst first: findings (missing, shape changes, pairs that could not be compared), then the
// compared pairs by relative RMS (largest first), then those still waiting, in A's order.
void DiffPane::resort() {
  // The row the user moved to stays selected as rows move; until then the cursor stays on the worst.
  const uint32_t keep = moved_ && cursor_.pos < static_cast<int64_t>(order_.size()) ? order_[static_cast<size_t>(cursor_.pos)] : kNone;
  order_.resize(rows_.size());
  std::iota(order_.begin(), order_.end(), 0u);
  auto rank = [&](uint32_t i) {
    const Row& r = rows_[i];
    if (row_status(r.diff, r.valued, cancelled_).problem) return 0;
    return r.valued && r.diff.has_values ? 1 : 2;
  };
  std::stable_sort(order_.begin(), order_.end(), [&](uint32_t x, uint32_t y) {
    const int rx = rank(x), ry = rank(y);
    if (rx != ry) return rx < ry;
    return rx == 1 && rows_[x].diff.error.rel_rmse > rows_[y].diff.error.rel_rmse;
  });
  if (keep != kNone)
    if (auto it = std::find(order_.begin(), order_.end(), keep); it != order_.end()) cursor_.pos = it - order_.begin();
  cursor_.clamp(static_cast<int64_t>(order_.size()), page_);
}

std::vector<const TensorDiff*> DiffPane::shown() const {
  std::vector<const TensorDiff*> out;
  for (uint32_t i : order_) out.push_back(&rows_[i].diff);
  return out;
}

std::string DiffPane::side_name(const Model& m, uint32_t index, int64_t expert) const {
  if (index == kNone) return std::string(kDash);
  return std::string(m.tensors[index].name) + (expert >= 0 ? fmt::format("[{}]", expert) : "");
}

void DiffPane::open_detail(PaneHost& host) {
  if (cursor_.pos >= static_cast<int64_t>(order_.size())) return;
  detail_open_ = true;
  detail_row_ = order_[static_cast<size_t>(cursor_.pos)];
  detail_a_.reset();
  detail_b_.reset();
  const TensorDiff d = rows_[detail_row_].diff;
  // An expert's slice spans as many rows as the other side's tensor.
  const int64_t a_rows = d.a != kNone ? rows_of(a_->model, a_->model.tensors[d.a]) : 0;
  const int64_t b_rows = d.b != kNone ? rows_of(b_->model, b_->model.tensors[d.b]) : 0;
  std::weak_ptr<bool> alive = alive_;
  host.worker().submit(Job{"diff detail",
                           [this, alive, a = a_, b = b_, d, a_rows, b_rows, row = detail_row_](JobContext& ctx) {
                             SideStats sa = side_stats(a->model, d.a, d.a_expert, b_rows, &ctx.cancel());
                             SideStats sb = side_stats(b->model, d.b, d.b_expert, a_rows, &ctx.cancel());
                             ctx.post([this, alive, sa, sb, row] {
                               if (alive.expired() || !detail_open_ || detail_row_ != row) return;
                               detail_a_ = sa;
                               detail_b_ = sb;
                             });
                           },
                           {}, /*urgent=*/true});
}

bool DiffPane::act(Action action, PaneHost& host) {
  if (detail_open_) {
    if (action == Action::back) {
      detail_open_ = false;
      return true;
    }
    return false;
  }
  const auto n = static_cast<int64_t>(order_.size());
  switch (action) {
    case Action::open: open_detail(host); return true;
    case Action::run_pair: {
      if (cursor_.pos >= n) return true;
      const TensorDiff& d = rows_[order_[static_cast<size_t>(cursor_.pos)]].diff;
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
      if (!cursor_.act(action, n, page_)) return false;
      moved_ = true;
      return true;
  }
}

void DiffPane::click(int /*x*/, int y, PaneHost& /*host*/) {
  if (detail_open_ || y < rows_y_ || y >= rows_y_ + page_) return;
  const int64_t row = cursor_.top + y - rows_y_;
  if (row < static_cast<int64_t>(order_.size())) cursor_.pos = row, moved_ = true;
}

void DiffPane::wheel(int rows) {
  cursor_.scroll(rows, static_cast<int64_t>(order_.size()), page_);
  moved_ = true;
}

void DiffPane::draw(Canvas& c, const Rect& area) {
  c.fill(area, Role::normal);
  if (area.w <= 0 || area.h <= 0) return;
  if (detail_open_) return draw_detail(c, area);
  int y = area.y;
  // The summary line: B, then what differs.
  std::string summary = fmt::format("A {} · B {}", a_->model.path, b_->model.path);
  c.text(area.x, y, summary, Role::key, area.w);
  if (++y >= area.y + area.h) return;
  std::string counts = !listed_ ? "pairing tensors…"
                                : fmt::format("{} pairs · {} only in A · {} only in B · {} shape changes · errors {}/{}{}",
                                              rows_.size(), only_a_, only_b_, shape_changes_, valued_, to_value_,
                                              cancelled_ && valued_ < to_value_ ? " (Esc: s goes on)" : "");
  c.text(area.x, y, counts, Role::muted, area.w);
  if (++y >= area.y + area.h) return;
  const std::vector<int> cols = columns_for(area.w);
  int rest = area.w;
  for (int col : cols) rest -= kColumns[col].width;
  const int key_w = std::max(1, rest);
  c.fill(area.x, y, area.w, Role::header);
  c.text(area.x, y, "tensor (worst first)", Role::header, key_w - 1);
  int cx = area.x + key_w;
  for (int col : cols) {
    if (kColumns[col].right) c.text_right(cx, y, kColumns[col].width - 1, kColumns[col].title, Role::header);
    else c.text(cx, y, kColumns[col].title, Role::header, kColumns[col].width - 1);
    cx += kColumns[col].width;
  }
  page_ = std::max(1, area.y + area.h - y - 1);
  rows_y_ = y + 1 - area.y;
  cursor_.clamp(static_cast<int64_t>(order_.size()), page_);
  for (int k = 0; k < page_; ++k) {
    const int64_t i = cursor_.top + k;
    if (i >= static_cast<int64_t>(order_.size())) break;
    const Row& r = rows_[order_[static_cast<size_t>(i)]];
    const TensorDiff& d = r.diff;
    const RowStatus st = row_status(d, r.valued, cancelled_);
    const int ry = y + 1 + k;
    c.text(area.x, ry, d.key, st.problem ? Role::warn : Role::normal, key_w - 1);
    cx = area.x + key_w;
    for (int col : cols) {
      const int w = kColumns[col].width - 1;
      const bool v = r.valued && d.has_values;
      switch (col) {
        case kTypeA: c.text(cx, ry, type_text(a_->model, d.a), type_role(a_->model, d.a), w); break;
        case kTypeB: c.text(cx, ry, type_text(b_->model, d.b), type_role(b_->model, d.b), w); break;
        case kShape: {
          const std::string sa = shape_text(a_->model, d.a, d.a_expert), sb = shape_text(b_->model, d.b, d.b_expert);
          c.text(cx, ry, d.shape_differs ? sa + " ≠ " + sb : d.a != kNone ? sa : sb, d.shape_differs ? Role::error : Role::muted, w);
          break;
        }
        case kRelRms: c.text_right(cx, ry, w, v ? fmt::format("{:.3g}", d.error.rel_rmse) : std::string(kDash), Role::number); break;
        case kCosine: c.text_right(cx, ry, w, v ? fmt::format("{:.6f}", d.error.cosine) : std::string(kDash), Role::number); break;
        case kMaxAbs: c.text_right(cx, ry, w, v ? fmt::format("{:.3g}", d.error.max_abs) : std::string(kDash), Role::number); break;
        case kStatus: c.text(cx, ry, st.text, st.problem ? Role::error : Role::muted, w); break;
      }
      cx += kColumns[col].width;
    }
    if (i == cursor_.pos) c.restyle(area.x, ry, area.w, Role::selected);
  }
  if (listed_ && order_.empty() && y + 1 < area.y + area.h) c.text(area.x, y + 1, "(no tensors)", Role::muted, area.w);
}

void DiffPane::draw_detail(Canvas& c, const Rect& area) {
  const TensorDiff& d = rows_[detail_row_].diff;
  int y = area.y;
  auto line = [&](std::string_view label, const std::string& va, const std::string& vb, Role role = Role::normal) {
    if (y >= area.y + area.h) return;
    const int label_w = std::min(12, area.w / 4), col_w = std::max(1, (area.w - label_w) / 2);
    c.text(area.x, y, label, Role::key, label_w - 1);
    c.text(area.x + label_w, y, va, role, col_w - 1);
    c.text(area.x + label_w + col_w, y, vb, role, area.w - label_w - col_w);
    ++y;
  };
  c.text(area.x, y++, d.key, Role::header, area.w);
  line("", "A " + a_->model.path, "B " + b_->model.path, Role::muted);
  line("name", side_name(a_->model, d.a, d.a_expert), side_name(b_->model, d.b, d.b_expert));
  line("type", type_text(a_->model, d.a), type_text(b_->model, d.b));
  line("shape", shape_text(a_->model, d.a, d.a_expert), shape_text(b_->model, d.b, d.b_expert),
       d.shape_differs ? Role::error : Role::normal);
  auto bytes = [](const Model& m, uint32_t i) { return i == kNone ? std::string(kDash) : format_bytes(m.tensors[i].nbytes); };
  line("bytes", bytes(a_->model, d.a), bytes(b_->model, d.b));
  auto stat = [&](const std::optional<SideStats>& s, double SideStats::*field) {
    if (!s) return std::string("computing…");
    if (!s->problem.empty()) return s->problem;
    return fmt::format("{:.6g}", (*s).*field);
  };
  line("min", stat(detail_a_, &SideStats::min), stat(detail_b_, &SideStats::min), Role::number);
  line("max", stat(detail_a_, &SideStats::max), stat(detail_b_, &SideStats::max), Role::number);
  line("mean", stat(detail_a_, &SideStats::mean), stat(detail_b_, &SideStats::mean), Role::number);
  line("std", stat(detail_a_, &SideStats::std), stat(detail_b_, &SideStats::std), Role::number);
  ++y;
  const Row& r = rows_[detail_row_];
  if (y < area.y + area.h) {
    std::string err = r.valued && d.has_values
                          ? fmt::format("A against B: rel rms {:.4g} · rms {:.4g} · max abs {:.4g} · cosine {:.7f} · {} elements",
                                        d.error.rel_rmse, d.error.rmse, d.error.max_abs, d.error.cosine, d.error.elements)
                          : "A against B: " + row_status(d, r.valued, cancelled_).text;
    c.text(area.x, y++, err, Role::normal, area.w);
  }
  if (!d.note.empty() && y < area.y + area.h) c.text(area.x, y++, "expect: " + std::string(d.note), Role::warn, area.w);
}

std::string DiffPane::position() const {
  if (detail_open_) return "detail";
  return fmt::format("row {}/{}", order_.empty() ? 0 : cursor_.pos + 1, order_.size());
}

std::string DiffPane::state() const {
  if (computing_) return fmt::format("comparing values {}/{}", valued_, to_value_);
  return cancelled_ && valued_ < to_value_ ? "cancelled" : "worst first";
}

std::string DiffPane::hints() const { return detail_open_ ? "Esc close" : "Enter side by side  x run in Compute  s again"; }

}  // namespace akview::tui
