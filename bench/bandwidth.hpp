// Memory-bandwidth probe shared by the benchmarks: sums a large, already-touched float buffer with
// N threads (each reading 4 prefetched streams) and reports GB/s of bytes read, so kernels are compared against the
// machine's limit measured in the same run (STACK.md §3: first touch of fresh memory is slow here, so the buffer is
// touched before timing).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace akview::bench {

struct BandwidthResult {
  double best_gbps = 0;
  double median_gbps = 0;
};

// Sums n floats as 4 interleaved streams (as a matvec reads several rows at once), 64 bytes per
// stream per step, with a software prefetch ~2 KiB ahead in each: the kernels prefetch, so a probe
// that relied on the hardware prefetcher alone would read ~25% below what they reach.
inline float sum_range(const float* p, size_t n) {
  typedef float V16 __attribute__((vector_size(64)));        // one cache line; GCC/Clang lower it to SIMD
  constexpr size_t kStreams = 4, kStep = 16, kAhead = 512;   // floats
  const size_t per = n / kStreams / kStep * kStep;
  V16 acc[kStreams] = {};
  for (size_t i = 0; i < per; i += kStep)
    for (size_t s = 0; s < kStreams; ++s) {
      const float* q = p + s * per + i;
      __builtin_prefetch(q + kAhead);
      V16 v;
      std::memcpy(&v, q, sizeof v);
      acc[s] += v;
    }
  float sum = 0;
  for (size_t i = kStreams * per; i < n; ++i) sum += p[i];
  for (const auto& a : acc)
    for (size_t k = 0; k < kStep; ++k) sum += a[k];
  return sum;
}

// A read-bandwidth probe over one buffer (touched once, at construction, outside any timing), so a
// benchmark can measure the bandwidth again right before each of its cases: on a shared, noisy
// machine a ratio is only meaningful against the bandwidth of the same moment.
class BandwidthProbe {
 public:
  explicit BandwidthProbe(size_t bytes = size_t{512} << 20) : buf_(bytes / sizeof(float), 1.0f) {}

  // Reads the whole buffer with `threads` threads, `reps` times; best and median GB/s.
  BandwidthResult measure(int threads = 2, int reps = 7) {
    std::vector<double> gbps;
    for (int r = 0; r < reps; ++r) {
      std::vector<float> partial(threads);
      auto t0 = std::chrono::steady_clock::now();
      std::vector<std::thread> pool;
      const size_t chunk = buf_.size() / threads;
      for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          size_t begin = t * chunk, end = (t == threads - 1) ? buf_.size() : begin + chunk;
          partial[t] = sum_range(buf_.data() + begin, end - begin);
        });
      for (auto& th : pool) th.join();
      auto t1 = std::chrono::steady_clock::now();
      for (float p : partial) sink_ = sink_ + p;
      gbps.push_back(static_cast<double>(buf_.size() * sizeof(float)) / std::chrono::duration<double>(t1 - t0).count() /
                     1e9);
    }
    std::sort(gbps.begin(), gbps.end());
    return {gbps.back(), gbps[gbps.size() / 2]};
  }

 private:
  std::vector<float> buf_;
  volatile float sink_ = 0;
};

}   // namespace akview::bench
