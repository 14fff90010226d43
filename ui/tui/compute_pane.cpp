// The Compute pane (compute_pane.hpp).
#include "ui/tui/compute_pane.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <utility>

#include <fmt/format.h>

#include "compute/backend.hpp"
#include "compute/devices.hpp"
#include "ui/batch/commands.hpp"
#include "ui/tui/text_search.hpp"

namespace akview::tui {
namespace {

constexpr int kRepeatSteps[] = {1, 3, 10, 30, 100, 300, 1000};
constexpr std::string_view kDash = "—";

std::vector<ComputePane::Choice> default_choices() {
  std::vector<ComputePane::Choice> out;
  for (const auto& row : compute::backend_table()) {
    ComputePane::Choice c;
    c.label = c.backend = std::string(row.name);
    out.push_back(std::move(c));
  }
  return out;
}

std::string input_text(const compute::InputSpec& in) {
  switch (in.kind) {
    case compute::InputKind::ones: return "ones";
    case compute::InputKind::file: return std::filesystem::path(in.path).filename().string();
    case compute::InputKind::seeded_normal: break;
  }
  return fmt::format("seed:{}", in.seed);
}

// Why `path` cannot be an input vector (raw little-endian f32), or "" when it can be read as one.
std::string input_file_problem(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return fmt::format("{}: no such file", path);
  if (!fs::is_regular_file(st)) return fmt::format("{}: not a regular file", path);
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return fmt::format("{}: {}", path, ec.message());
  if (size == 0 || size % 4 != 0) return fmt::format("{}: {} bytes, not a whole number of f32 values", path, size);
  if (!std::ifstream(path, std::ios::binary)) return fmt::format("{}: cannot be read", path);
  return {};
}

std::string time_text(double s) {
  if (s < 1e-3) return fmt::format("{:.1f} µs", s * 1e6);
  if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
}

// The table's columns; the tensor name takes what the others leave. Narrow panes drop the columns
// with the highest `drop` first.
struct Column {
  std::string_view title;
  int width, drop;
  std::string (*cell)(const ComputePane::Row&, bool masked);
};
std::string error_cell(const ComputePane::Row& r, double compute::ErrorStats::*field, const char* format) {
  return r.error ? fmt::format(fmt::runtime(format), (*r.error).*field) : std::string(kDash);
}
const Column kColumns[] = {
    {"backend", 12, 0, [](const ComputePane::Row& r, bool) { return r.backend; }},
    {"input", 12, 3, [](const ComputePane::Row& r, bool) { return elide_middle(r.input, 11); }},
    // The median of the timed repeats; '~' marks one whose fastest repeat was much faster (a busy
    // machine: the figure is not reliable).
    {"median", 11, 4,
     [](const ComputePane::Row& r, bool m) {
       return m ? std::string(kDash) : time_text(r.seconds) + (unreliable_time(r) ? " ~" : "");
     }},
    {"GB/s", 8, 5,
     [](const ComputePane::Row& r, bool m) { return m ? std::string(kDash) : fmt::format("{:.2f}", r.gbps); }},
    {"max abs", 10, 6,
     [](const ComputePane::Row& r, bool) { return error_cell(r, &compute::ErrorStats::max_abs, "{:.3g}"); }},
    {"rms", 10, 7, [](const ComputePane::Row& r, bool) { return error_cell(r, &compute::ErrorStats::rms, "{:.3g}"); }},
    {"rel rms", 10, 1,
     [](const ComputePane::Row& r, bool) { return error_cell(r, &compute::ErrorStats::rel_rms, "{:.3g}"); }},
    {"cosine", 10, 2,
     [](const ComputePane::Row& r, bool) { return error_cell(r, &compute::ErrorStats::cosine, "{:.7f}"); }},
    // With a second model only: the relative RMS of y against y computed from its tensor.
    {"vs ref", 10, 1,
     [](const ComputePane::Row& r, bool) {
       return r.vs_ref ? fmt::format("{:.3g}", r.vs_ref->rel_rms) : std::string(kDash);
     }},
};
constexpr size_t kVsRefColumn = 8;
constexpr int kTensorMin = 12;

std::vector<const Column*> columns_for(int w, bool with_ref) {
  std::vector<const Column*> shown;
  for (const Column& c : kColumns)
    if (with_ref || &c != &kColumns[kVsRefColumn]) shown.push_back(&c);
  auto used = [&] {
    int sum = kTensorMin;
    for (const Column* c : shown) sum += c->width;
    return sum;
  };
  while (!shown.empty() && used() > w) {
    auto worst = std::max_element(shown.begin(), shown.end(),
                                  [](const Column* a, const Column* b) { return a->drop < b->drop; });
    shown.erase(worst);
  }
  return shown;
}

}   // namespace

bool unreliable_time(const ComputePane::Row& r) {
  return r.seconds > 0 && r.min_seconds > 0 && (r.seconds - r.min_seconds) / r.seconds > kUnreliableSpread;
}

ComputePane::ComputePane(std::shared_ptr<ModelSession> session, std::function<uint32_t()> selected,
                         std::shared_ptr<ModelSession> ref)
    : session_(std::move(session)), selected_(std::move(selected)), ref_(std::move(ref)), choices_(default_choices()) {
  mask_timings_ = std::getenv("AKVIEW_TEST_SYNC") != nullptr;   // goldens show no clock
}

ComputePane::~ComputePane() = default;

int ComputePane::repeats() const { return kRepeatSteps[repeats_step_]; }

bool ComputePane::select_backend(std::string_view label) {
  for (size_t i = 0; i < choices_.size(); ++i)
    if (choices_[i].label == label) {
      choice_ = i;
      return true;
    }
  return false;
}

std::string ComputePane::selection_label() const {
  const uint32_t t = selected_ ? selected_() : kNone;
  switch (scope_) {
    case Scope::tensor:
      return t < session_->model.tensors.size() ? std::string(session_->model.tensors[t].name) : "(no tensor selected)";
    case Scope::layer: {
      const auto e = t != kNone ? session_->entry(t) : std::nullopt;
      return e && e->layer >= 0 ? fmt::format("layer {}", e->layer) : "(the selected tensor is in no layer)";
    }
    case Scope::filter: return filter_.empty() ? "every matrix" : "filter " + filter_;
  }
  return {};
}

// The OpenCL devices are listed on the worker (loading the ICD can take a while); until then the
// opencl choice runs on the automatic device.
void ComputePane::list_backends(PaneHost& host) {
  if (listing_ || listed_) return;
  listing_ = true;
  const Lifeline::Link life = life_.link();
  host.worker().submit(Job{"listing backends",
                           [this, life](JobContext& ctx) {
                             compute::DevicesReport report = compute::list_devices();
                             ctx.post(life.guard([this, report = std::move(report)] {
                               listing_ = false;
                               listed_ = true;
                               const std::string was = choices_[choice_].label;
                               std::vector<Choice> next;
                               for (const auto& b : report.backends) {
                                 if (b.name != "opencl") {
                                   next.push_back({b.name, b.name, -1, b.available, b.available ? "" : b.reason});
                                   continue;
                                 }
                                 bool any = false;
                                 for (const auto& p : report.opencl_platforms)
                                   for (const auto& d : p.devices) {
                                     // The index first: two devices of one name stay apart in a narrow column.
                                     next.push_back({fmt::format("opencl:{} {}", d.index, d.name), "opencl", d.index,
                                                     b.available, b.reason});
                                     any = true;
                                   }
                                 if (!any) next.push_back({"opencl", "opencl", -1, false, report.opencl_error});
                               }
                               if (next.empty()) return;
                               choices_ = std::move(next);
                               choice_ = 0;
                               if (!select_backend(was)) select_backend("cpu");
                             }));
                           },
                           life.guard([this] { listing_ = false; })});
}

void ComputePane::before_frame(PaneHost& host) {
  list_backends(host);
  if (running_) progress_ = host.worker().progress();
}

bool ComputePane::start_run(PaneHost& host) {
  if (running_) {
    host.flash("a run is under way: Esc cancels it");
    return true;
  }
  RunQuery query;
  const bool forced = run_next_ != kNone;
  const uint32_t t = forced ? std::exchange(run_next_, kNone) : selected_ ? selected_() : kNone;
  switch (forced ? Scope::tensor : scope_) {
    case Scope::tensor:
      if (t >= session_->model.tensors.size()) {
        host.flash("no tensor selected: pick one in the Tensors pane (1)");
        return true;
      }
      query.tensors.push_back(std::string(session_->model.tensors[t].name));
      break;
    case Scope::layer: {
      const auto e = t != kNone ? session_->entry(t) : std::nullopt;
      if (!e || e->layer < 0) {
        host.flash("the selected tensor is in no layer");
        return true;
      }
      query.layer = e->layer;
      break;
    }
    case Scope::filter: query.filter = filter_; break;
  }
  const Choice& c = choices_[choice_];
  query.options.backend = c.backend;
  query.options.opencl_device = c.device;
  query.options.repeat = repeats();
  query.options.input = input_;
  const uint64_t id = next_id_++;
  running_ = id;
  progress_ = 0;
  done_->store(0);
  count_->store(0);
  last_.clear();
  const Lifeline::Link life = life_.link();
  const std::string label = c.label, selection = forced ? query.tensors.front() : selection_label();
  const std::string input = input_text(input_);
  host.worker().submit(Job{
      "compute " + label,
      [this, life, id, label, selection, input, query = std::move(query), session = session_, ref = ref_, done = done_,
       count = count_](JobContext& ctx) {
        compute::RunCallbacks callbacks;
        callbacks.cancelled = [&ctx] { return ctx.cancelled(); };
        callbacks.on_progress = [&ctx, done, count](const compute::RunProgress& p) {
          done->store(p.tensor_index);
          count->store(p.tensor_count);
          const double steps = std::max(1, p.steps);
          ctx.progress((static_cast<double>(p.tensor_index) + p.step / steps) /
                       static_cast<double>(std::max<size_t>(1, p.tensor_count)));
        };
        Result<RunTableReport> report = make_run_report(session->model, ref ? &ref->model : nullptr, query, callbacks);
        if (ctx.cancelled() && report) report->cancelled = true;
        ctx.post(life.guard([this, id, label, selection, input, report = std::move(report)]() mutable {
          finish(id, label, selection, input, std::move(report));
        }));
      },
      life.guard([this, id, label, selection, input] {
        finish(id, label, selection, input, make_error(ErrorCode::refused, "", kNoOffset, "cancelled"));
      })});
  return true;
}

// Rows of one tensor stay together, its backends in one order (the order of the backend list) for
// every tensor; a run on the same backend and input replaces its row, unless it failed where that
// row holds a result.
bool ComputePane::put_row(Row row) {
  auto rank = [&](const std::string& backend) {
    for (size_t k = 0; k < choices_.size(); ++k)
      if (choices_[k].label == backend) return k;
    return choices_.size();
  };
  int64_t last = -1, before = -1;
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].tensor != row.tensor) continue;
    if (rows_[i].backend == row.backend && rows_[i].input == row.input) {
      if (row.state != Row::State::done && rows_[i].state == Row::State::done) return false;
      rows_[i] = std::move(row);
      return true;
    }
    if (before < 0 && rank(rows_[i].backend) > rank(row.backend)) before = static_cast<int64_t>(i);
    last = static_cast<int64_t>(i);
  }
  if (before >= 0) rows_.insert(rows_.begin() + before, std::move(row));
  else if (last < 0) rows_.push_back(std::move(row));
  else rows_.insert(rows_.begin() + last + 1, std::move(row));
  return true;
}

void ComputePane::finish(uint64_t id, const std::string& label, const std::string& selection, const std::string& input,
                         Result<RunTableReport> report) {
  if (running_ != id) return;   // already finished (the job's result, then the worker's on_cancel)
  running_ = 0;
  const bool cancelled = !report ? report.error().message == "cancelled" : report->cancelled;
  auto failed_row = [&](std::string tensor, Row::State state, std::string note) {
    Row row;
    row.tensor = std::move(tensor);
    row.backend = label;
    row.input = input;
    row.state = state;
    row.note = std::move(note);
    return row;
  };
  if (cancelled) {
    // A cancelled run keeps none of its partial rows: one row says what was stopped.
    put_row(failed_row(selection, Row::State::cancelled, "cancelled"));
    last_ = "cancelled";
    return;
  }
  if (!report) {
    const std::string why = report.error().to_string();
    last_ = put_row(failed_row(selection, Row::State::failed, why)) ? "failed" : "failed (the results stay): " + why;
    return;
  }
  for (const compute::TensorRun& run : report->runs) {
    Row row;
    row.tensor = run.name;
    row.backend = label == run.backend || label.starts_with(run.backend + ":") ? label : run.backend;
    row.input = input;
    row.seconds = run.median_seconds;
    row.min_seconds = run.min_seconds;
    row.gbps = run.gbps_median;
    row.error = run.vs_reference;
    row.vs_ref = run.vs_second;
    row.note = !run.note.empty() ? run.note : run.reference_error;
    put_row(std::move(row));
  }
  std::string kept;   // a failure beside a good result of the same run settings: said here, not over it
  for (const compute::RunFailure& f : report->failures)
    if (!put_row(failed_row(f.name, Row::State::failed, f.error.to_string())) && kept.empty())
      kept = f.error.to_string();
  last_ = fmt::format("{} run{}, {} failed", report->runs.size(), report->runs.size() == 1 ? "" : "s",
                      report->failures.size());
  if (!kept.empty()) last_ += " (the results stay): " + kept;
  // OpenCL copies the weights to its device once and keeps them: that copy is timed on its own.
  double upload = 0;
  uint64_t uploaded = 0;
  bool any_upload = false;
  for (const compute::TensorRun& run : report->runs)
    if (run.upload_seconds) {
      any_upload = true;
      upload += *run.upload_seconds;
      uploaded += run.weight_bytes;
    }
  if (any_upload)
    last_ += mask_timings_
                 ? std::string(" · upload — (not in the times: the weights stay on the device)")
                 : fmt::format(" · upload {} ({:.2f} GB/s), not in the times: the weights stay on the device",
                               time_text(upload), upload > 0 ? static_cast<double>(uploaded) / upload / 1e9 : 0.0);
}

void ComputePane::run_tensor(uint32_t tensor, PaneHost& host) {
  if (running_) {
    host.flash("a run is under way: Esc cancels it");
    return;
  }
  run_next_ = tensor;
  start_run(host);
}

void ComputePane::start_filter(PaneHost& host) {
  host.prompt("filter (regex)", filter_, [this, &host](const std::string& text, PromptEvent event) {
    const Pattern p(text, false);
    if (!p.valid()) {
      host.flash(p.error());   // while typing and on Enter: the filter stays what it was
      return;
    }
    if (event != PromptEvent::accept) return;
    filter_ = text;
    scope_ = Scope::filter;
  });
}

void ComputePane::choose_input(PaneHost& host) {
  switch (input_.kind) {
    case compute::InputKind::seeded_normal: input_.kind = compute::InputKind::ones; return;
    case compute::InputKind::file: input_.kind = compute::InputKind::seeded_normal; return;
    case compute::InputKind::ones: break;
  }
  // The path is checked when it is given: a file that cannot be an input never becomes the input.
  host.prompt("input file (raw f32)", input_.path, [this, &host](const std::string& text, PromptEvent event) {
    if (event != PromptEvent::accept) return;
    if (text.empty()) {
      input_.kind = compute::InputKind::seeded_normal;
      return;
    }
    if (std::string problem = input_file_problem(text); !problem.empty()) {
      host.flash("input unchanged: " + problem);
      return;
    }
    input_.kind = compute::InputKind::file;
    input_.path = text;
  });
}

bool ComputePane::act(Action action, PaneHost& host) {
  const size_t n = choices_.size();
  switch (action) {
    case Action::run: return start_run(host);
    case Action::scope: scope_ = static_cast<Scope>((static_cast<int>(scope_) + 1) % 3); return true;
    case Action::filter: start_filter(host); return true;
    case Action::backend_next: choice_ = (choice_ + 1) % n; return true;
    case Action::backend_prev: choice_ = (choice_ + n - 1) % n; return true;
    case Action::input: choose_input(host); return true;
    case Action::repeats_up: repeats_step_ = std::min(repeats_step_ + 1, std::size(kRepeatSteps) - 1); return true;
    case Action::repeats_down: repeats_step_ = repeats_step_ > 0 ? repeats_step_ - 1 : 0; return true;
    case Action::clear:
      rows_.clear();
      list_.cursor = {};
      return true;
    default: return list_.act(action, static_cast<int64_t>(rows_.size()));
  }
}

void ComputePane::draw(Canvas& canvas, const Rect& area) {
  canvas.fill(area, Role::normal);
  if (area.w <= 0 || area.h <= 0) return;
  // The settings, flowed over as many lines as the width needs.
  const Choice& c = choices_[choice_];
  std::string input = input_.kind == compute::InputKind::file ? "file " + input_.path : input_text(input_);
  const std::string items[] = {
      scope_ == Scope::tensor ? "tensor " + selection_label() : selection_label(),
      "on " + c.label + (c.available ? "" : " (unavailable)"),
      "input " + input,
      fmt::format("×{}", repeats()),
  };
  int y = area.y, x = area.x;
  for (const std::string& item : items) {
    const int w = display_width(item);
    if (x > area.x && x + 3 + w > area.x + area.w) {
      ++y;
      x = area.x;
    }
    if (x > area.x) x += canvas.text(x, y, " · ", Role::muted, area.x + area.w - x);
    x += canvas.text(x, y, item, Role::key, area.x + area.w - x);
  }
  if (++y >= area.y + area.h) return;
  // The run line: a progress bar while running, else the last outcome.
  if (running_) {
    const size_t count = count_->load(), done = done_->load();
    const std::string text =
        fmt::format("running {}/{} ", std::min(done + 1, std::max<size_t>(count, 1)), std::max<size_t>(count, 1));
    int bx = area.x + canvas.text(area.x, y, text, Role::normal, area.w);
    const int bar = std::max(0, std::min(20, area.x + area.w - bx - 12));
    const int fill = static_cast<int>(std::clamp(progress_, 0.0, 1.0) * bar);
    for (int i = 0; i < bar; ++i)
      canvas.put(bx + i, y, i < fill ? U'█' : U'░', i < fill ? Role::progress : Role::muted);
    bx += bar;
    canvas.text(bx, y, fmt::format(" {:3.0f}% Esc", 100 * std::clamp(progress_, 0.0, 1.0)), Role::muted,
                area.x + area.w - bx);
  } else if (!last_.empty()) {
    canvas.text(area.x, y, "last run: " + last_, last_ == "cancelled" ? Role::warn : Role::muted, area.w);
  } else {
    canvas.text(area.x, y, "r runs · s selection · b backend · i input · +/- repeats", Role::muted, area.w);
  }
  if (++y >= area.y + area.h) return;
  // The results table.
  const std::vector<const Column*> cols = columns_for(area.w, ref_ != nullptr);
  int rest = area.w;
  for (const Column* col : cols) rest -= col->width;
  const int tensor_w = std::max(1, rest);
  canvas.fill(area.x, y, area.w, Role::header);
  canvas.text(area.x, y, "tensor", Role::header, tensor_w - 1);
  int cx = area.x + tensor_w;
  for (const Column* col : cols) {
    canvas.text(cx, y, col->title, Role::header, col->width - 1);
    cx += col->width;
  }
  list_.page = std::max(1, area.y + area.h - y - 1);
  list_.first_y = y + 1 - area.y;
  if (rows_.empty()) {
    if (y + 1 < area.y + area.h) canvas.text(area.x, y + 1, "(no results yet)", Role::muted, area.w);
    return;
  }
  list_.clamp(static_cast<int64_t>(rows_.size()));
  for (int k = 0; k < list_.page; ++k) {
    const int64_t i = list_.cursor.top + k;
    if (i >= static_cast<int64_t>(rows_.size())) break;
    const Row& r = rows_[static_cast<size_t>(i)];
    const int ry = y + 1 + k;
    // The name form Tensors shows (a row names its tensor natively; a failed selection is a label).
    const Tensor* named = session_->model.find(r.tensor);
    const std::string_view name =
        named ? session_->shown_name(static_cast<uint32_t>(named - session_->model.tensors.data()))
              : std::string_view(r.tensor);
    canvas.text_middle(area.x, ry, name, r.state == Row::State::done ? Role::normal : Role::warn, tensor_w - 1);
    cx = area.x + tensor_w;
    for (const Column* col : cols) {
      if (r.state != Row::State::done && col != &kColumns[0] &&
          col != &kColumns[1]) {   // a failure or cancel: its note fills the rest
        canvas.text(cx, ry, r.note, r.state == Row::State::failed ? Role::error : Role::warn, area.x + area.w - cx);
        break;
      }
      canvas.text(cx, ry, col->cell(r, mask_timings_),
                  col == &kColumns[0]   ? Role::type_other
                  : col == &kColumns[1] ? Role::muted
                                        : Role::number,
                  col->width - 1);
      cx += col->width;
    }
    if (i == list_.cursor.pos) canvas.restyle(area.x, ry, area.w, Role::selected);
  }
}

void ComputePane::click(int /*x*/, int y, PaneHost& /*host*/) {
  list_.click(y, static_cast<int64_t>(rows_.size()));   // not on the settings, the run line, the column header
}

void ComputePane::wheel(int rows) { list_.wheel(rows, static_cast<int64_t>(rows_.size())); }

std::string ComputePane::position() const {
  if (rows_.empty()) return {};
  return list_.position("row", static_cast<int64_t>(rows_.size()));
}

std::string ComputePane::state() const {
  if (running_) return "running on " + choices_[choice_].label;
  return fmt::format("{} result{}", rows_.size(), rows_.size() == 1 ? "" : "s");
}

std::string ComputePane::hints() const { return "r run  s selection  b backend  i input  +/- repeats"; }

}   // namespace akview::tui
