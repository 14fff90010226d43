// A small persistent thread pool for the cpu backend: parallel_for over task indices, the calling
// thread takes part, tasks are claimed from an atomic counter (dynamic load balancing). Workers
// spin for a short while after a generation before they sleep, and the caller spins before it
// waits for them: on a virtual machine a sleeping vCPU takes long to wake, and back-to-back
// matvecs of a few ms then ran on the caller alone (half the speed, run to run).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/result.hpp"

namespace akview::compute {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);   // total threads including the caller
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Runs fn(i) for i in [0, n_tasks) on all threads; returns when every task is done.
  // Calls are serialised (one parallel_for at a time).
  void parallel_for(int64_t n_tasks, const std::function<void(int64_t)>& fn);

 private:
  void worker_loop();
  void drain();

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;   // one parallel_for at a time
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t)>* fn_ = nullptr;
  int64_t n_tasks_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<size_t> finished_{0};       // workers done with the current generation
  std::atomic<uint64_t> generation_{0};   // stored last (release) when a generation is set up
  std::atomic<bool> stop_{false};
};

// The pool shared by the cpu and blas backends (created on first use with default_thread_count()).
ThreadPool& shared_pool();
// Rebuilds the shared pool with `threads` threads (0: default). Not while a matvec runs.
void set_shared_pool_threads(int threads);

// Runs task(r0, r1) over [0, n_rows) on the shared pool in tasks of ~128 KiB of weights (rows of
// row_bytes), at least 4 tasks per thread for balance; returns the first failing task's Status.
Status parallel_rows(int64_t n_rows, uint64_t row_bytes, const std::function<Status(int64_t, int64_t)>& task);

// The same for a kernel that takes `multiple` rows a pass: tasks are whole passes, and a matrix of at
// most 256 KiB a thread runs as one contiguous range a thread, so each core reads the same rows
// from its own L2 call after call. For x-quant's small matrices (60 rows of 4096 q8_0 take a few
// microseconds) ~7-row tasks claimed in turn cost a 4-row pass and three 1-row ones per task, and
// rows moved between the cores' caches from call to call.
Status parallel_row_passes(int64_t n_rows, uint64_t row_bytes, int64_t multiple,
                           const std::function<Status(int64_t, int64_t)>& task);

// Threads for compute: AKVIEW_THREADS if set, else the hardware concurrency.
int default_thread_count();

}   // namespace akview::compute
