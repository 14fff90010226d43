// The Compute pane (PRODUCT.md "The terminal UI" pane 6): pick a selection (the Tensors pane's
// tensor, its whole layer, or a filter), a backend (reference, cpu, blas, each OpenCL device by
// name), an input (seeded, ones, a raw f32 file) and repeats; `r` runs dequant + matvec on the worker
// through the same engine as `akview run`, Esc cancels between steps. The results table (time, GB/s
// of weight bytes, error against the f64 reference) outlives pane switches; the same tensor run on
// another backend or input lands on the row beside its first run; each row names its input, and a
// failed run never replaces a result.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compute/runner.hpp"
#include "ui/tui/pane.hpp"
#include "ui/tui/session.hpp"

namespace akview::tui {

class ComputePane : public Pane {
 public:
  enum class Scope : uint8_t { tensor, layer, filter };
  // A backend as the user picks it: `backend` for the runner, `device` the OpenCL index (-1: auto).
  struct Choice {
    std::string label, backend;
    int device = -1;
    bool available = true;
    std::string reason;
  };
  struct Row {
    std::string tensor, backend;
    std::string input;   // "seed:0", "ones", "x.f32" (a file's name): what this row was computed from
    enum class State : uint8_t { done, failed, cancelled } state = State::done;
    double seconds = 0, gbps = 0;                // the median repeat
    std::optional<compute::ErrorStats> error;    // against the f64 reference
    std::string note;                            // the failure, or why there is no error column
    std::optional<compute::ErrorStats> vs_ref;   // against the second model's tensor (akview A --ref B)
    double min_seconds = 0;                      // the fastest repeat (far below the median: a busy machine)
  };

  // `selected` gives the Tensors pane's selected tensor (kNone: none); `ref` the second model, whose
  // tensor of the same canonical name each run is also compared with (null: none).
  ComputePane(std::shared_ptr<ModelSession> session, std::function<uint32_t()> selected,
              std::shared_ptr<ModelSession> ref = nullptr);
  ~ComputePane() override;

  Context context() const override { return Context::compute; }
  void draw(Canvas& canvas, const Rect& area) override;
  bool act(Action action, PaneHost& host) override;
  void click(int x, int y, PaneHost& host) override;
  void wheel(int rows) override;
  std::string position() const override;
  std::string state() const override;
  std::string hints() const override;
  void before_frame(PaneHost& host) override;

  // For the shell and tests.
  const std::vector<Row>& rows() const { return rows_; }
  bool running() const { return running_ != 0; }
  const Choice& backend() const { return choices_[choice_]; }
  const std::vector<Choice>& choices() const { return choices_; }
  // Runs one tensor now (the Diff pane's `x`), whatever the selection says.
  void run_tensor(uint32_t tensor, PaneHost& host);
  // Picks the backend by label; false when there is none.
  bool select_backend(std::string_view label);
  void set_mask_timings(bool mask) { mask_timings_ = mask; }   // "—" for time and GB/s (goldens)
  int repeats() const;
  std::string selection_label() const;

 private:
  bool start_run(PaneHost& host);
  void finish(uint64_t id, const std::string& label, const std::string& selection, const std::string& input,
              Result<RunTableReport> report);
  // Puts a result beside the others of its tensor; false when it is a failure that would have
  // replaced a good result of the same tensor, backend and input (which then stays).
  bool put_row(Row row);
  void start_filter(PaneHost& host);
  void choose_input(PaneHost& host);
  void list_backends(PaneHost& host);

  std::shared_ptr<ModelSession> session_;
  std::function<uint32_t()> selected_;
  std::shared_ptr<ModelSession> ref_;
  uint32_t run_next_ = kNone;   // run_tensor's tensor, for the next start_run
  Lifeline life_;
  Scope scope_ = Scope::tensor;
  std::string filter_;
  compute::InputSpec input_;
  size_t repeats_step_ = 1;
  std::vector<Choice> choices_;
  size_t choice_ = 1;   // cpu
  bool listing_ = false, listed_ = false;
  bool mask_timings_ = false;
  uint64_t running_ = 0, next_id_ = 1;
  std::shared_ptr<std::atomic<size_t>> done_ = std::make_shared<std::atomic<size_t>>(0);
  std::shared_ptr<std::atomic<size_t>> count_ = std::make_shared<std::atomic<size_t>>(0);
  double progress_ = 0;
  std::string last_;   // the last run's outcome for the status line
  std::vector<Row> rows_;
  ListView list_;   // the results; first_y: the first result row, relative to the pane
};

// The fastest repeat more than kUnreliableSpread below the median: the machine was busy while it ran,
// and the time is not reliable (the median column marks it with '~').
inline constexpr double kUnreliableSpread = 0.25;
bool unreliable_time(const ComputePane::Row& row);

}   // namespace akview::tui
