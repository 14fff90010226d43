// Value statistics for the Tensors table, computed on the worker: rows on screen first (the UI
// tells the plan which tensors are visible before each frame), then every other tensor in model
// order. Results reach the session in batches through posted closures.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ui/tui/session.hpp"
#include "ui/tui/worker.hpp"

namespace akview::tui {

// Shared between the UI (which sets `visible`) and the job (which reads it).
class StatsPlan {
 public:
  void set_visible(std::vector<uint32_t> tensors);
  std::vector<uint32_t> visible() const;

 private:
  mutable std::mutex mutex_;
  std::vector<uint32_t> visible_;
};

// Summarises full statistics into what one table row shows (8-bin sparkline).
ValueSummary summarize(const TensorStats& stats);

// A job computing the statistics of every non-companion tensor of `session` that has none yet.
// `on_done` runs on the UI thread after each posted batch (to re-sort by stats, redraw).
Job make_stats_job(std::shared_ptr<ModelSession> session, std::shared_ptr<StatsPlan> plan);

}   // namespace akview::tui
