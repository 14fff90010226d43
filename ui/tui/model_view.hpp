// One opened model on screen: its session, the panes of the pane table (pane_table.hpp; Diff only with a
// second model), and the background jobs that fill it in (the name map, then value statistics, rows on
// screen first).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ui/tui/pane.hpp"
#include "ui/tui/pane_table.hpp"
#include "ui/tui/session.hpp"
#include "ui/tui/value_stats.hpp"

namespace akview::tui {

class ModelView {
 public:
  // Starts the name-map and statistics jobs on `worker` (`start_jobs` false: not yet; the shell
  // starts them after the model's first frame, see start_jobs()). With `ref` (akview A --ref B) an eighth pane, Diff,
  // compares the model with it, and Compute compares each run with its tensor.
  ModelView(std::shared_ptr<ModelSession> session, Worker& worker, bool start_jobs = true,
            std::shared_ptr<ModelSession> ref = nullptr);

  ModelSession& session() { return *session_; }
  const std::shared_ptr<ModelSession>& shared_session() const { return session_; }
  const std::shared_ptr<ModelSession>& ref() const { return ref_; }
  const std::shared_ptr<StatsPlan>& stats_plan() const { return plan_; }

  // The panes by tab: the one in front, how many, each one's row of the pane table.
  Pane& pane() { return *panes_[current_].pane; }
  size_t pane_index() const { return current_; }
  size_t pane_count() const { return panes_.size(); }
  const PaneRow& pane_row(size_t i) const { return *panes_[i].row; }
  void select_pane(size_t i) { current_ = i < panes_.size() ? i : current_; }
  // The pane shown by `key` (pane_table.hpp) to the front; false when the view has none.
  bool select_pane_by_key(int32_t key);
  // The pane of type P (nullptr when the view has none), whether it is in front, and bringing it there.
  template <typename P>
  P* find() {
    for (Shown& s : panes_)
      if (auto* p = dynamic_cast<P*>(s.pane.get())) return p;
    return nullptr;
  }
  template <typename P>
  bool showing() const {
    return dynamic_cast<const P*>(panes_[current_].pane.get()) != nullptr;
  }
  template <typename P>
  void show() {
    for (size_t i = 0; i < panes_.size(); ++i)
      if (dynamic_cast<P*>(panes_[i].pane.get())) current_ = i;
  }

  void restart_stats();
  // Packs the model's names (Model::pack_names) and drops its header's pages, then starts the
  // name-map and statistics jobs; the shell calls it once the first frame is shown, so none of it
  // delays that frame (idempotent).
  void start_jobs();
  // Checks the files' size and mtime (call about once a second); true when that changed the answer.
  bool check_files();
  bool changed_on_disk() const { return changed_; }

 private:
  std::shared_ptr<ModelSession> session_;
  std::shared_ptr<ModelSession> ref_;
  Worker& worker_;
  std::shared_ptr<StatsPlan> plan_;
  struct Shown {
    const PaneRow* row;
    std::unique_ptr<Pane> pane;
  };
  std::vector<Shown> panes_;
  size_t current_ = 0;
  bool changed_ = false;
  bool jobs_started_ = false;
  std::shared_ptr<bool> stats_active_ = std::make_shared<bool>(false);   // a stats job is queued or running
};

}   // namespace akview::tui
