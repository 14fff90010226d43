// The TUI shell (app.hpp).
#include "ui/tui/app.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/formats/format.hpp"
#include "core/remote/address.hpp"
#include "core/remote/http.hpp"
#include "core/remote/mirror.hpp"
#include "ui/text/format.hpp"
#include "ui/tui/fit_pane.hpp"
#include "ui/tui/prompt_edit.hpp"
#include "ui/tui/text_viewer.hpp"
#include "ui/tui/title_bar.hpp"

namespace akview::tui {
namespace {

using Clock = std::chrono::steady_clock;

// " │ remote: 12.3 MiB of 4.70 GiB fetched" while remote files are open ("" otherwise).
std::string remote_note() {
  const remote::RemoteUse use = remote::remote_use();
  if (use.files == 0) return {};
  return fmt::format(" │ remote: {} of {} fetched", format_bytes(use.fetched), format_bytes(use.size));
}

// "fetching 3.2 MiB · 14 requests · 41.0 MB/s · Esc cancels" while a transfer runs ("" otherwise).
std::string transfer_line() {
  const remote::TransferStats s = remote::transfer_stats();
  if (s.in_flight == 0) return {};
  const double rate = s.busy_seconds > 0 ? static_cast<double>(s.bytes) / s.busy_seconds / 1e6 : 0;
  return fmt::format("fetching {} · {} requests · {:.1f} MB/s · Esc cancels", format_bytes(s.bytes), s.requests, rate);
}

}   // namespace

App::App(AppOptions options) : options_(std::move(options)) {
  if (options_.path.empty()) {
    // Every store found, flattened: each name says where it lives.
    std::vector<CatalogEntry> all;
    for (CatalogStore& store : list_default_stores())
      for (CatalogEntry& e : store.entries) {
        e.name = store.source + ": " + e.name;
        all.push_back(std::move(e));
      }
    list_ = std::make_unique<ModelList>("local stores", std::move(all), worker_);
    return;
  }
  // A remote address is listed or opened on the worker: the first frame never waits on the network.
  if (remote::is_remote_address(options_.path)) {
    start_open(options_.path);
    return;
  }
  if (auto entries = list_catalog(options_.path)) {
    list_ = std::make_unique<ModelList>(options_.path, std::move(*entries), worker_);
    return;
  }
  start_open(options_.path);
}

App::~App() { worker_.cancel_all(); }

void App::start_open(std::string path) {
  worker_.cancel_all();
  view_.reset();
  screen_ = Screen::opening;
  opening_path_ = path;
  view_path_ = path;
  const uint64_t gen = ++generation_;
  Job job;
  job.label = "opening";
  job.run = [this, gen, path](JobContext& ctx) {
    OpenOptions opt;
    opt.progress = [&ctx](double f) { ctx.progress(f); };
    opt.cancel = &ctx.cancel();
    std::string local = path;
    if (remote::is_remote_address(path)) {
      // Laid out in the cache first: a repository of several models opens on the model list.
      auto laid = remote::materialize(path);
      if (ctx.cancelled()) return;
      if (!laid) return ctx.post(show_error(gen, laid.error().to_string()));
      local = *laid;
      if (auto entries = list_catalog(local)) {
        ctx.post([this, gen, path, entries = std::move(*entries)]() mutable {
          if (gen != generation_) return;
          list_ = std::make_unique<ModelList>(path, std::move(entries), worker_);
          screen_ = Screen::list;
        });
        return;
      }
    }
    auto model = akview::open_model(local, opt);
    if (model) {
      model->path = remote::display_path(path);   // disk_path stays the folder it is laid out in
      remote::show_remote_names(*model);          // a remote model's files by their addresses
    }
    if (ctx.cancelled()) return;
    if (!model) return ctx.post(show_error(gen, model.error().to_string()));
    // The names stay in the header until the first frame is shown (ModelView::start_jobs packs
    // them and drops the header's pages): the first frame waits for nothing `info` does not do.
    auto session = make_session(std::move(*model));
    std::shared_ptr<ModelSession> ref;
    if (!options_.ref_path.empty()) {
      auto second = akview::open_model(options_.ref_path, opt);
      if (ctx.cancelled()) return;
      if (!second) return ctx.post(show_error(gen, "--ref: " + second.error().to_string()));
      ref = make_session(std::move(*second));
    }
    ctx.post([this, gen, session, ref] {
      if (gen != generation_) return;
      const size_t pane = reopen_pane_;
      view_ = std::make_unique<ModelView>(session, worker_, /*start_jobs=*/false, ref);
      view_->select_pane(pane);
      reopen_pane_ = 0;
      screen_ = Screen::model;
    });
  };
  job.on_cancel = [this, gen] {
    if (gen != generation_) return;
    error_ = fmt::format("{}: opening cancelled", opening_path_);
    screen_ = Screen::error;
  };
  worker_.submit(std::move(job));
}

std::function<void()> App::show_error(uint64_t gen, std::string message) {
  return [this, gen, message = std::move(message)] {
    if (gen != generation_) return;   // the user has left that open
    error_ = message;
    screen_ = Screen::error;
  };
}

// A model opened again from the list comes back as it was left, unless its files changed since.
void App::open_entry(const std::string& path) {
  auto it = std::find_if(parked_.begin(), parked_.end(), [&](const auto& p) { return p.first == path; });
  if (it == parked_.end()) return start_open(path);
  std::unique_ptr<ModelView> view = std::move(it->second);
  parked_.erase(it);
  if (files_changed(view->session().stamps)) return start_open(path);
  ++generation_;
  view_ = std::move(view);
  view_path_ = path;
  screen_ = Screen::model;
  view_->restart_stats();   // goes on where Esc stopped it (a finished one has nothing left to do)
}

void App::back() {
  if (remote::transfer_stats().in_flight > 0) remote::http_client().cancel();   // Esc stops any transfer
  if (worker_.cancel_all()) {
    flash("background work cancelled");
    return;
  }
  if (screen_ == Screen::list && help_open_) {
    help_open_ = false;
    return;
  }
  if (help_in_front()) {
    view_->select_pane(pane_before_help_);
    return;
  }
  if ((screen_ == Screen::model || screen_ == Screen::error) && list_) {
    ++generation_;
    if (view_ && screen_ == Screen::model) {
      constexpr size_t kParkedMax = 4;
      if (parked_.size() >= kParkedMax) parked_.erase(parked_.begin());
      parked_.emplace_back(view_path_, std::move(view_));
    }
    view_.reset();
    screen_ = Screen::list;
  }
}

void App::prompt(std::string label, std::string initial,
                 std::function<void(const std::string&, PromptEvent)> on_event) {
  prompt_ = Prompt{std::move(label), std::move(initial), std::move(on_event)};
}

Pane* App::front_pane() {
  switch (screen_) {   // what takes keys on each screen
    case Screen::list: return help_open_ ? static_cast<Pane*>(&help_) : list_.get();
    case Screen::model: return view_ ? &view_->pane() : nullptr;
    default: return nullptr;
  }
}

bool App::help_in_front() const { return view_ && screen_ == Screen::model && view_->showing<HelpPane>(); }

void App::global_action(Action action, int32_t key) {
  switch (action) {   // the global context of the key table
    case Action::quit: quit_ = true; return;
    case Action::back: back(); return;
    case Action::help:   // a toggle: again, back to the pane it was opened from
      if (view_ && screen_ == Screen::model) {
        if (help_in_front()) {
          view_->select_pane(pane_before_help_);
        } else {
          pane_before_help_ = view_->pane_index();
          view_->show<HelpPane>();
        }
      } else {
        help_open_ = !help_open_;
      }
      return;
    case Action::next_pane:
    case Action::prev_pane:
      if (view_ && screen_ == Screen::model) {
        const size_t n = view_->pane_count();
        view_->select_pane((view_->pane_index() + (action == Action::next_pane ? 1 : n - 1)) % n);
      }
      return;
    case Action::show_pane:
      if (view_ && screen_ == Screen::model) {
        const size_t before = view_->pane_index();
        if (view_->select_pane_by_key(key) && help_in_front() && before != view_->pane_index())
          pane_before_help_ = before;
      }
      return;
    case Action::reload:
      if (view_ && screen_ == Screen::model) {
        reopen_pane_ = view_->pane_index();
        start_open(view_->session().model.path);
      }
      return;
    default: return;
  }
}

bool App::must_wait() {
  if (prompt_) return false;
  if (screen_ == Screen::opening) return true;
  Pane* p = front_pane();
  return p && !p->ready();
}

void App::key(int32_t k) {
  // Esc cancels what the keys wait for (and drops them); q quits unless keys are already waiting
  // (it may be meant for a prompt they open). Everything else keeps its order.
  if (k == kKeyEsc) {
    queued_keys_.clear();
  } else if ((!queued_keys_.empty() || must_wait()) && !(k == 'q' && queued_keys_.empty())) {
    queued_keys_.push_back(k);
    return;
  }
  apply_key(k);
}

void App::drain_keys() {
  while (!queued_keys_.empty() && !must_wait()) {
    const int32_t k = queued_keys_.front();
    queued_keys_.pop_front();
    apply_key(k);
  }
}

void App::apply_key(int32_t k) {
  flash_.clear();
  if (prompt_) {
    const PromptKey what = edit_prompt(prompt_->text, k);
    if (what == PromptKey::edited) {
      auto on_event = prompt_->on_event;   // copies: the callback may open another prompt
      const std::string text = prompt_->text;
      on_event(text, PromptEvent::edit);
    } else if (what == PromptKey::accept || what == PromptKey::cancel) {
      auto on_event = std::move(prompt_->on_event);
      std::string text = std::move(prompt_->text);
      prompt_.reset();
      on_event(text, what == PromptKey::accept ? PromptEvent::accept : PromptEvent::cancel);
      if (screen_ == Screen::list && list_)
        if (std::string typed = list_->take_typed(); !typed.empty()) open_entry(typed);
    }
    return;
  }
  Action a;
  if (Pane* p = front_pane()) {
    if ((find_binding(k, p->context(), a) && p->act(a, *this)) ||
        (find_binding(k, Context::nav, a) && p->act(a, *this))) {
      if (screen_ == Screen::list && list_)
        if (const CatalogEntry* e = list_->take_chosen()) open_entry(e->open_path);
      return;
    }
  }
  if (find_binding(k, Context::global, a)) global_action(a, k);
}

void App::mouse(const InputEvent& ev) {
  // A click acts on its release (terminal.cpp); the press and other reports do nothing.
  if (ev.mouse == InputEvent::Mouse::press || ev.mouse == InputEvent::Mouse::other) return;
  Pane* p = front_pane();
  if (ev.mouse == InputEvent::Mouse::wheel_up || ev.mouse == InputEvent::Mouse::wheel_down) {
    if (p) p->wheel(ev.mouse == InputEvent::Mouse::wheel_up ? -3 : 3);
    return;
  }
  if (ev.y == 0 && view_ && screen_ == Screen::model) {
    if (ev.x >= title_size_.first && ev.x < title_size_.second)
      view_->show<FitPane>();   // the size: what it needs to run
    return;
  }
  if (ev.y == 1 && view_ && screen_ == Screen::model) {
    for (size_t i = 0; i < tab_spans_.size(); ++i)
      if (ev.x >= tab_spans_[i].first && ev.x < tab_spans_[i].second) view_->select_pane(i);
    return;
  }
  if (p && ev.y >= 2) p->click(ev.x, ev.y - 2, *this);
}

void App::handle(const InputEvent& ev) {
  if (ev.kind == InputEvent::Kind::key) key(ev.key);
  if (ev.kind == InputEvent::Kind::mouse) mouse(ev);
  if (ev.kind == InputEvent::Kind::quit_signal) quit_ = true;
}

void App::apply_background_results() {
  for (auto& apply : worker_.take_posted()) apply();
  drain_keys();
}

Rect App::pane_area(const Canvas& c) const { return Rect{0, 2, c.width(), c.height() - 3}; }

void App::draw_title(Canvas& c) {
  const bool alert = view_ && screen_ == Screen::model && view_->changed_on_disk();
  const Role role = alert ? Role::title_alert : Role::title;
  c.fill(0, 0, c.width(), role);
  std::string text;
  switch (screen_) {   // what the title says on each screen
    case Screen::list: {
      // Models that did not open are counted apart (a folder of malformed files holds no models).
      const size_t failed = list_->failed(), models = list_->size() - failed;
      text = fmt::format(" akview │ {} │ {} model{}{} │ {}", list_->where(), models, models == 1 ? "" : "s",
                         failed ? fmt::format(" · {} did not open", failed) : std::string(),
                         format_bytes(list_->total_bytes()));
      text += remote_note();
      break;
    }
    case Screen::opening: text = fmt::format(" akview │ opening {}", opening_path_); break;
    case Screen::error: text = fmt::format(" akview │ {}", opening_path_); break;
    case Screen::model: {
      if (alert) text = " CHANGED ON DISK (R reloads) │";
      const std::string note = remote_note();
      const int before = display_width(text);
      text += model_title(view_->session(), c.width() - before - display_width(note), &title_size_);
      title_size_ = {title_size_.first + before, title_size_.second + before};
      text += note;
      break;
    }
  }
  c.text(0, 0, text, role, c.width());
}

void App::draw_tabs(Canvas& c) {
  c.fill(0, 1, c.width(), Role::tab);
  tab_spans_.clear();
  if (screen_ != Screen::model) {
    c.text(1, 1, screen_ == Screen::list ? (help_open_ ? " Help " : " Models ") : " Model ", Role::tab_active,
           c.width() - 1);
    return;
  }
  // Full names a column apart when they fit, else without the gaps, else the active one named and
  // the others by number.
  const int n = static_cast<int>(view_->pane_count());
  int labels = 0;   // " N Title " each
  for (int i = 0; i < n; ++i) labels += static_cast<int>(view_->pane_row(static_cast<size_t>(i)).title.size()) + 4;
  const bool names = labels <= c.width();
  const int gap = names && labels + n - 1 <= c.width() ? 1 : 0;
  int x = 0;
  for (size_t i = 0; i < view_->pane_count(); ++i) {
    const bool active = i == view_->pane_index();
    const PaneRow& row = view_->pane_row(i);
    const std::string key = key_label(row.key);
    std::string label = names || active ? fmt::format(" {} {} ", key, row.title) : fmt::format(" {} ", key);
    int w = c.text(x, 1, label, active ? Role::tab_active : Role::tab, c.width() - x);
    tab_spans_.emplace_back(x, x + w);
    x += w + gap;
  }
}

void App::draw_status(Canvas& c) {
  const int y = c.height() - 1;
  if (prompt_) {
    c.fill(0, y, c.width(), Role::prompt);
    // What the typing found wrong ("no match", "bad pattern") stays on the prompt line, at the right.
    int right = c.width() - 1;
    if (!flash_.empty()) {
      const int w = std::min(display_width(flash_), c.width() / 2);
      right = c.width() - w - 1;
      c.text(right + 1, y, flash_, Role::status_key, w);
    }
    int used = c.text(0, y, fmt::format("{}: {}", prompt_->label, prompt_->text), Role::prompt, right - 1);
    c.put(used, y, U'█', Role::prompt);
    return;
  }
  c.fill(0, y, c.width(), Role::status);
  // Right: background work with a progress bar.
  int right = c.width();
  if (worker_.busy() > 0) {
    const std::string label = worker_.label();
    const double p = std::clamp(worker_.progress(), 0.0, 1.0);
    const int bar = std::min(10, c.width() / 8);
    const std::string pct = fmt::format(" {:3.0f}% Esc", 100 * p);
    const int need = display_width(label) + 1 + bar + static_cast<int>(pct.size());
    if (need < c.width() / 2) {
      right = c.width() - need;
      c.text(right, y, label, Role::status, display_width(label));
      const int filled = static_cast<int>(p * bar + 0.5);
      for (int k = 0; k < bar; ++k)
        c.put(right + display_width(label) + 1 + k, y, k < filled ? U'█' : U'░', Role::progress);
      c.text(c.width() - static_cast<int>(pct.size()), y, pct, Role::status, static_cast<int>(pct.size()));
    }
  }
  Pane* p = front_pane();
  std::string left = p ? p->position() : std::string();
  if (p && !p->state().empty()) left += " │ " + p->state();
  if (std::string fetching = transfer_line(); !fetching.empty()) left = fetching;
  int x = c.text(0, y, " " + left, Role::status, right - 1);
  if (!flash_.empty()) {
    c.text(x + 2, y, flash_, Role::status_key, right - x - 3);
  } else if (p && x + 4 < right) {
    // Every pane says how to go back and where the help is, before the pane's own hints.
    std::string hints = p->hints();
    std::string common;
    if (hints.find("Esc") == std::string::npos && (screen_ != Screen::list || help_open_)) common = "Esc back";
    if (hints.find("? help") == std::string::npos && !help_open_ && !help_in_front())
      common += common.empty() ? "? help" : "  ? help";
    if (!common.empty()) hints = hints.empty() ? common : common + "  " + hints;
    if (!hints.empty()) c.text(x + 3, y, hints, Role::status, right - x - 4);
  }
}

void App::draw_message(Canvas& c, const Rect& area) {
  if (screen_ == Screen::opening) {
    c.text(area.x + 2, area.y + 1, fmt::format("opening {} …", opening_path_), Role::normal, area.w - 4);
    c.text(area.x + 2, area.y + 3, "Esc cancels", Role::muted, area.w - 4);
    return;
  }
  c.text(area.x + 2, area.y + 1, "cannot open the model:", Role::error, area.w - 4);
  // The one-line error, wrapped at the width between its words (escaped by the wrapping).
  const int w = std::max(10, area.w - 4);
  int line = 0;
  for (const std::string& piece : wrap_text(error_, w)) {
    if (line >= area.h - 5) break;
    c.text(area.x + 2, area.y + 2 + line++, piece, Role::normal, w);
  }
  c.text(area.x + 2, area.y + 3 + line, list_ ? "Esc back to the list · q quit" : "q quit", Role::muted, area.w - 4);
}

void App::draw(Canvas& c) {
  c.clear();
  if (c.width() < kMinWidth || c.height() < kMinHeight) {
    const std::string msg =
        fmt::format("terminal too small ({}×{}, needs {}×{})", c.width(), c.height(), kMinWidth, kMinHeight);
    c.text(0, c.height() / 2, msg, Role::warn, c.width());
    return;
  }
  if (Pane* p = front_pane()) p->before_frame(*this);
  draw_title(c);
  draw_tabs(c);
  const Rect area = pane_area(c);
  if (Pane* p = front_pane()) p->draw(c, area);
  else draw_message(c, area);
  draw_status(c);
}

void App::frame_shown() {
  // A model's background work starts once its first frame is on the screen: the first frame comes
  // as soon as the open is done; the names are packed, the name map and the statistics come after.
  if (view_ && screen_ == Screen::model) view_->start_jobs();
}

int App::run(Terminal& terminal) {
  install_quit_signals();
  Canvas canvas;
  uint64_t frames = 0, events = 0;
  bool dirty = true, progress_moved = false;
  auto last_frame = Clock::now(), last_check = Clock::now();
  while (!quit_) {
    const auto now = Clock::now();
    if (worker_.has_news()) {
      auto posted = worker_.take_posted();
      for (auto& apply : posted) apply();
      if (!posted.empty()) dirty = true;
      else progress_moved = true;
    }
    if (remote::transfer_stats().in_flight > 0) progress_moved = true;   // the transfer line moves
    if (!queued_keys_.empty()) {
      const size_t before = queued_keys_.size();
      drain_keys();
      if (queued_keys_.size() != before) dirty = true;
    }
    if (progress_moved && now - last_frame >= std::chrono::milliseconds(100)) dirty = true;
    if (view_ && screen_ == Screen::model && now - last_check >= std::chrono::seconds(1)) {
      last_check = now;
      if (view_->check_files()) dirty = true;
    }
    if (dirty) {
      canvas.resize(terminal.width(), terminal.height());
      draw(canvas);
      terminal.present(canvas);
      frame_shown();
      ++frames;
      if (options_.test_sync)
        terminal.write_raw(fmt::format("\033]7777;frame={};keys={};busy={};size={}x{}\007", frames, events,
                                       worker_.busy() + static_cast<int>(queued_keys_.size()), canvas.width(),
                                       canvas.height()));
      dirty = progress_moved = false;
      last_frame = now;
    }
    InputEvent ev = terminal.read(25);
    switch (ev.kind) {   // every event but a timeout redraws
      case InputEvent::Kind::none: break;
      case InputEvent::Kind::resize: dirty = true; break;
      case InputEvent::Kind::quit_signal: quit_ = true; break;
      case InputEvent::Kind::key:
      case InputEvent::Kind::mouse:
        // The test protocol's event count: a key, a wheel step, and a click (at its release, where
        // it acts); presses, motion and other reports do not count.
        if (ev.kind == InputEvent::Kind::key || ev.mouse == InputEvent::Mouse::release ||
            ev.mouse == InputEvent::Mouse::wheel_up || ev.mouse == InputEvent::Mouse::wheel_down)
          ++events;
        handle(ev);
        dirty = true;
        break;
    }
  }
  return 0;
}

}   // namespace akview::tui
