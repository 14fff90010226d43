// The model list (model_list.hpp).
#include "ui/tui/model_list.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "ui/tui/text_search.hpp"

#include "ui/batch/printers.hpp"

namespace akview::tui {
namespace {

struct ListColumn {
  std::string_view title;
  int width;      // 0: the name column (what is left)
  int priority;   // lower stays longer
  bool right;
};
constexpr ListColumn kListColumns[] = {
    {"model", 0, 0, false}, {"format", 20, 2, false}, {"size", 10, 1, true},
    {"params", 7, 3, true}, {"main type", 20, 4, false}, {"files", 5, 5, true},
};

bool icontains(std::string_view hay, std::string_view needle) {
  return needle.empty() || find_ignore_case(hay, lower_ascii(needle)) != std::string_view::npos;
}

}  // namespace

ModelList::ModelList(std::string where, std::vector<CatalogEntry> entries, Worker& worker)
    : where_(std::move(where)), entries_(std::make_shared<std::vector<CatalogEntry>>(std::move(entries))) {
  // Each entry's header is read on the worker; results come back one by one.
  Job job;
  job.label = "reading model headers";
  std::vector<CatalogEntry> todo = *entries_;
  job.run = [list = entries_, todo = std::move(todo)](JobContext& ctx) mutable {
    for (size_t i = 0; i < todo.size() && !ctx.cancelled(); ++i) {
      describe_catalog_entry(todo[i], &ctx.cancel());
      ctx.post([list, i, e = todo[i]] {
        if (i < list->size()) (*list)[i] = e;
      });
      ctx.progress(static_cast<double>(i + 1) / todo.size());
    }
  };
  worker.submit(std::move(job));
}

uint64_t ModelList::total_bytes() const {
  uint64_t n = 0;
  for (const auto& e : *entries_) n += e.size_bytes;
  return n;
}

const CatalogEntry* ModelList::take_chosen() {
  if (!chosen_ || entries_->empty()) return nullptr;
  chosen_ = false;
  return &(*entries_)[static_cast<size_t>(cursor_.pos)];
}

void ModelList::draw(Canvas& c, const Rect& area) {
  page_ = std::max(1, area.h - 1);
  cursor_.clamp(static_cast<int64_t>(entries_->size()), page_);
  // Columns by priority, the name takes the rest.
  std::vector<const ListColumn*> cols;
  for (const ListColumn& col : kListColumns) cols.push_back(&col);
  auto fixed = [&] {
    int w = 0;
    for (auto* col : cols) w += col->width ? col->width + 1 : 0;
    return w;
  };
  while (cols.size() > 1 && area.w - fixed() < std::clamp(area.w / 3, 12, 30))
    cols.erase(std::max_element(cols.begin(), cols.end(), [](auto* a, auto* b) { return a->priority < b->priority; }));
  // The name column is as wide as the longest name (or what is left); space beyond that lets a long
  // main type ("ollama.int4 4-bit g64") show whole instead of leaving a gap after the names.
  int longest_name = display_width("model"), longest_type = 0;
  for (const CatalogEntry& e : *entries_) {
    longest_name = std::max(longest_name, display_width(e.name));
    longest_type = std::max(longest_type, display_width(e.main_type));
  }
  const int name_w = std::max(1, std::min(area.w - fixed(), longest_name));
  const int spare = std::max(0, area.w - fixed() - name_w);
  auto width_of = [&](const ListColumn* col) {
    if (!col->width) return name_w;
    return col->title == "main type" ? col->width + std::clamp(longest_type - col->width, 0, spare) : col->width;
  };
  c.fill(area.x, area.y, area.w, Role::header);
  int x = area.x;
  for (auto* col : cols) {
    int w = width_of(col);
    if (col->right) c.text_right(x, area.y, w, col->title, Role::header);
    else c.text(x, area.y, col->title, Role::header, w);
    x += w + 1;
  }
  if (entries_->empty()) {
    c.text(area.x + 1, area.y + 2, "no models found here", Role::muted, area.w - 2);
    return;
  }
  for (int k = 0; k < page_; ++k) {
    int64_t i = cursor_.top + k;
    if (i >= static_cast<int64_t>(entries_->size())) break;
    const CatalogEntry& e = (*entries_)[static_cast<size_t>(i)];
    const int y = area.y + 1 + k;
    x = area.x;
    for (auto* col : cols) {
      int w = width_of(col);
      std::string text;
      Role role = Role::normal;
      if (col->title == "model") {
        text = e.name;
        role = Role::key;
      } else if (!e.described) {
        text = col->title == "format" ? "…" : "";
        role = Role::muted;
      } else if (!e.error.empty()) {
        if (col->title == "format") {
          text = "cannot open";
          role = Role::error;
        }
      } else if (col->title == "format") {
        text = e.format;
        role = Role::muted;
      } else if (col->title == "size") {
        text = format_bytes(e.size_bytes);
        role = Role::number;
      } else if (col->title == "params") {
        text = format_count(e.parameters);
        role = Role::number;
      } else if (col->title == "main type") {
        text = e.main_type;
        role = Role::type_quant;
      } else if (col->title == "files") {
        text = std::to_string(e.files);
        role = Role::number;
      }
      if (col->right) c.text_right(x, y, w, text, role);
      else c.text(x, y, text, role, w);
      x += w + 1;
    }
    if (i == cursor_.pos) c.restyle(area.x, y, area.w, Role::selected);
  }
}

bool ModelList::act(Action action, PaneHost& host) {
  const int64_t n = static_cast<int64_t>(entries_->size());
  if (cursor_.act(action, n, page_)) return true;
  auto find = [&](const std::string& needle, int64_t from, int dir) -> int64_t {
    for (int64_t k = 0; k < n; ++k) {
      int64_t i = ((from + (dir >= 0 ? k : -k)) % n + n) % n;
      if (icontains((*entries_)[static_cast<size_t>(i)].name, needle)) return i;
    }
    return -1;
  };
  switch (action) {   // the model list's own bindings
    case Action::open: chosen_ = n > 0; return true;
    case Action::search: {
      const int64_t start = cursor_.pos;
      host.prompt("search", "", [this, start, find](const std::string& text, PromptEvent ev) {
        if (ev == PromptEvent::cancel) {
          cursor_.pos = start;
          return;
        }
        if (int64_t i = find(text, start, 1); i >= 0) cursor_.pos = i;
        if (ev == PromptEvent::accept) search_ = text;
      });
      return true;
    }
    case Action::search_next:
    case Action::search_prev: {
      if (n == 0 || search_.empty()) return true;
      const int dir = action == Action::search_next ? 1 : -1;
      if (int64_t i = find(search_, cursor_.pos + dir, dir); i >= 0) cursor_.pos = i;
      return true;
    }
    default: return false;
  }
}

void ModelList::click(int, int y, PaneHost&) {
  if (y < 1) return;
  cursor_.pos = cursor_.top + y - 1;
  cursor_.clamp(static_cast<int64_t>(entries_->size()), page_);
}

void ModelList::wheel(int rows) { cursor_.scroll(rows, static_cast<int64_t>(entries_->size()), page_); }

std::string ModelList::position() const {
  return fmt::format("model {}/{}", entries_->empty() ? 0 : cursor_.pos + 1, entries_->size());
}

}  // namespace akview::tui
