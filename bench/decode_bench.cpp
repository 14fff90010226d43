// Decode throughput per type on a 4096 x 14336 tensor of random valid blocks (f16 scale fields kept
// finite), 2 threads splitting the rows, each decoding 8-row chunks into a reused buffer. Reports GB/s
// of stored bytes and Gelem/s (best and median of repetitions) next to the read bandwidth measured in
// the same run (bench/bandwidth.hpp), and the ratio. Then a single-thread, cache-resident figure per
// type (about 1 MB of stored bytes decoded over and over: the compute ceiling, independent of memory).
// Plain main: `decode_bench [reps] [types...]`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/bandwidth.hpp"
#include "core/decode/decode.hpp"
#include "core/types.hpp"

namespace {

// One warm-up pass, then as many passes as take ~2 ms per timing; the best of `reps` timings,
// in seconds per pass.
template <class Pass>
double best_seconds(Pass&& pass, int reps) {
  pass();
  auto t0 = std::chrono::steady_clock::now();
  int inner = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 0.002) pass(), ++inner;
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < inner; ++i) pass();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / inner);
  }
  return best;
}

using akview::TensorView;
using akview::TypeId;

constexpr int64_t kRows = 4096, kCols = 14336;
constexpr int kThreads = 2;
constexpr int64_t kChunkRows = 8;

struct Case {
  std::string label;
  TypeId type;
  std::vector<int> f16_fields;   // byte offsets of f16 fields inside a block (kept finite)
  uint8_t bits = 0;              // composite (MLX affine) only
  uint32_t group = 0;
};

// Clears the top exponent bit of an f16/bf16 high byte: the value stays finite.
void make_finite(uint8_t* high_byte) { *high_byte &= 0xBF; }

struct Tensor {
  std::vector<uint8_t> data, scales, biases;
  TensorView view;
};

Tensor make_tensor(const Case& c, std::mt19937_64& rng, int64_t n_rows = kRows) {
  Tensor t;
  const auto& info = akview::type_info(c.type);
  TensorView& v = t.view;
  v.type = c.type;
  v.n_rows = n_rows;
  v.n_cols = kCols;
  auto fill = [&](std::vector<uint8_t>& buf, size_t n) {
    buf.resize(n);
    for (size_t i = 0; i + 8 <= n; i += 8) {
      const uint64_t r = rng();
      std::memcpy(buf.data() + i, &r, 8);
    }
  };
  if (info.kind == akview::TypeKind::composite) {
    v.bits = c.bits;
    v.group_size = c.group;
    v.row_bytes = static_cast<uint64_t>(kCols) * c.bits / 8;
    const size_t groups = static_cast<size_t>(n_rows) * (kCols / c.group);
    fill(t.data, v.row_bytes * n_rows);
    fill(t.scales, groups * 2);
    fill(t.biases, groups * 2);
    for (size_t g = 0; g < groups; ++g) {
      make_finite(&t.scales[2 * g + 1]);
      make_finite(&t.biases[2 * g + 1]);
    }
    v.scales = t.scales;
    v.biases = t.biases;
    v.scales_type = v.biases_type = TypeId::f16;
  } else {
    v.row_bytes = static_cast<uint64_t>(kCols) / info.block_elems * info.block_bytes;
    fill(t.data, v.row_bytes * n_rows);
    const size_t blocks = t.data.size() / info.block_bytes;
    if (c.type == TypeId::f16 || c.type == TypeId::bf16) {
      for (size_t i = 1; i < t.data.size(); i += 2) make_finite(&t.data[i]);
    } else {
      for (size_t b = 0; b < blocks; ++b)
        for (int off : c.f16_fields) make_finite(&t.data[b * info.block_bytes + static_cast<size_t>(off) + 1]);
    }
  }
  v.data = t.data;
  return t;
}

double run_once(const TensorView& v) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int th = 0; th < kThreads; ++th)
    pool.emplace_back([&, th] {
      std::vector<float> buf(static_cast<size_t>(kChunkRows * kCols));
      const int64_t begin = kRows * th / kThreads, end = kRows * (th + 1) / kThreads;
      for (int64_t r = begin; r < end; r += kChunkRows)
        if (!akview::decode_rows(v, r, std::min(end, r + kChunkRows), buf.data()).ok()) std::abort();
    });
  for (auto& p : pool) p.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Single thread, rows decoded in 8-row chunks over and over from a ~1 MB tensor (L2-resident with
// the 8-row output chunk): best of `reps` timings of ~2 ms each (short, so that on a shared host some
// of them run without being descheduled). Returns {GB/s, Gelem/s}.
std::pair<double, double> cache_resident(const Case& c, std::mt19937_64& rng, int reps) {
  const auto& info = akview::type_info(c.type);
  const double bytes_per_elem = info.kind == akview::TypeKind::composite
                                    ? c.bits / 8.0 + 4.0 / c.group
                                    : static_cast<double>(info.block_bytes) / info.block_elems;
  const int64_t rows = std::max<int64_t>(
      kChunkRows, static_cast<int64_t>((1 << 20) / (bytes_per_elem * kCols)) / kChunkRows * kChunkRows);
  Tensor t = make_tensor(c, rng, rows);
  const double bytes = static_cast<double>(t.data.size() + t.scales.size() + t.biases.size());
  std::vector<float> buf(static_cast<size_t>(kChunkRows * kCols));
  auto pass = [&] {
    for (int64_t r = 0; r < rows; r += kChunkRows)
      if (!akview::decode_rows(t.view, r, std::min(rows, r + kChunkRows), buf.data()).ok()) std::abort();
  };
  const double best = best_seconds(pass, reps);
  return {bytes / best / 1e9, static_cast<double>(rows * kCols) / best / 1e9};
}

// The same loop shape with the decode replaced by a plain fill of the 8-row float chunk: the rate at
// which one thread can write float32 output into the reused (L2-sized) buffer, an upper bound on
// every decoder's Gelem/s here whatever its input size.
double store_ceiling_gelem(int reps) {
  std::vector<float> buf(static_cast<size_t>(kChunkRows * kCols));
  volatile float v = 1.0f;
  auto pass = [&] { std::fill(buf.begin(), buf.end(), static_cast<float>(v)); };
  return static_cast<double>(buf.size()) / best_seconds(pass, reps) / 1e9;
}

}   // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  std::vector<Case> cases = {
      {"f16", TypeId::f16, {}},
      {"bf16", TypeId::bf16, {}},
      {"q8_0", TypeId::q8_0, {0}},
      {"q4_0", TypeId::q4_0, {0}},
      {"q4_k", TypeId::q4_k, {0, 2}},
      {"q6_k", TypeId::q6_k, {208}},
      {"mlx.affine 4b g64", TypeId::mlx_affine, {}, 4, 64},
      {"mlx.affine 8b g64", TypeId::mlx_affine, {}, 8, 64},
      {"q5_k", TypeId::q5_k, {0, 2}},
      {"q2_k", TypeId::q2_k, {80, 82}},
      {"q3_k", TypeId::q3_k, {108}},
      {"iq4_xs", TypeId::iq4_xs, {0}},
      {"iq2_xxs", TypeId::iq2_xxs, {0}},
      {"mxfp4", TypeId::mxfp4, {}},
      {"mlx.affine 3b g64", TypeId::mlx_affine, {}, 3, 64},
  };
  if (argc > 2) {
    std::vector<Case> chosen;
    for (int i = 2; i < argc; ++i)
      for (const auto& c : cases)
        if (c.label.rfind(argv[i], 0) == 0) chosen.push_back(c);
    cases = chosen;
  }
  const auto bw = akview::bench::BandwidthProbe().measure(kThreads);
  std::printf("read bandwidth (%d threads): best %.1f GB/s, median %.1f GB/s\n", kThreads, bw.best_gbps,
              bw.median_gbps);
  std::printf("tensor %lld x %lld, %d threads, %d reps\n", (long long)kRows, (long long)kCols, kThreads, reps);
  std::printf("%-20s %10s %12s %12s %10s %9s\n", "type", "stored MB", "best GB/s", "median GB/s", "Gelem/s", "best/bw");
  std::mt19937_64 rng(42);
  for (const auto& c : cases) {
    Tensor t = make_tensor(c, rng);
    const double bytes = static_cast<double>(t.data.size() + t.scales.size() + t.biases.size());
    run_once(t.view);   // warm-up (pages touched)
    std::vector<double> secs;
    for (int r = 0; r < reps; ++r) secs.push_back(run_once(t.view));
    std::sort(secs.begin(), secs.end());
    const double best = secs.front(), median = secs[secs.size() / 2];
    std::printf("%-20s %10.1f %12.1f %12.1f %10.2f %8.0f%%\n", c.label.c_str(), bytes / 1e6, bytes / best / 1e9,
                bytes / median / 1e9, static_cast<double>(kRows * kCols) / best / 1e9,
                100.0 * (bytes / best / 1e9) / bw.best_gbps);
  }
  const int cache_reps = 50;
  std::printf("\ncache-resident, 1 thread (~1 MB stored, 8-row chunks, best of %d x ~2 ms)\n", cache_reps);
  std::printf("%-20s %12s %10s\n", "type", "GB/s", "Gelem/s");
  const double fill = store_ceiling_gelem(cache_reps);
  std::printf("%-20s %12.1f %10.2f   (float32 writes into the 8-row chunk: the output-side ceiling)\n", "[fill only]",
              fill * 4, fill);
  for (const auto& c : cases) {
    const auto [gbps, gelem] = cache_resident(c, rng, cache_reps);
    std::printf("%-20s %12.1f %10.2f\n", c.label.c_str(), gbps, gelem);
  }
  return 0;
}
