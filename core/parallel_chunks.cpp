// parallel_chunks: an atomic chunk counter shared by std::threads started per call (a call runs
// for milliseconds to minutes, so starting threads costs nothing worth a pool).
#include "core/parallel_chunks.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace akview {

int machine_threads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

bool parallel_chunks(size_t n_chunks, int threads, const std::function<bool(size_t, int)>& work,
                     const std::function<void(size_t)>& on_caller_chunk) {
  if (threads <= 0) threads = machine_threads();
  const int n_threads = static_cast<int>(std::min<size_t>(static_cast<size_t>(threads), std::max<size_t>(n_chunks, 1)));
  std::atomic<size_t> next{0}, finished{0};
  std::atomic<bool> stopped{false};
  auto loop = [&](int worker) {
    while (!stopped.load(std::memory_order_relaxed)) {
      const size_t chunk = next.fetch_add(1, std::memory_order_relaxed);
      if (chunk >= n_chunks) return;
      if (!work(chunk, worker)) {
        stopped.store(true, std::memory_order_relaxed);
        return;
      }
      const size_t done = finished.fetch_add(1, std::memory_order_relaxed) + 1;
      if (worker == 0 && on_caller_chunk) on_caller_chunk(done);
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(static_cast<size_t>(n_threads - 1));
  for (int w = 1; w < n_threads; ++w) helpers.emplace_back(loop, w);
  loop(0);
  for (auto& t : helpers) t.join();
  return !stopped.load();
}

}   // namespace akview
