// The model list: the models a store, a cache or a folder holds (core/catalog.hpp), one row each
// with name, format, size, parameters, main type and files, filled in by the worker (headers only).
// Under the list, where the height allows, a panel tells more about the selected model: its path,
// format and architecture, tensors, type mix, config numbers and files.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/catalog.hpp"
#include "ui/tui/pane.hpp"
#include "ui/tui/search.hpp"

namespace akview::tui {

// Will it fit, in `width` columns: the memory to run the model at each context of its fit table
// ("2.10 GiB at 4k tokens · 2.40 GiB at 8k · 5.20 GiB at 128k"); where they do not all fit, the first
// and the last (the trained context) stay and "…" stands for those between.
std::string fit_totals(const std::vector<fit::FitTableRow>& rows, int width);

class ModelList : public Pane {
 public:
  // `where`: what the title bar shows ("local stores" or the folder).
  ModelList(std::string where, std::vector<CatalogEntry> entries, Worker& worker);
  Context context() const override { return Context::model_list; }
  void draw(Canvas& canvas, const Rect& area) override;
  bool act(Action action, PaneHost& host) override;
  void click(int x, int y, PaneHost& host) override;
  void wheel(int rows) override;
  std::string position() const override;
  std::string state() const override { return search_.status(); }
  std::string hints() const override { return "Enter open  / search  ? help  q quit"; }

  const std::string& where() const { return where_; }
  size_t size() const { return entries_->size(); }
  uint64_t total_bytes() const;   // every entry's files, those of models that did not open too
  size_t failed() const;          // entries described so far that did not open
  // The entry Enter chose (cleared by the caller), or nullptr.
  const CatalogEntry* take_chosen();
  // A path or address typed after `o` (cleared by the caller), or "".
  std::string take_typed() { return std::exchange(typed_, std::string()); }

 private:
  void draw_detail(Canvas& canvas, const Rect& area);
  Search::Target search_target();

  std::string where_;
  std::shared_ptr<std::vector<CatalogEntry>> entries_;
  ListView list_;
  std::shared_ptr<std::atomic<int64_t>> wanted_ =
      std::make_shared<std::atomic<int64_t>>(0);   // the worker describes it next
  Search search_{search_target()};
  bool chosen_ = false;
  std::string typed_;
};

}   // namespace akview::tui
