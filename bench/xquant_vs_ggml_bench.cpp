// The x-quant kernels against ggml's own on the same weight bytes: one process, one thread, the two
// interleaved repeat by repeat, so the noise of a shared machine falls on both alike. Per type,
// akview's xquant_matvec (x quantized, then every row) against ggml's CPU library doing what its
// n = 1 MUL_MAT does (quantize_row_q8_0 / q8_1 / q8_K of x, then ggml_vec_dot_<type>_q8_<...> per
// row), on rows in cache (256 KiB of weights) and from memory (4096 x 14336).
//   xquant_vs_ggml_bench [--types q4_k,q8_0,...] [--reps N]
// ggml's CPU library is opened at run time from AKVIEW_GGML_CPU_LIB (libggml-cpu.so of the build
// README.md describes for matvec_bench's comparison: ggml builds shared libraries by default);
// without it the bench says so and exits 0. Columns: median ns per weight of each, p10 likewise,
// ggml time / akview time (above 1: akview is faster), and the largest |y_akview - y_ggml| over
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

#include "compute/backends.hpp"
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
  int reps = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--types")) only = std::string(",") + argv[i + 1] + ",";
    if (!std::strcmp(argv[i], "--reps")) reps = std::max(3, std::atoi(argv[i + 1]));
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
  compute::set_cpu_threads(1);
  constexpr int64_t kCols = 4096;
  std::vector<float> x(kCols);
  for (int64_t j = 0; j < kCols; ++j)
    x[j] = std::sin(0.37f * static_cast<float>(j)) * (1.0f + static_cast<float>(j % 7));
  std::printf("x-quant kernels vs ggml's vec_dot (%s), 1 thread, interleaved; ns per weight, median (p10)\n", lib);
  std::printf(
      "| type | rows | akview ns | ggml ns | ggml / akview time | max |dy| / mean |y| |\n|---|---|---|---|---|---|\n");
  for (const Type& t : kTypes) {
    if (!only.empty() && only.find(std::string(",") + t.label + ",") == std::string::npos) continue;
    const auto vec_dot = reinterpret_cast<VecDot>(dlsym(h, t.vec_dot));
    const auto quantize = reinterpret_cast<Quantize>(dlsym(h, t.quantize));
    if (!vec_dot || !quantize) {
      std::printf("| %s | – | – | – | skipped: %s not in the library | – |\n", t.label,
                  !vec_dot ? t.vec_dot : t.quantize);
      continue;
    }
    const int64_t blocks = kCols / type_info(t.type).block_elems;
    const uint64_t row_bytes = static_cast<uint64_t>(blocks) * type_info(t.type).block_bytes;
    for (const int64_t rows :
         {std::max<int64_t>(8, static_cast<int64_t>((uint64_t{1} << 18) / row_bytes)), int64_t{14336}}) {
      const auto st = testing::make_block_tensor(t.type, rows, blocks, 7);
      std::vector<uint8_t> xq(static_cast<size_t>(kCols / t.x_block * t.x_bytes));
      std::vector<float> ya(static_cast<size_t>(rows)), yg(static_cast<size_t>(rows));
      const int n = reps ? reps : rows > 1000 ? 15 : 400;
      std::vector<double> ta, tg;
      for (int r = 0; r < n + 1; ++r) {   // the first round warms both up and is not counted
        const auto t0 = std::chrono::steady_clock::now();
        if (!compute::xquant_matvec(st.view, x.data(), ya.data()).ok()) {
          std::fprintf(stderr, "xquant_vs_ggml_bench: %s: the x-quant path failed\n", t.label);
          return 1;
        }
        const auto t1 = std::chrono::steady_clock::now();
        quantize(x.data(), xq.data(), kCols);
        for (int64_t i = 0; i < rows; ++i)
          vec_dot(static_cast<int>(kCols), &yg[i], 0, st.view.data.data() + i * row_bytes, 0, xq.data(), 0, 1);
        const auto t2 = std::chrono::steady_clock::now();
        if (r == 0) continue;
        ta.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
        tg.push_back(std::chrono::duration<double, std::nano>(t2 - t1).count());
      }
      double worst = 0, mean = 0;
      for (int64_t i = 0; i < rows; ++i)
        worst = std::max(worst, std::fabs(static_cast<double>(ya[i]) - yg[i])), mean += std::fabs(yg[i]);
      mean /= static_cast<double>(rows);
      const double e = static_cast<double>(rows) * kCols;
      std::printf("| %s | %lld | %.4f (%.4f) | %.4f (%.4f) | %.2f (%.2f) | %.1e |\n", t.label,
                  static_cast<long long>(rows), quantile(ta, 0.5) / e, quantile(ta, 0.1) / e, quantile(tg, 0.5) / e,
                  quantile(tg, 0.1) / e, quantile(tg, 0.5) / quantile(ta, 0.5), quantile(tg, 0.1) / quantile(ta, 0.1),
                  mean > 0 ? worst / mean : 0.0);
      std::fflush(stdout);
    }
  }
  return 0;
}
