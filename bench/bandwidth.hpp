// Memory-bandwidth probe shared by the benchmarks: sums a large, already-touched float buffer with
// N threads and reports GB/s of bytes read, so kernels are compared against the machine's limit
// measured in the same run (STACK.md §3: first touch of fresh memory is slow here, so the buffer is
// touched before timing).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace akview::bench {

struct BandwidthResult {
  double best_gbps = 0;
  double median_gbps = 0;
};

inline float sum_range(const float* p, size_t n) {
  float acc[16] = {};
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) acc[k] += p[i + k];
  float s = 0;
  for (; i < n; ++i) s += p[i];
  for (float a : acc) s += a;
  return s;
}

// Reads `bytes` (default 512 MiB) with `threads` threads, `reps` times; best and median GB/s.
inline BandwidthResult measure_read_bandwidth(int threads = 2, size_t bytes = size_t{512} << 20, int reps = 7) {
  std::vector<float> buf(bytes / sizeof(float), 1.0f);   // touched here, outside the timing
  std::vector<double> gbps;
  volatile float sink = 0;
  for (int r = 0; r < reps; ++r) {
    std::vector<float> partial(threads);
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    const size_t chunk = buf.size() / threads;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        size_t begin = t * chunk, end = (t == threads - 1) ? buf.size() : begin + chunk;
        partial[t] = sum_range(buf.data() + begin, end - begin);
      });
    for (auto& th : pool) th.join();
    auto t1 = std::chrono::steady_clock::now();
    for (float p : partial) sink = sink + p;
    gbps.push_back(static_cast<double>(bytes) / std::chrono::duration<double>(t1 - t0).count() / 1e9);
  }
  std::sort(gbps.begin(), gbps.end());
  return {gbps.back(), gbps[gbps.size() / 2]};
}

}  // namespace akview::bench
