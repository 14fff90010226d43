// The cpu backend's persistent thread pool (see thread_pool.hpp).
#include "compute/thread_pool.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>

namespace akview::compute {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

namespace {
// How long a worker waits for the next generation (and the caller for the workers) by spinning
// before sleeping on the condition variable.
constexpr auto kSpin = std::chrono::microseconds(2000);

// Spins until `ready()` or kSpin has passed; true if ready.
template <typename Ready>
bool spin_until(Ready&& ready) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return false;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}
}   // namespace

void ThreadPool::drain() {
  for (;;) {
    const int64_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= n_tasks_) return;
    (*fn_)(i);
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    auto ready = [&] {
      return stop_.load(std::memory_order_acquire) || generation_.load(std::memory_order_acquire) != seen;
    };
    if (!spin_until(ready)) {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, ready);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    drain();
    finished_.fetch_add(1, std::memory_order_acq_rel);
    {
      std::lock_guard lock(mutex_);   // a caller between its check and its wait sees this notify
    }
    done_.notify_all();
  }
}

void ThreadPool::parallel_for(int64_t n_tasks, const std::function<void(int64_t)>& fn) {
  if (n_tasks <= 0) return;
  std::lock_guard run(run_mutex_);
  if (workers_.empty() || n_tasks == 1) {
    for (int64_t i = 0; i < n_tasks; ++i) fn(i);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    fn_ = &fn;
    n_tasks_ = n_tasks;
    next_.store(0, std::memory_order_relaxed);
    finished_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);   // publishes the fields above
  }
  wake_.notify_all();
  drain();
  // Every worker takes part in every generation, so none can still be reading fn_ afterwards.
  auto all_done = [&] { return finished_.load(std::memory_order_acquire) == workers_.size(); };
  if (!spin_until(all_done)) {
    std::unique_lock lock(mutex_);
    done_.wait(lock, all_done);
  }
  fn_ = nullptr;
}

namespace {
std::mutex g_shared_mutex;
std::unique_ptr<ThreadPool> g_shared;
int g_shared_threads = 0;
}   // namespace

ThreadPool& shared_pool() {
  std::lock_guard lock(g_shared_mutex);
  if (!g_shared)
    g_shared = std::make_unique<ThreadPool>(g_shared_threads > 0 ? g_shared_threads : default_thread_count());
  return *g_shared;
}

void set_shared_pool_threads(int threads) {
  std::lock_guard lock(g_shared_mutex);
  g_shared_threads = threads;
  g_shared.reset();
}

int default_thread_count() {
  if (const char* env = std::getenv("AKVIEW_THREADS")) {
    int n = std::atoi(env);
    if (n >= 1 && n <= 256) return n;
  }
  unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : static_cast<int>(hc);
}

namespace {
// Runs task(r0, r1) over [0, n_rows) in ranges of rows_per_task on the pool; the failing range with
// the lowest index gives the Status. Only a failure takes the lock: a vector of a Status per task,
// written by both cores, cost more than a 60-row matvec's kernel (its cache lines moved between the
// cores on every call).
Status run_row_ranges(ThreadPool& p, int64_t n_rows, int64_t rows_per_task,
                      const std::function<Status(int64_t, int64_t)>& task) {
  const int64_t n_tasks = (n_rows + rows_per_task - 1) / rows_per_task;
  std::mutex failed_mutex;
  int64_t failed_at = n_tasks;
  Status failed;
  p.parallel_for(n_tasks, [&](int64_t t) {
    const int64_t r0 = t * rows_per_task;
    Status s = task(r0, std::min(n_rows, r0 + rows_per_task));
    if (s.ok()) return;
    std::lock_guard lock(failed_mutex);
    if (t < failed_at) failed_at = t, failed = std::move(s);
  });
  return failed;
}

// Rows a task: ~128 KiB of weights, at least 4 tasks a thread for balance.
int64_t balanced_rows_per_task(int64_t n_rows, uint64_t row_bytes, int64_t threads) {
  const int64_t by_bytes =
      std::max<int64_t>(1, static_cast<int64_t>((uint64_t{128} << 10) / std::max<uint64_t>(row_bytes, 1)));
  return std::min(by_bytes, std::max<int64_t>(1, n_rows / (4 * threads)));
}

// A matrix of at most this many bytes a thread is split into one contiguous range a thread (it
// stays in those cores' L2 from call to call, as ggml's split keeps it).
constexpr uint64_t kPinnedBytes = uint64_t{256} << 10;
}   // namespace

Status parallel_rows(int64_t n_rows, uint64_t row_bytes, const std::function<Status(int64_t, int64_t)>& task) {
  ThreadPool& p = shared_pool();
  return run_row_ranges(p, n_rows, balanced_rows_per_task(n_rows, row_bytes, p.threads()), task);
}

Status parallel_row_passes(int64_t n_rows, uint64_t row_bytes, int64_t multiple,
                           const std::function<Status(int64_t, int64_t)>& task) {
  ThreadPool& p = shared_pool();
  const int64_t threads = p.threads();
  int64_t rows_per_task = static_cast<uint64_t>(n_rows) * row_bytes <= static_cast<uint64_t>(threads) * kPinnedBytes
                              ? (n_rows + threads - 1) / threads
                              : balanced_rows_per_task(n_rows, row_bytes, threads);
  rows_per_task = std::max<int64_t>(1, (rows_per_task + multiple - 1) / multiple) * multiple;
  return run_row_ranges(p, n_rows, rows_per_task, task);
}

}   // namespace akview::compute
