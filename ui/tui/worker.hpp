// The background worker: one thread that runs long jobs (opening a model, listing a store, value
// statistics) so the UI thread never waits. A job reports progress and posts its results as
// closures that the UI thread applies between frames; Esc cancels the running job and the queue.
// An urgent job (a sort the user just asked for) goes before the queued ones, and a long job that
// checks should_yield() steps aside for it: it returns after requeue() and runs on afterwards.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace akview::tui {

class JobContext {
 public:
  const std::atomic<bool>& cancel() const { return cancel_; }
  bool cancelled() const { return cancel_.load(std::memory_order_relaxed); }
  void progress(double fraction);
  // Runs `apply` on the UI thread before the next frame.
  void post(std::function<void()> apply);
  // True when an urgent job waits: a long job then calls requeue() and returns.
  bool should_yield() const;
  // Puts the running job back in the queue after the urgent ones, to be run again (its state kept in
  // its closure) once they are done.
  void requeue() { requeue_ = true; }
  bool requeued() const { return requeue_; }

 private:
  friend class Worker;
  explicit JobContext(class Worker& w, std::atomic<bool>& cancel) : worker_(w), cancel_(cancel) {}
  class Worker& worker_;
  std::atomic<bool>& cancel_;
  bool requeue_ = false;
};

struct Job {
  std::string label;   // "stats", "opening model.gguf"
  std::function<void(JobContext&)> run;
  std::function<void()> on_cancel;   // runs on the UI thread when the job was cancelled
  bool urgent = false;               // before the queued jobs; long running ones yield to it
};

class Worker {
 public:
  Worker();
  ~Worker();   // cancels everything and joins
  void submit(Job job);
  // Cancels the running job and drops the queued ones; returns whether there was any.
  bool cancel_all();
  // Jobs running or queued, plus results not yet applied (the test-mode frame marker's `busy`).
  int busy() const;
  // The running job's label and progress in [0, 1] (label empty when idle).
  std::string label() const;
  double progress() const { return progress_.load(std::memory_order_relaxed); }
  // The closures posted since the last call, in order (UI thread).
  std::vector<std::function<void()>> take_posted();
  // True when something was posted or the progress moved since the last take_posted().
  bool has_news() const { return news_.load(std::memory_order_relaxed); }

 private:
  friend class JobContext;
  void loop();
  void enqueue(Job job);   // with mutex_ held
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  std::vector<std::function<void()>> posted_;
  std::string running_label_;
  bool running_ = false;
  bool stop_ = false;
  std::atomic<bool> cancel_{false};
  std::atomic<double> progress_{0};
  std::atomic<bool> news_{false};
  std::thread thread_;
};

}   // namespace akview::tui
