// The x-quant kernels against ggml's own on the same weight bytes: one process, the contenders
// interleaved repeat by repeat (their order turning each repeat), so the noise of a shared machine
// falls on all alike. Per type, akview's xquant_matvec (x quantized, then every row) against ggml's
// CPU library doing what its n = 1 MUL_MAT does (quantize_row_q8_0 / q8_1 / q8_K of x, then
// ggml_vec_dot_<type>_q8_<...> per row; with --threads N the rows split into N contiguous ranges,
// one a thread, as ggml splits a single-column product), and akview's exact path (the cpu backend,
// f32 x) on the same tensor, on rows in cache (256 KiB of weights) and from memory (14336 x 4096 and 4096 x 14336).
//   xquant_vs_ggml_bench [--types q4_k,q8_0,...] [--reps N] [--threads N] [--memory-only 1] [--xq-path
//   best|avx2|scalar]
// ggml's CPU library is opened at run time from AKVIEW_GGML_CPU_LIB (libggml-cpu.so of the build
// README.md describes for matvec_bench's comparison: ggml builds shared libraries by default);
// without it the bench says so and exits 0. Columns: median ns per weight of x-quant, ggml and
// exact (p10 in brackets), ggml time / x-quant time and exact time / x-quant time (above 1: the
// x-quant path is faster), GB/s of weight bytes of each, and the largest |y_akview - y_ggml| over
// sum |y_ggml| / rows (both sum the same integer dots; only the float steps differ).
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compute/backend.hpp"
#include "compute/backends.hpp"
#include "compute/thread_pool.hpp"
#include "compute/xquant.hpp"
#include "tests/compute/synthetic.hpp"

namespace {
using namespace akview;
using VecDot = void (*)(int n, float* s, size_t bs, const void* vx, size_t bx, const void* vy, size_t by, int nrc);
using Quantize = void (*)(const float* x, void* y, int64_t k);

struct Type {
  const char* label;   // as matvec_bench prints it
  TypeId type;
  const char* vec_dot;    // ggml's symbol
  const char* quantize;   // ggml's x quantizer for it
  int x_block, x_bytes;   // elements and bytes of one x block
};
constexpr Type kTypes[] = {
    {"q4_0", TypeId::q4_0, "ggml_vec_dot_q4_0_q8_0", "quantize_row_q8_0", 32, 34},
    {"q4_1", TypeId::q4_1, "ggml_vec_dot_q4_1_q8_1", "quantize_row_q8_1", 32, 36},
    {"q5_0", TypeId::q5_0, "ggml_vec_dot_q5_0_q8_0", "quantize_row_q8_0", 32, 34},
    {"q5_1", TypeId::q5_1, "ggml_vec_dot_q5_1_q8_1", "quantize_row_q8_1", 32, 36},
    {"q8_0", TypeId::q8_0, "ggml_vec_dot_q8_0_q8_0", "quantize_row_q8_0", 32, 34},
    {"iq4_nl", TypeId::iq4_nl, "ggml_vec_dot_iq4_nl_q8_0", "quantize_row_q8_0", 32, 34},
    {"q2_k", TypeId::q2_k, "ggml_vec_dot_q2_K_q8_K", "quantize_row_q8_K", 256, 292},
    {"q3_k", TypeId::q3_k, "ggml_vec_dot_q3_K_q8_K", "quantize_row_q8_K", 256, 292},
    {"q4_k", TypeId::q4_k, "ggml_vec_dot_q4_K_q8_K", "quantize_row_q8_K", 256, 292},
    {"q5_k", TypeId::q5_k, "ggml_vec_dot_q5_K_q8_K", "quantize_row_q8_K", 256, 292},
    {"q6_k", TypeId::q6_k, "ggml_vec_dot_q6_K_q8_K", "quantize_row_q8_K", 256, 292},
    {"iq4_xs", TypeId::iq4_xs, "ggml_vec_dot_iq4_xs_q8_K", "quantize_row_q8_K", 256, 292},
};

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

}   // namespace

int main(int argc, char** argv) {
  std::string only;
  int reps = 0, threads = 1;
  bool memory_only = false;
  compute::XqPath path = compute::XqPath::best;   // --xq-path best|avx2|scalar: the x-quant kernel timed
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--types")) only = std::string(",") + argv[i + 1] + ",";
    if (!std::strcmp(argv[i], "--reps")) reps = std::max(3, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--threads")) threads = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--memory-only")) memory_only = std::atoi(argv[i + 1]) != 0;
    if (!std::strcmp(argv[i], "--xq-path"))
      path = !std::strcmp(argv[i + 1], "avx2")     ? compute::XqPath::avx2
             : !std::strcmp(argv[i + 1], "scalar") ? compute::XqPath::scalar
                                                   : compute::XqPath::best;
  }
  std::transform(only.begin(), only.end(), only.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const char* lib = std::getenv("AKVIEW_GGML_CPU_LIB");
  if (!lib || !*lib) {
    std::printf(
        "xquant_vs_ggml_bench: skipped: AKVIEW_GGML_CPU_LIB is not set (the path of ggml's libggml-cpu.so; README.md, "
        "Benchmarks)\n");
    return 0;
  }
  void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "xquant_vs_ggml_bench: cannot load %s: %s\n", lib, dlerror());
    return 1;
  }
  if (auto init = reinterpret_cast<void (*)()>(dlsym(h, "ggml_cpu_init"))) init();   // its f16 tables
  compute::set_cpu_threads(threads);
  compute::ThreadPool& pool = compute::shared_pool();
  std::vector<float> x(14336);
  for (size_t j = 0; j < x.size(); ++j)
    x[j] = std::sin(0.37f * static_cast<float>(j)) * (1.0f + static_cast<float>(j % 7));
  std::printf(
      "x-quant kernels (%s path) vs ggml's vec_dot (%s) and akview's exact path, %d thread%s, interleaved; ns per "
      "weight, median (p10)\n",
      path == compute::XqPath::avx2     ? "avx2"
      : path == compute::XqPath::scalar ? "scalar"
                                        : "best",
      lib, threads, threads == 1 ? "" : "s");
  std::printf(
      "| type | rows x cols | x-quant ns | ggml ns | exact ns | ggml / x-quant time | exact / x-quant time | GB/s "
      "x-quant / "
      "ggml / exact | max |dy| / mean |y| |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const Type& t : kTypes) {
    if (!only.empty() && only.find(std::string(",") + t.label + ",") == std::string::npos) continue;
    const auto vec_dot = reinterpret_cast<VecDot>(dlsym(h, t.vec_dot));
    const auto quantize = reinterpret_cast<Quantize>(dlsym(h, t.quantize));
    if (!vec_dot || !quantize) {
      std::printf("| %s | – | – | – | – | skipped: %s not in the library | – | – | – |\n", t.label,
                  !vec_dot ? t.vec_dot : t.quantize);
      continue;
    }
    // Shapes: 256 KiB of 4096-column rows (in cache); from memory, 14336 x 4096 (ffn_down's rows)
    // and 4096 x 14336 (ffn_up's, the shape of matvec_bench).
    const uint64_t bytes_4096 =
        static_cast<uint64_t>(4096 / type_info(t.type).block_elems) * type_info(t.type).block_bytes;
    const int64_t in_cache = std::max<int64_t>(8, static_cast<int64_t>((uint64_t{1} << 18) / bytes_4096));
    const std::pair<int64_t, int64_t> shapes[] = {{in_cache, 4096}, {14336, 4096}, {4096, 14336}};
    for (const auto& [rows, kCols] : shapes) {
      if (memory_only && rows == in_cache) continue;
      const int64_t blocks = kCols / type_info(t.type).block_elems;
      const uint64_t row_bytes = static_cast<uint64_t>(blocks) * type_info(t.type).block_bytes;
      const auto st = testing::make_block_tensor(t.type, rows, blocks, 7);
      std::vector<uint8_t> xq(static_cast<size_t>(kCols / t.x_block * t.x_bytes));
      std::vector<float> ya(static_cast<size_t>(rows)), yg(static_cast<size_t>(rows)), ye(static_cast<size_t>(rows));
      const int n = reps ? reps : rows > 1000 ? 15 : 400;
      std::vector<double> times[3];   // x-quant, ggml, exact
      bool failed = false;
      auto run = [&](int which) {
        if (which == 0) {
          failed |= !compute::xquant_matvec(st.view, x.data(), ya.data(), path).ok();
        } else if (which == 1) {
          quantize(x.data(), xq.data(), kCols);
          const int64_t per = (rows + threads - 1) / threads;
          pool.parallel_for(threads, [&](int64_t k) {
            for (int64_t i = k * per; i < std::min(rows, (k + 1) * per); ++i)
              vec_dot(static_cast<int>(kCols), &yg[i], 0, st.view.data.data() + i * row_bytes, 0, xq.data(), 0, 1);
          });
        } else {
          failed |= !compute::cpu_backend().matvec(st.view, x.data(), ye.data()).ok();
        }
      };
      for (int r = 0; r < n + 1; ++r)   // the first round warms all up and is not counted
        for (int k = 0; k < 3; ++k) {
          const int which = (r + k) % 3;
          const auto t0 = std::chrono::steady_clock::now();
          run(which);
          const auto t1 = std::chrono::steady_clock::now();
          if (r > 0) times[which].push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
        }
      if (failed) {
        std::fprintf(stderr, "xquant_vs_ggml_bench: %s: an akview path failed\n", t.label);
        return 1;
      }
      double worst = 0, mean = 0;
      for (int64_t i = 0; i < rows; ++i)
        worst = std::max(worst, std::fabs(static_cast<double>(ya[i]) - yg[i])), mean += std::fabs(yg[i]);
      mean /= static_cast<double>(rows);
      const double e = static_cast<double>(rows) * kCols, bytes = static_cast<double>(rows) * row_bytes;
      const double q = quantile(times[0], 0.5), g = quantile(times[1], 0.5), ex = quantile(times[2], 0.5);
      std::printf(
          "| %s | %lldx%lld | %.4f (%.4f) | %.4f (%.4f) | %.4f (%.4f) | %.2f | %.2f | %.1f / %.1f / %.1f | %.1e |\n",
          t.label, static_cast<long long>(rows), static_cast<long long>(kCols), q / e, quantile(times[0], 0.1) / e,
          g / e, quantile(times[1], 0.1) / e, ex / e, quantile(times[2], 0.1) / e, g / q, ex / q, bytes / q, bytes / g,
          bytes / ex, mean > 0 ? worst / mean : 0.0);
      std::fflush(stdout);
    }
  }
  return 0;
}
