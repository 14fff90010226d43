// The Fit pane: the memory a runtime needs to run this model at a context (core/fit), as `akview fit`
// prints it — the buffers with where each figure came from, the KV cache per layer, the split over
// GPUs, and the table over contexts. Keys change the context, the KV cache type and the GPUs' memory;
// the estimate is made again on the worker. Also opened by a click on the title bar's size.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ui/tui/lifeline.hpp"
#include "ui/tui/list_view.hpp"
#include "ui/tui/pane.hpp"
#include "ui/tui/session.hpp"

namespace akview::tui {

class FitPane : public Pane {
 public:
  explicit FitPane(std::shared_ptr<ModelSession> session) : session_(std::move(session)) {}
  Context context() const override { return Context::fit; }
  void draw(Canvas& canvas, const Rect& area) override;
  bool act(Action action, PaneHost& host) override;
  void wheel(int rows) override;
  std::string position() const override;
  std::string state() const override;
  std::string hints() const override;
  void before_frame(PaneHost& host) override;

  // For tests: the report's lines as last made, and what is asked.
  const std::vector<std::string>& lines() const { return lines_; }
  uint64_t asked_context() const { return context_; }

 private:
  void estimate(PaneHost& host);   // the report for the asked context, KV type and GPUs, on the worker

  std::shared_ptr<ModelSession> session_;
  uint64_t context_ = 0;         // tokens; 0: the model's trained context
  uint64_t shown_context_ = 0;   // the context the report is for (the trained one when 0 was asked)
  size_t kv_type_ = 1;           // index into kKvTypes (f16)
  std::string gpu_mem_;          // "24" or "24,12" (GiB each); empty: CPU only
  std::vector<std::string> lines_;
  std::string error_;
  bool pending_ = true, running_ = false;
  ScrollView view_;
  Lifeline life_;
};

}   // namespace akview::tui
