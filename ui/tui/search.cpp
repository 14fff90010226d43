// One search for every list (search.hpp).
#include "ui/tui/search.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace akview::tui {

int64_t Search::find_from(int64_t from, int dir) const {
  const int64_t n = target_.size();
  if (n <= 0 || !active()) return -1;
  from = ((from % n) + n) % n;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = ((from + (dir >= 0 ? k : -k)) % n + n) % n;
    if (target_.matches(i, pattern_)) return i;
  }
  return -1;
}

const std::vector<int64_t>& Search::matches() const {
  const uint64_t version = target_.version ? target_.version() : 0;
  const int64_t n = target_.size();
  if (counted_term_ != pattern_.text() || counted_version_ != version || counted_size_ != n) {
    matches_.clear();
    if (active())
      for (int64_t i = 0; i < n; ++i)
        if (target_.matches(i, pattern_)) matches_.push_back(i);
    counted_term_ = pattern_.text();
    counted_version_ = version;
    counted_size_ = n;
  }
  return matches_;
}

void Search::open(PaneHost& host) {
  const int64_t origin = std::max<int64_t>(0, target_.current());
  const Pattern before = pattern_;
  host.prompt(std::string(kSearchPrompt), "", [this, origin, before, &host](const std::string& text, PromptEvent ev) {
    if (ev == PromptEvent::cancel) {
      pattern_ = before;
      target_.go(origin);
      return;
    }
    Pattern p(text);
    if (!p.valid()) {
      host.flash(p.error());   // while typing "[a" is not yet a pattern: it says so, nothing moves
      if (ev == PromptEvent::accept) pattern_ = before;
      return;
    }
    const bool wait = ev == PromptEvent::edit && p.is_regex() && target_.size() > target_.live_regex_max;
    if (wait) return;
    pattern_ = std::move(p);
    if (pattern_.empty()) {
      target_.go(origin);
      if (ev == PromptEvent::accept) pattern_ = before;
      return;
    }
    const int64_t at = find_from(origin, 1);
    if (at >= 0) target_.go(at);
    else {
      target_.go(origin);
      host.flash(fmt::format("no match for '{}'", text));
    }
  });
}

void Search::next(PaneHost& host, int dir) {
  if (!active()) {
    host.flash("no search yet: / searches");
    return;
  }
  const int64_t at = find_from(target_.current() + dir, dir);
  if (at < 0) host.flash(fmt::format("no match for '{}'", pattern_.text()));
  else target_.go(at);
}

std::string Search::status() const {
  if (!active()) return {};
  const std::vector<int64_t>& m = matches();
  if (m.empty()) return fmt::format("no match '{}'", pattern_.text());
  const int64_t here = target_.current();
  auto it = std::lower_bound(m.begin(), m.end(), here);
  if (it != m.end() && *it == here)
    return fmt::format("match {}/{} '{}'", it - m.begin() + 1, m.size(), pattern_.text());
  return fmt::format("{} match{} '{}'", m.size(), m.size() == 1 ? "" : "es", pattern_.text());
}

void step_plain_search(PaneHost& host, const std::string& term, int64_t current, int dir,
                       const std::function<int64_t(int64_t, int)>& find, const std::function<void(int64_t)>& go) {
  if (term.empty()) {
    host.flash("no search yet: / searches");
    return;
  }
  const int64_t at = find(current + dir, dir);
  if (at < 0) host.flash(fmt::format("no match for '{}'", term));
  else go(at);
}

}   // namespace akview::tui
