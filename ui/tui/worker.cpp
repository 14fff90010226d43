// The background worker (worker.hpp).
#include "ui/tui/worker.hpp"

#include <signal.h>

#include <algorithm>
#include <utility>

namespace akview::tui {

void JobContext::progress(double fraction) {
  worker_.progress_.store(fraction, std::memory_order_relaxed);
  worker_.news_.store(true, std::memory_order_relaxed);
}

void JobContext::post(std::function<void()> apply) {
  std::lock_guard lock(worker_.mutex_);
  worker_.posted_.push_back(std::move(apply));
  worker_.news_.store(true, std::memory_order_relaxed);
}

bool JobContext::should_yield() const {
  std::lock_guard lock(worker_.mutex_);
  return !worker_.queue_.empty() && worker_.queue_.front().urgent;
}

Worker::Worker() : thread_([this] { loop(); }) {}

Worker::~Worker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    queue_.clear();
    cancel_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Worker::enqueue(Job job) {
  // Urgent jobs in the order they came, before every other job.
  auto at =
      job.urgent ? std::find_if(queue_.begin(), queue_.end(), [](const Job& j) { return !j.urgent; }) : queue_.end();
  queue_.insert(at, std::move(job));
}

void Worker::submit(Job job) {
  {
    std::lock_guard lock(mutex_);
    enqueue(std::move(job));
  }
  wake_.notify_all();
}

bool Worker::cancel_all() {
  std::lock_guard lock(mutex_);
  bool any = running_ || !queue_.empty();
  for (Job& j : queue_)
    if (j.on_cancel) posted_.push_back(std::move(j.on_cancel));
  queue_.clear();
  if (running_) cancel_ = true;
  news_ = true;
  return any;
}

int Worker::busy() const {
  std::lock_guard lock(mutex_);
  // Posted results not yet applied count too: a frame is settled only once they are drawn.
  return static_cast<int>(queue_.size() + posted_.size()) + (running_ ? 1 : 0);
}

std::string Worker::label() const {
  std::lock_guard lock(mutex_);
  return running_ ? running_label_ : std::string();
}

std::vector<std::function<void()>> Worker::take_posted() {
  std::lock_guard lock(mutex_);
  news_ = false;
  return std::exchange(posted_, {});
}

namespace {

// Libraries loaded at run time (PoCL's LLVM compiling an OpenCL kernel) may install an alternate
// signal stack of their own on the thread that calls them. The thread's original one is put back
// before it exits, so the runtime that made it (the C library, or ASan, which unmaps it) can release it.
struct KeepAltStack {
  stack_t original{};
  bool saved = ::sigaltstack(nullptr, &original) == 0;
  ~KeepAltStack() {
    if (saved) ::sigaltstack(&original, nullptr);
  }
};

}   // namespace

void Worker::loop() {
  KeepAltStack alt_stack;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    running_label_ = job.label;
    cancel_ = false;
    progress_ = 0;
    lock.unlock();
    JobContext ctx(*this, cancel_);
    job.run(ctx);
    lock.lock();
    if (cancel_ && job.on_cancel) posted_.push_back(std::move(job.on_cancel));
    else if (ctx.requeue_ && !cancel_ && !stop_) {
      job.urgent = false;   // back after the urgent jobs, before the others it was ahead of
      queue_.insert(std::find_if(queue_.begin(), queue_.end(), [](const Job& j) { return !j.urgent; }), std::move(job));
    }
    running_ = false;
    running_label_.clear();
    news_ = true;
  }
}

}   // namespace akview::tui
