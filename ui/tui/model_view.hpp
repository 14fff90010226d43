// One opened model on screen: its session, the panes in PRODUCT.md's order (Diff with a second model), and the
// background jobs that fill it in (the name map, then value statistics, rows on screen first).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ui/tui/pane.hpp"
#include "ui/tui/session.hpp"
#include "ui/tui/value_stats.hpp"

namespace akview::tui {

class TensorsPane;

inline constexpr size_t kHelpPane = 6;   // the panes in PRODUCT.md's order: Help is the seventh

class ModelView {
 public:
  // Starts the name-map and statistics jobs on `worker` (`start_jobs` false: not yet; the shell
  // starts them after the model's first frame, see start_jobs()). With `ref` (akview A --ref B) an eighth pane, Diff,
  // compares the model with it, and Compute compares each run with its tensor.
  ModelView(std::shared_ptr<ModelSession> session, Worker& worker, bool start_jobs = true,
            std::shared_ptr<ModelSession> ref = nullptr);

  ModelSession& session() { return *session_; }
  const std::shared_ptr<ModelSession>& shared_session() const { return session_; }
  Pane& pane() { return *panes_[current_]; }
  size_t pane_index() const { return current_; }
  size_t pane_count() const { return panes_.size(); }
  std::string_view pane_title(size_t i) const { return panes_[i]->title(); }
  void select_pane(size_t i) { current_ = i < panes_.size() ? i : current_; }
  TensorsPane& tensors();
  const std::shared_ptr<ModelSession>& ref() const { return ref_; }

  void restart_stats();
  // The name-map and statistics jobs; the shell starts them once the first frame is drawn, so they
  // do not compete with it for the CPU (idempotent).
  void start_jobs();
  // Checks the files' size and mtime (call about once a second); true when that changed the answer.
  bool check_files();
  bool changed_on_disk() const { return changed_; }

 private:
  std::shared_ptr<ModelSession> session_;
  std::shared_ptr<ModelSession> ref_;
  Worker& worker_;
  std::shared_ptr<StatsPlan> plan_;
  std::vector<std::unique_ptr<Pane>> panes_;
  size_t current_ = 0;
  bool changed_ = false;
  bool jobs_started_ = false;
  std::shared_ptr<bool> stats_active_ = std::make_shared<bool>(false);   // a stats job is queued or running
};

}  // namespace akview::tui
