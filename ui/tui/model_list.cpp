// The model list (model_list.hpp).
#include "ui/tui/model_list.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "ui/tui/text_search.hpp"

#include "core/remote/mirror.hpp"
#include "ui/batch/explain_report.hpp"
#include "ui/text/format.hpp"

namespace akview::tui {

std::string fit_totals(const std::vector<fit::FitTableRow>& rows, int width) {
  auto at = [&](size_t i) {
    const uint64_t c = rows[i].context;
    return fmt::format("{} at {}{}", format_bytes(rows[i].total),
                       c % 1024 ? fmt::format("{}", c) : fmt::format("{}k", c / 1024), i == 0 ? " tokens" : "");
  };
  auto joined = [&](size_t head) {   // rows [0, head) and the last, "…" between when some are left out
    std::string s;
    for (size_t i = 0; i < head && i + 1 < rows.size(); ++i) s += at(i) + " · ";
    if (head + 1 < rows.size()) s += "… · ";
    return s + at(rows.size() - 1);
  };
  for (size_t head = rows.size() - 1; head > 0; --head)
    if (const std::string s = joined(head); display_width(s) <= width) return s;
  return joined(0);
}

namespace {

struct ListColumn {
  std::string_view title;
  int width;      // 0: the name column (what is left)
  int priority;   // lower stays longer
  bool right;
};
constexpr ListColumn kListColumns[] = {
    {"model", 0, 0, false}, {"format", 20, 2, false},    {"size", 10, 1, true},
    {"params", 7, 3, true}, {"main type", 20, 4, false}, {"files", 5, 5, true},
};

// The detail panel under the list needs this many rows (title and at least the first lines) to be shown.
constexpr int kMinDetailRows = 8;
constexpr int kMaxTypeLines = 4;

// How the panel shows a path: below `root` (the folder listed, as given or made absolute: Ollama
// blob paths are absolute) or below the model's own folder, without it; else under $HOME as ~/…;
// else whole.
std::string shown_path(const std::string& path, std::initializer_list<std::string_view> roots) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p = fs::path(path).lexically_normal();
  for (std::string_view root : roots) {
    if (root.empty()) continue;
    for (const fs::path& base : {fs::path(root).lexically_normal(), fs::absolute(root, ec).lexically_normal()}) {
      const fs::path rel = p.lexically_relative(base);
      if (!base.empty() && !rel.empty() && *rel.begin() != ".." && rel != ".") return rel.string();
    }
  }
  if (const char* home = std::getenv("HOME"); home && *home && fs::path(home).lexically_normal() != "/") {
    const fs::path rel = p.lexically_relative(fs::path(home).lexically_normal());
    if (!rel.empty() && *rel.begin() != ".." && p.is_absolute()) return rel == "." ? "~" : "~/" + rel.string();
  }
  return path;
}

// "4 layers · dim 256 · 8 heads (4 kv) · ffn 688 · context 2048 · vocab 512": the numbers a reader
// compares first; the Mapping pane shows all of them with their sources.
std::string config_summary(const ModelConfig& c) {
  std::string out;
  auto add = [&](const ConfigValue& v, std::string_view before, std::string_view after) {
    if (!v.present) return;
    out += fmt::format("{}{}{}{}", out.empty() ? "" : " · ", before, static_cast<uint64_t>(v.value), after);
  };
  add(c.layers, "", " layers");
  add(c.dim, "dim ", "");
  add(c.heads, "", " heads");
  if (c.kv_heads.present && c.heads.present) out += fmt::format(" ({} kv)", static_cast<uint64_t>(c.kv_heads.value));
  add(c.ffn_dim, "ffn ", "");
  add(c.context, "context ", "");
  add(c.vocab, "vocab ", "");
  return out;
}

// What the panel under the list says about one model (filled by the header-only describe).
std::vector<DetailLine> entry_lines(const CatalogEntry& e, const std::string& root, int width, int rows) {
  std::vector<DetailLine> out;
  auto add = [&](std::string label, std::string value, Role role = Role::normal) {
    out.push_back({std::move(label), std::move(value), role});
  };
  add("path", shown_path(remote::display_path(e.open_path), {}), Role::key);   // an address for a remote one
  if (!e.described) {
    add("", "reading its header…", Role::muted);
    return out;
  }
  if (!e.error.empty()) {
    bool first = true;
    for (std::string& line : wrap_words(e.error, static_cast<size_t>(std::max(8, width))))
      add(std::exchange(first, false) ? "cannot open" : "", std::move(line), Role::error);
    return out;
  }
  std::string format = e.format;
  if (!e.config.arch.empty()) format += " · " + e.config.arch;
  if (!e.model_name.empty()) format += fmt::format(" · \"{}\"", e.model_name);
  add("format", format);
  add("size",
      fmt::format("{} in {} file{}", format_bytes(e.size_bytes), e.files.size(), e.files.size() == 1 ? "" : "s"),
      Role::number);
  add("tensors", fmt::format("{} · {} parameters", e.tensors, format_count(e.parameters)), Role::number);
  uint64_t bytes = 0;
  for (const CatalogType& t : e.types) bytes += t.bytes;
  for (size_t k = 0; k < e.types.size() && k < kMaxTypeLines; ++k) {
    const CatalogType& t = e.types[k];
    const double pct = bytes ? 100.0 * static_cast<double>(t.bytes) / static_cast<double>(bytes) : 0;
    const std::string share = pct < 0.5 && t.bytes ? "<1%" : fmt::format("{:.0f}%", pct);
    add(k ? "" : "types",
        fmt::format("{:>4}  {:>10}  {:>5} tensor{}  {}", share, format_bytes(t.bytes), t.tensors,
                    t.tensors == 1 ? " " : "s", t.type),
        Role::type_quant);
  }
  if (e.types.size() > kMaxTypeLines)
    add("", fmt::format("… {} more types", e.types.size() - kMaxTypeLines), Role::muted);
  if (std::string config = config_summary(e.config); !config.empty()) add("config", config);
  if (!e.config.quantization.empty()) add("quantization", e.config.quantization);
  if (!e.fit.empty()) {   // will it fit (the model's Fit pane, 9, has the rest)
    add("fit", fit_totals(e.fit, width), Role::number);
    add("", fmt::format("{}, {} KV cache", e.fit_runtime, e.fit_kv_type), Role::muted);
  }
  // The files, one row each, except that a role held by kGroupAt files or more (an Ollama model's
  // tensor blobs: one per tensor) is one row: their count, total size and common folder. As many
  // rows as fit; the last row says how many files did not.
  constexpr size_t kGroupAt = 4;
  struct FileRow {
    uint64_t size = 0;
    std::string role, path;
    size_t files = 1;
    bool group = false;
  };
  std::vector<FileRow> file_rows;
  std::error_code ec;
  const std::string model_dir = std::filesystem::is_directory(e.open_path, ec) ? e.open_path : std::string();
  struct RoleCount {
    size_t files = 0, row = SIZE_MAX;   // row: its group's row, once made
  };
  std::map<std::string_view, RoleCount> per_role;   // (the panel is drawn every frame: one pass, not one per file)
  for (const CatalogFile& f : e.files) ++per_role[f.role].files;
  for (const CatalogFile& f : e.files) {
    const std::string path = shown_path(f.path, {root, model_dir});
    RoleCount& role = per_role[f.role];
    if (role.files < kGroupAt) {
      file_rows.push_back({f.size, f.role, path});
      continue;
    }
    const std::string dir = path.substr(0, path.rfind('/') + 1);   // "" for a bare name
    if (role.row == SIZE_MAX) {
      role.row = file_rows.size();
      file_rows.push_back({0, f.role, dir, 0, true});
    }
    FileRow& g = file_rows[role.row];
    if (g.path != dir) g.path = "(several folders)";
    g.size += f.size, ++g.files;
  }
  for (FileRow& r : file_rows)
    if (r.group) r.role = fmt::format("{} {}s", r.files, r.role);
  const int left = rows - static_cast<int>(out.size());
  const size_t shown = file_rows.size() <= static_cast<size_t>(std::max(0, left))
                           ? file_rows.size()
                           : static_cast<size_t>(std::max(0, left - 1));
  int role_w = 0;
  for (size_t k = 0; k < shown; ++k) role_w = std::max(role_w, display_width(file_rows[k].role));
  size_t files_shown = 0;
  for (size_t k = 0; k < shown; ++k) {
    const FileRow& r = file_rows[k];
    add(k ? "" : "files", fmt::format("{:>10}  {:<{}}  {}", format_bytes(r.size), r.role, role_w, r.path), Role::muted);
    files_shown += r.files;
  }
  if (shown < file_rows.size() && left > 0)
    add(shown ? "" : "files", fmt::format("… {} more files", e.files.size() - files_shown), Role::muted);
  return out;
}

}   // namespace

ModelList::ModelList(std::string where, std::vector<CatalogEntry> entries, Worker& worker)
    : where_(std::move(where)), entries_(std::make_shared<std::vector<CatalogEntry>>(std::move(entries))) {
  // Each entry's header is read on the worker; results come back one by one. The selected entry
  // goes first (the panel under the list waits for it), then the rest in order.
  Job job;
  job.label = "reading model headers";
  std::vector<CatalogEntry> todo = *entries_;
  job.run = [list = entries_, wanted = wanted_, todo = std::move(todo)](JobContext& ctx) mutable {
    std::vector<bool> done(todo.size());
    size_t next = 0;
    for (size_t finished = 0; finished < todo.size() && !ctx.cancelled(); ++finished) {
      size_t i = static_cast<size_t>(wanted->load(std::memory_order_relaxed));
      if (i >= todo.size() || done[i]) {
        while (done[next]) ++next;
        i = next;
      }
      done[i] = true;
      describe_catalog_entry(todo[i], &ctx.cancel());
      ctx.post([list, i, e = std::move(todo[i])] {
        if (i < list->size()) (*list)[i] = e;
      });
      ctx.progress(static_cast<double>(finished + 1) / todo.size());
    }
  };
  worker.submit(std::move(job));
}

uint64_t ModelList::total_bytes() const {
  uint64_t n = 0;
  for (const auto& e : *entries_) n += e.size_bytes;
  return n;
}

size_t ModelList::failed() const {
  return static_cast<size_t>(std::count_if(entries_->begin(), entries_->end(),
                                           [](const CatalogEntry& e) { return e.described && !e.error.empty(); }));
}

const CatalogEntry* ModelList::take_chosen() {
  if (!chosen_ || entries_->empty()) return nullptr;
  chosen_ = false;
  return &(*entries_)[static_cast<size_t>(list_.cursor.pos)];
}

void ModelList::draw(Canvas& c, const Rect& area) {
  // The list takes the rows it needs; a panel about the selected model takes the rest, when the
  // height leaves it room (with a long list, the list keeps all but kMinDetailRows).
  const int n_rows = static_cast<int>(std::min<size_t>(entries_->size(), 1 << 20));
  const bool detail = !entries_->empty() && area.h - 1 - kMinDetailRows >= 3 && area.w >= 30;
  list_.page = detail ? std::clamp(n_rows, 1, area.h - 1 - kMinDetailRows) : std::max(1, area.h - 1);
  list_.clamp(static_cast<int64_t>(entries_->size()));
  wanted_->store(list_.cursor.pos, std::memory_order_relaxed);
  // The format and main type columns are as wide as what they hold (the title at least, their
  // table width at most; a long main type such as "ollama.int4 4-bit g64" a little more).
  int longest_name = display_width("model"), longest_type = 0, longest_format = 0;
  for (const CatalogEntry& e : *entries_) {
    longest_name = std::max(longest_name, display_width(e.name));
    longest_type = std::max(longest_type, display_width(e.main_type()));
    longest_format = std::max(longest_format, display_width(e.format));
  }
  auto content_width = [&](const ListColumn* col) {
    const int title = display_width(col->title);
    if (longest_format == 0) return col->width;   // nothing read yet: the table's widths
    if (col->title == "format") return std::clamp(longest_format, title, col->width);
    if (col->title == "main type") return std::clamp(longest_type, title, col->width + 4);
    return col->width;
  };
  // Columns by priority; one is dropped only when the names would get less than a fifth of the
  // width (they are cut in the middle, so a narrower name column still tells them apart).
  std::vector<const ListColumn*> cols;
  for (const ListColumn& col : kListColumns) cols.push_back(&col);
  auto fixed = [&] {
    int w = 0;
    for (auto* col : cols) w += col->width ? content_width(col) + 1 : 0;
    return w;
  };
  const int min_name = std::min(longest_name, std::clamp(area.w / 5, 12, 30));
  while (cols.size() > 1 && area.w - fixed() < min_name)
    cols.erase(std::max_element(cols.begin(), cols.end(), [](auto* a, auto* b) { return a->priority < b->priority; }));
  const int name_w = std::max(1, std::min(area.w - fixed(), longest_name));
  auto width_of = [&](const ListColumn* col) { return col->width ? content_width(col) : name_w; };
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
  for (int k = 0; k < list_.page; ++k) {
    int64_t i = list_.cursor.top + k;
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
        if (search_.active()) {   // drawn first, restyled where the term matched
          c.text(x, y, text, role, w);
          highlight_match(c, x, y, w, text, search_.pattern());
          x += w + 1;
          continue;
        }
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
        text = e.main_type();
        role = Role::type_quant;
      } else if (col->title == "files") {
        text = std::to_string(e.files.size());
        role = Role::number;
      }
      if (col->right) c.text_right(x, y, w, text, role);
      else if (col->title == "model") c.text_middle(x, y, text, role, w);
      else c.text(x, y, text, role, w);
      x += w + 1;
    }
    if (i == list_.cursor.pos) c.restyle(area.x, y, area.w, Role::selected);
  }
  if (detail) draw_detail(c, {area.x, area.y + 1 + list_.page, area.w, area.h - 1 - list_.page});
}

void ModelList::draw_detail(Canvas& c, const Rect& area) {
  const CatalogEntry& e = (*entries_)[static_cast<size_t>(list_.cursor.pos)];
  c.fill(area.x, area.y, area.w, Role::header);
  c.text(area.x + 1, area.y, e.name, Role::header, area.w - 2);
  const int label_w = 14;
  const int rows = area.h - 1;
  draw_detail_lines(c, area.x, area.y + 1, area.w, rows, label_w, entry_lines(e, where_, area.w - label_w - 1, rows));
}

bool ModelList::act(Action action, PaneHost& host) {
  const int64_t n = static_cast<int64_t>(entries_->size());
  if (list_.act(action, n)) return true;
  switch (action) {   // the model list's own bindings
    case Action::open: chosen_ = n > 0; return true;
    case Action::open_address:
      host.prompt("open (a path, hf://ORG/REPO, ollama://MODEL:TAG or a URL)", "",
                  [this](const std::string& text, PromptEvent ev) {
                    if (ev == PromptEvent::accept && !text.empty()) typed_ = text;
                  });
      return true;
    case Action::search: search_.open(host); return true;
    case Action::search_next:
    case Action::search_prev: search_.next(host, action == Action::search_next ? 1 : -1); return true;
    default: return false;
  }
}

Search::Target ModelList::search_target() {
  Search::Target t;
  t.size = [this] { return static_cast<int64_t>(entries_->size()); };
  t.current = [this] { return entries_->empty() ? -1 : list_.cursor.pos; };
  t.matches = [this](int64_t i, const Pattern& p) { return p.matches((*entries_)[static_cast<size_t>(i)].name); };
  t.go = [this](int64_t i) {
    list_.cursor.pos = i;
    list_.clamp(static_cast<int64_t>(entries_->size()));
  };
  return t;
}

void ModelList::click(int, int y, PaneHost&) {
  list_.click(y, static_cast<int64_t>(entries_->size()));   // not on the column headers, the detail panel
}

void ModelList::wheel(int rows) { list_.wheel(rows, static_cast<int64_t>(entries_->size())); }

std::string ModelList::position() const { return list_.position("model", static_cast<int64_t>(entries_->size())); }

}   // namespace akview::tui
