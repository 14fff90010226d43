// The Fit pane (fit_pane.hpp): `akview fit`'s report, drawn line by line.
#include "ui/tui/fit_pane.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "ui/batch/fit_report.hpp"

namespace akview::tui {
namespace {

constexpr uint64_t kMinContext = 256;          // llama.cpp pads the context to 256 cells
constexpr uint64_t kMaxContext = 1ull << 31;   // past this llama.cpp's cell count does not hold

// The report as `akview fit` prints it, one string a line.
std::vector<std::string> report_lines(const FitReport& report) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  if (!out) return {"(no memory for the report)"};
  print_fit(out, report, OutputFormat::text);
  std::fclose(out);
  std::vector<std::string> lines;
  std::string_view text(buffer, size);
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.emplace_back(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  std::free(buffer);
  return lines;
}

// A table's heading row: indented, its first word one of the tables' first columns.
bool is_heading(const std::string& line) {
  static constexpr std::string_view kHeadings[] = {"buffer", "KV layers", "device", "context"};
  const size_t first = line.find_first_not_of(' ');
  if (first == 0 || first == std::string::npos) return false;
  const std::string_view rest = std::string_view(line).substr(first);
  for (std::string_view h : kHeadings)
    if (rest.starts_with(h)) return true;
  return false;
}

}   // namespace

void FitPane::before_frame(PaneHost& host) {
  if (pending_ && !running_) estimate(host);
}

void FitPane::estimate(PaneHost& host) {
  pending_ = false;
  auto query = make_fit_query(context_, fit::FitQuery{}.batch, std::string(fit_kv_types()[kv_type_]), gpu_mem_);
  if (!query) {
    error_ = query.error().message;
    return;
  }
  running_ = true;
  Job job;
  job.label = "fit";
  job.urgent = true;   // the pane waits for it
  const Lifeline::Link life = life_.link();
  job.run = [s = session_, q = *query, life, this](JobContext& ctx) {
    auto report = make_fit_report(s->model, q);
    auto lines = std::make_shared<std::vector<std::string>>();
    std::string error;
    uint64_t shown = 0;
    if (report) {
      *lines = report_lines(*report);
      shown = report->estimate.context;
    } else {
      error = report.error().to_string();
    }
    ctx.post(life.guard([lines, error, shown, this] {
      running_ = false;
      error_ = error;
      if (error.empty()) {
        lines_ = std::move(*lines);
        shown_context_ = shown;
      }
    }));
  };
  job.on_cancel = life.guard([this] {
    running_ = false;
    error_ = "cancelled (+, - or v estimates again)";
  });
  host.worker().submit(std::move(job));
}

void FitPane::draw(Canvas& c, const Rect& area) {
  if (!error_.empty()) {
    c.text(area.x + 1, area.y, error_, Role::error, area.w - 1);
    return;
  }
  if (lines_.empty()) {
    c.text(area.x + 1, area.y, running_ ? "estimating…" : "", Role::muted, area.w - 1);
    return;
  }
  view_.fit(static_cast<int64_t>(lines_.size()), area.h);
  for (int k = 0; k < view_.page; ++k) {
    const int64_t i = view_.top() + k;
    if (i >= static_cast<int64_t>(lines_.size())) break;
    const std::string& line = lines_[static_cast<size_t>(i)];
    const Role role = i == 0 ? Role::key : is_heading(line) ? Role::header : Role::normal;
    c.text(area.x + 1, area.y + k, line, role, area.w - 1);
  }
}

bool FitPane::act(Action action, PaneHost& host) {
  const uint64_t now = shown_context_ ? shown_context_ : context_;
  switch (action) {
    case Action::context_up:
    case Action::context_down: {
      if (!now) return true;   // no context known yet
      const uint64_t next = action == Action::context_up ? now * 2 : now / 2;
      context_ = std::clamp<uint64_t>(next, kMinContext, kMaxContext);
      pending_ = true;
      return true;
    }
    case Action::set_context:
      host.prompt("context (tokens, 0: trained)", now ? fmt::format("{}", now) : std::string(),
                  [this](const std::string& text, PromptEvent event) {
                    if (event != PromptEvent::accept) return;
                    char* end = nullptr;
                    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
                    if (end == text.c_str() || *end != '\0') return;
                    context_ = v ? std::clamp<uint64_t>(v, kMinContext, kMaxContext) : 0;
                    pending_ = true;
                  });
      return true;
    case Action::kv_type_next:   // (v)
      kv_type_ = (kv_type_ + 1) % fit_kv_types().size();
      pending_ = true;
      return true;
    case Action::gpu_memory:
      host.prompt("GPU memory (GiB each, e.g. 24 or 24,12; empty: none)", gpu_mem_,
                  [this](const std::string& text, PromptEvent event) {
                    if (event != PromptEvent::accept) return;
                    gpu_mem_ = text;
                    pending_ = true;
                  });
      return true;
    default: return view_.act(action, static_cast<int64_t>(lines_.size()));
  }
}

void FitPane::wheel(int rows) { view_.wheel(rows, static_cast<int64_t>(lines_.size())); }

std::string FitPane::position() const {
  return lines_.empty() ? std::string() : fmt::format("line {}/{}", view_.top() + 1, lines_.size());
}

std::string FitPane::state() const {
  std::string s = context_ ? fmt::format("context {}", context_) : std::string("trained context");
  s += fmt::format(" · KV {}", fit_kv_types()[kv_type_]);
  if (!gpu_mem_.empty()) s += fmt::format(" · GPUs {} GiB", gpu_mem_);
  return s;
}

std::string FitPane::hints() const { return "+/- context  c type it  v KV type  m GPU memory"; }

}   // namespace akview::tui
