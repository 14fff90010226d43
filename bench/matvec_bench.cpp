// Matvec benchmark: per type and backend, a 4096 x 14336 matvec with weights mmapped from a file
// written once (warm: one untimed run first), median GB/s of weight bytes over repeats, the ratio to
// the read bandwidth measured right before each type's all-thread cpu run (bench/bandwidth.hpp: 512
// MiB, more than any tensor here; column `bw`), and the speed relative to
// OpenBLAS sgemv on an f32 matrix of the same shape (what "dequantize everything, then sgemv" costs
// at best). cpu is also run on 1 thread, to show where decode is compute-bound.
//   matvec_bench [--data FILE] [--repeat N] [--types q4_k,f16,...] [--cpu-only 1] [--xq-path best|avx2|scalar]
// --cpu-only 1: only the cpu columns (1t in-cache, 1t, all threads), for A/B runs of kernel changes.
// Then the comparison with llama.cpp (bench/llama_cpp_perf.hpp): per ggml type, the cpu backend
// (exact, f32 x) and the x-quant path (x quantized as ggml does, compute/xquant.hpp) against
// `test-backend-ops perf -o MUL_MAT` at the same shape, interleaved (akview, llama.cpp, akview, ...)
// for --rounds rounds, medians of each; without AKVIEW_LLAMA_TEST_BACKEND_OPS it says so and prints
// GB/s against the bandwidth probe only. --compare-only 1 skips the first table.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/bandwidth.hpp"
#include "bench/llama_cpp_perf.hpp"
#include "compute/backend.hpp"
#include "compute/backends.hpp"
#include "compute/reference.hpp"
#include "compute/xquant.hpp"
#include "core/mapped_file.hpp"
#include "tests/compute/synthetic.hpp"

namespace {

using namespace akview;
using namespace akview::compute;

constexpr int64_t kRows = 4096, kCols = 14336;

struct BenchType {
  std::string label;
  TypeId type;
  int bits = 0;
  uint32_t group = 0;
  TypeId scale_type = TypeId::f16;
};

const std::vector<BenchType> kTypes = {
    {"f32", TypeId::f32},
    {"f16", TypeId::f16},
    {"bf16", TypeId::bf16},
    {"q8_0", TypeId::q8_0},
    {"q4_0", TypeId::q4_0},
    {"q4_1", TypeId::q4_1},
    {"q5_0", TypeId::q5_0},
    {"q5_1", TypeId::q5_1},
    {"q2_k", TypeId::q2_k},
    {"q3_k", TypeId::q3_k},
    {"q4_k", TypeId::q4_k},
    {"q5_k", TypeId::q5_k},
    {"q6_k", TypeId::q6_k},
    {"iq4_nl", TypeId::iq4_nl},
    {"iq4_xs", TypeId::iq4_xs},
    {"iq2_xxs", TypeId::iq2_xxs},
    {"iq2_xs", TypeId::iq2_xs},
    {"iq2_s", TypeId::iq2_s},
    {"iq3_xxs", TypeId::iq3_xxs},
    {"iq3_s", TypeId::iq3_s},
    {"iq1_s", TypeId::iq1_s},
    {"iq1_m", TypeId::iq1_m},
    {"tq1_0", TypeId::tq1_0},
    {"tq2_0", TypeId::tq2_0},
    {"mxfp4", TypeId::mxfp4},
    {"f8_e4m3", TypeId::f8_e4m3},
    {"mlx4 g64 f16", TypeId::mlx_affine, 4, 64, TypeId::f16},
    {"mlx8 g64 bf16", TypeId::mlx_affine, 8, 64, TypeId::bf16},
    {"mlx3 g64 f16", TypeId::mlx_affine, 3, 64, TypeId::f16},
    {"mlx2 g128 f16", TypeId::mlx_affine, 2, 128, TypeId::f16},
    {"mlx6 g64 bf16", TypeId::mlx_affine, 6, 64, TypeId::bf16},
    {"mlx mxfp4", TypeId::mlx_mxfp4, 4, 32, TypeId::u8},
};

struct Placed {
  uint64_t data_at = 0, data_bytes = 0, scales_at = 0, scales_bytes = 0, biases_at = 0, biases_bytes = 0;
};

// Writes every tensor, 64 rows at a time (no big fresh buffers: first touch is slow on this VM).
std::vector<Placed> write_file(const std::string& path, bool& reused) {
  std::vector<Placed> placed;
  uint64_t at = 0;
  auto align = [](uint64_t v) { return (v + 4095) & ~uint64_t{4095}; };
  for (const auto& bt : kTypes) {
    Placed p;
    const TypeInfo& info = type_info(bt.type);
    const bool affine = bt.bits != 0;
    p.data_bytes = affine ? uint64_t(kRows) * kCols * bt.bits / 8
                          : uint64_t(kRows) * (kCols / info.block_elems) * info.block_bytes;
    p.data_at = at = align(at);
    at += p.data_bytes;
    if (affine) {
      const uint64_t sb = uint64_t(kRows) * (kCols / bt.group) * type_info(bt.scale_type).block_bytes;
      p.scales_at = at = align(at);
      p.scales_bytes = sb;
      at += sb;
      if (bt.type == TypeId::mlx_affine) {   // mxfp4 has no biases
        p.biases_at = at = align(at);
        p.biases_bytes = sb;
        at += sb;
      }
    }
    placed.push_back(p);
  }
  const uint64_t total = align(at);
  {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (in && static_cast<uint64_t>(in.tellg()) == total) {
      reused = true;
      return placed;
    }
  }
  reused = false;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  constexpr int64_t kChunk = 64;
  for (size_t i = 0; i < kTypes.size(); ++i) {
    const auto& bt = kTypes[i];
    const Placed& p = placed[i];
    for (int64_t r = 0; r < kRows; r += kChunk) {
      const uint64_t seed = i * 100000 + r;
      if (bt.bits) {
        auto t = bt.type == TypeId::mlx_affine
                     ? testing::make_affine_tensor(bt.type, bt.bits, bt.group, bt.scale_type, kChunk, kCols, seed)
                     : testing::make_mxfp4_tensor(bt.type, kChunk, kCols, seed);
        const uint64_t f = uint64_t(r) / kChunk;
        out.seekp(static_cast<std::streamoff>(p.data_at + f * t.data.size()));
        out.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(t.data.size()));
        out.seekp(static_cast<std::streamoff>(p.scales_at + f * t.scales.size()));
        out.write(reinterpret_cast<const char*>(t.scales.data()), static_cast<std::streamsize>(t.scales.size()));
        out.seekp(static_cast<std::streamoff>(p.biases_at + f * t.biases.size()));
        out.write(reinterpret_cast<const char*>(t.biases.data()), static_cast<std::streamsize>(t.biases.size()));
      } else {
        auto t = testing::make_block_tensor(bt.type, kChunk, kCols / type_info(bt.type).block_elems, seed);
        out.seekp(static_cast<std::streamoff>(p.data_at + uint64_t(r) / kChunk * t.data.size()));
        out.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(t.data.size()));
      }
    }
  }
  out.seekp(static_cast<std::streamoff>(total - 1));
  out.put('\0');
  return placed;
}

TensorView view_of(const MappedFile& f, const BenchType& bt, const Placed& p) {
  TensorView v;
  v.type = bt.type;
  v.n_rows = kRows;
  v.n_cols = kCols;
  v.data = f.range(p.data_at, p.data_bytes);
  v.row_bytes = p.data_bytes / kRows;
  v.source_id = f.id();   // OpenCL keeps the weights on the device after the warm-up, as `akview run` does
  if (bt.bits) {
    v.bits = static_cast<uint8_t>(bt.bits);
    v.group_size = bt.group;
    v.scales_type = v.biases_type = bt.scale_type;
    v.scales = f.range(p.scales_at, p.scales_bytes);
    if (p.biases_bytes) v.biases = f.range(p.biases_at, p.biases_bytes);
  }
  return v;
}

std::string fmt_num(double v, const char* f) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

struct Timing {
  bool ok = false;
  double median_s = 0, min_s = 0;
  std::string error;
};

template <class Fn>
Timing time_fn(Fn&& matvec, int repeat) {
  Timing t;
  Status s = matvec();   // warm-up: page faults, kernel compile
  if (!s.ok()) {
    t.error = s.error().to_string();
    return t;
  }
  std::vector<double> secs;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    (void)matvec();
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  t.ok = true;
  t.min_s = secs.front();
  t.median_s = secs[secs.size() / 2];
  return t;
}
Timing time_matvec(Backend& b, const TensorView& v, const float* x, float* y, int repeat) {
  return time_fn([&] { return b.matvec(v, x, y); }, repeat);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double spread(std::vector<double> v) {   // (max - min) / median, in percent
  if (v.size() < 2) return 0;
  std::sort(v.begin(), v.end());
  return 100 * (v.back() - v.front()) / v[v.size() / 2];
}

// The x-quant kernel the bench runs (--xq-path best|avx2|scalar): AVX2 and scalar are measurable on
// an AVX-512 machine too.
XqPath g_xq_path = XqPath::best;

// The comparison with llama.cpp (see the header comment).
void compare_with_llama(const MappedFile& file, const std::vector<Placed>& placed, const std::string& only, int repeat,
                        int rounds, bench::BandwidthProbe& probe, int threads) {
  const std::string llama = bench::llama_test_backend_ops();
  std::printf("\nvs llama.cpp: n=1 %lldx%lld, %d threads, %d interleaved rounds, medians\n",
              static_cast<long long>(kRows), static_cast<long long>(kCols), threads, rounds);
  if (llama.empty())
    std::printf(
        "llama.cpp: not compared: set AKVIEW_LLAMA_TEST_BACKEND_OPS to a test-backend-ops binary (README.md: "
        "Benchmarks)\n");
  else std::printf("llama.cpp: %s perf -o MUL_MAT -b CPU (its own threads: hardware concurrency)\n", llama.c_str());
  std::printf("x-quant kernels: %s path (--xq-path best|avx2|scalar)\n", g_xq_path == XqPath::avx2     ? "avx2"
                                                                         : g_xq_path == XqPath::scalar ? "scalar"
                                                                                                       : "best");
  const auto x = testing::normal_vector(kCols, 1);
  std::vector<float> y(kRows);
  struct Row {
    std::string label, ggml;
    TensorView v;
    std::vector<double> exact, xq, ll, bw;
    double xq_rel = -1, exact_rel = -1;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < kTypes.size(); ++i) {
    const auto& bt = kTypes[i];
    const std::string g = bench::ggml_type_name(bt.label);
    if (g.empty() || (!only.empty() && only.find("," + bt.label + ",") == std::string::npos)) continue;
    rows.push_back({bt.label, g, view_of(file, bt, placed[i]), {}, {}, {}, {}});
  }
  set_cpu_threads(threads);
  for (int r = 0; r < rounds; ++r)
    for (auto& row : rows) {
      row.bw.push_back(probe.measure(threads, 3).median_gbps);
      const Timing e = time_matvec(cpu_backend(), row.v, x.data(), y.data(), repeat);
      if (e.ok) row.exact.push_back(e.median_s);
      if (xquant_supports(row.v)) {
        const Timing q = time_fn([&] { return xquant_matvec(row.v, x.data(), y.data(), g_xq_path); }, repeat);
        if (q.ok) row.xq.push_back(q.median_s);
      }
      if (!llama.empty())
        if (auto s = bench::llama_mul_mat_seconds(llama, row.ggml, kRows, kCols)) row.ll.push_back(*s);
    }
  // Accuracy beside the speed: relative RMS error against the f64 reference, exact and x-quant.
  for (auto& row : rows) {
    std::vector<double> ref(kRows);
    if (!reference_matvec(row.v, x.data(), ref.data()).ok()) continue;
    auto rel = [&](const std::vector<float>& out) {
      double num = 0, den = 0;
      for (int64_t k = 0; k < kRows; ++k) num += (out[k] - ref[k]) * (out[k] - ref[k]), den += ref[k] * ref[k];
      return den > 0 ? std::sqrt(num / den) : 0.0;
    };
    if (cpu_backend().matvec(row.v, x.data(), y.data()).ok()) row.exact_rel = rel(y);
    if (xquant_supports(row.v) && xquant_matvec(row.v, x.data(), y.data(), g_xq_path).ok()) row.xq_rel = rel(y);
  }
  std::printf(
      "| type | MiB | bw GB/s | exact GB/s | x-quant GB/s | llama.cpp GB/s | exact / llama | x-quant / llama | x-quant "
      "/ bw | spread exact/xq/llama %% | rel_rms exact | rel_rms x-quant |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& row : rows) {
    const double bytes = static_cast<double>(weight_bytes(row.v));
    const double e = median(row.exact), q = median(row.xq), l = median(row.ll), bw = median(row.bw);
    auto gb = [&](double s) { return s > 0 ? fmt_num(bytes / s / 1e9, "%.1f") : std::string("-"); };
    auto ratio = [&](double ours, double theirs) {
      return ours > 0 && theirs > 0 ? fmt_num(theirs / ours, "%.2f") : std::string("-");
    };
    std::printf("| %s | %.1f | %.1f | %s | %s | %s | %s | %s | %s | %.0f/%.0f/%.0f | %s | %s |\n", row.label.c_str(),
                bytes / (1 << 20), bw, gb(e).c_str(), gb(q).c_str(), gb(l).c_str(), ratio(e, l).c_str(),
                ratio(q, l).c_str(), q > 0 ? fmt_num(bytes / q / 1e9 / bw, "%.2f").c_str() : "-", spread(row.exact),
                spread(row.xq), spread(row.ll), row.exact_rel >= 0 ? fmt_num(row.exact_rel, "%.1e").c_str() : "-",
                row.xq_rel >= 0 ? fmt_num(row.xq_rel, "%.1e").c_str() : "-");
  }
  std::fflush(stdout);
}

}   // namespace

int main(int argc, char** argv) {
  // The weights file (about 1 GB) goes to the temporary folder unless --data names one: never into
  // the working tree, where a commit could pick it up.
  std::string data_path = (std::filesystem::temp_directory_path() / "akview_matvec_bench.data").string();
  int repeat = 9;
  std::string only;
  bool cpu_only = false, compare_only = false;
  int rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--data")) data_path = argv[i + 1];
    if (!std::strcmp(argv[i], "--repeat")) repeat = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--types")) only = std::string(",") + argv[i + 1] + ",";
    if (!std::strcmp(argv[i], "--cpu-only")) cpu_only = std::atoi(argv[i + 1]) != 0;
    if (!std::strcmp(argv[i], "--compare-only")) compare_only = std::atoi(argv[i + 1]) != 0;
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--xq-path"))
      g_xq_path = !std::strcmp(argv[i + 1], "avx2")     ? XqPath::avx2
                  : !std::strcmp(argv[i + 1], "scalar") ? XqPath::scalar
                                                        : XqPath::best;
  }
  // --types names as the table prints them (q4_k); Q4_K and q4_K are taken too, an unknown name is an error.
  std::transform(only.begin(), only.end(), only.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (size_t at = 1; at < only.size();) {
    const size_t end = only.find(',', at);
    const std::string name = only.substr(at, end - at);
    bool known = name.empty();
    for (const auto& bt : kTypes) known |= bt.label == name;
    if (!known) {
      std::fprintf(stderr, "matvec_bench: --types: no type '%s'; the types are:", name.c_str());
      for (const auto& bt : kTypes) std::fprintf(stderr, " %s", bt.label.c_str());
      std::fprintf(stderr, "\n");
      return 2;
    }
    at = end + 1;
  }
  bool reused = false;
  const auto placed = write_file(data_path, reused);
  auto file = MappedFile::open(data_path);
  if (!file) {
    std::fprintf(stderr, "%s\n", file.error().to_string().c_str());
    return 1;
  }
  const int threads = cpu_threads();
  bench::BandwidthProbe probe;
  const auto bw_before = probe.measure(threads);
  std::printf("matvec %lld x %lld, weights mmapped from %s (%s), %d threads, %d repeats, median GB/s of weight bytes\n",
              static_cast<long long>(kRows), static_cast<long long>(kCols), data_path.c_str(),
              reused ? "reused" : "written", threads, repeat);
  std::printf("read bandwidth (512 MiB, %d threads): median %.1f GB/s, best %.1f GB/s\n", threads,
              bw_before.median_gbps, bw_before.best_gbps);
  const Availability ocl = opencl_backend().availability();
  std::printf("opencl: %s\n", ocl.available ? ocl.reason.c_str() : ("unavailable: " + ocl.reason).c_str());
  if (ocl.available)
    std::printf(
        "opencl: weights kept on the device after the warm-up (as `akview run` keeps them), %d work-items a row\n",
        opencl_row_lanes());
  const Availability blas_there = blas_backend().availability();
  if (!blas_there.available) std::printf("blas: unavailable: %s\n", blas_there.reason.c_str());
  std::printf("\n");

  if (compare_only) {
    compare_with_llama(*file, placed, only, repeat, rounds, probe, threads);
    return 0;
  }
  const auto x = testing::normal_vector(kCols, 1);
  std::vector<float> y(kRows);
  // sgemv on an f32 matrix of the same shape: the cost of the dequantize-everything approach.
  const TensorView f32_view = view_of(*file, kTypes[0], placed[0]);
  const Timing sgemv = time_matvec(blas_backend(), f32_view, x.data(), y.data(), cpu_only ? 1 : repeat);
  if (sgemv.ok)
    std::printf("sgemv f32 %lldx%lld: %.2f ms median (%.1f GB/s of f32 bytes)\n\n", static_cast<long long>(kRows),
                static_cast<long long>(kCols), sgemv.median_s * 1e3, f32_view.data.size() / sgemv.median_s / 1e9);

  std::printf(
      "| type | MiB | cpu kernel | cpu 1t in-cache GB/s | cpu 1t GB/s | bw GB/s | cpu GB/s | cpu/bw | blas GB/s | "
      "blas/cpu | opencl GB/s | opencl/cpu | cpu x sgemv | max rel err |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < kTypes.size(); ++i) {
    const auto& bt = kTypes[i];
    if (!only.empty() && only.find("," + bt.label + ",") == std::string::npos) continue;
    const TensorView v = view_of(*file, bt, placed[i]);
    const double bytes = static_cast<double>(weight_bytes(v));
    auto gbps = [&](const Timing& t) { return t.ok ? bytes / t.median_s / 1e9 : 0.0; };
    set_cpu_threads(1);
    const Timing cpu1 = time_matvec(cpu_backend(), v, x.data(), y.data(), repeat);
    // The same kernel on ~256 KiB of rows (L2-resident): its compute ceiling on one thread.
    TensorView hot = v;
    hot.n_rows = std::max<int64_t>(1, static_cast<int64_t>((uint64_t{1} << 18) / v.row_bytes));
    const double hot_bytes = static_cast<double>(hot.n_rows) / kRows * bytes;
    const Timing cpu1_hot = time_matvec(cpu_backend(), hot, x.data(), y.data(), repeat * 5);
    set_cpu_threads(threads);
    // The bandwidth of this moment (5 reads of 512 MiB), right before the all-thread cpu run.
    const double bw = probe.measure(threads, 5).median_gbps;
    const Timing cpu = time_matvec(cpu_backend(), v, x.data(), y.data(), repeat);
    // Accuracy of the cpu result (the tests check every backend; this is a sanity line).
    std::vector<double> ref(kRows), abs_wx(kRows);
    double worst = 0;
    if (!cpu_only && reference_matvec(v, x.data(), ref.data(), abs_wx.data()).ok())
      for (int64_t r = 0; r < kRows; ++r)
        worst = std::max(worst, std::fabs(y[r] - ref[r]) / std::max(abs_wx[r], 1e-30));
    const Timing blas = cpu_only ? Timing{} : time_matvec(blas_backend(), v, x.data(), y.data(), repeat);
    const Timing cl =
        ocl.available && !cpu_only ? time_matvec(opencl_backend(), v, x.data(), y.data(), repeat) : Timing{};
    // A backend that did not run (unavailable, or --cpu-only) shows '-', never 0.
    auto cell = [](bool ran, double value, const char* format) {
      return ran ? fmt_num(value, format) : std::string("-");
    };
    std::printf("| %s | %.1f | %s | %.1f | %.1f | %.1f | %.1f | %.0f%% | %s | %s | %s | %s | %s | %.1e |\n",
                bt.label.c_str(), bytes / (1 << 20), std::string(cpu_kernel_variant(v)).c_str(),
                cpu1_hot.ok ? hot_bytes / cpu1_hot.median_s / 1e9 : 0.0, gbps(cpu1), bw, gbps(cpu),
                100 * gbps(cpu) / bw, cell(blas.ok, gbps(blas), "%.1f").c_str(),
                cell(blas.ok, gbps(blas) / gbps(cpu), "%.2f").c_str(), cell(cl.ok, gbps(cl), "%.1f").c_str(),
                cell(cl.ok, gbps(cl) / gbps(cpu), "%.2f").c_str(),
                cell(sgemv.ok, sgemv.median_s / cpu.median_s, "%.2f").c_str(), worst);
    std::fflush(stdout);
  }
  compare_with_llama(*file, placed, only, repeat, rounds, probe, threads);
  const auto bw_after = probe.measure(threads);
  std::printf("\nread bandwidth after: median %.1f GB/s, best %.1f GB/s\n", bw_after.median_gbps, bw_after.best_gbps);
  return 0;
}
