// The cpu backend: fused dequant + dot per row block on a persistent thread pool. Dedicated kernels
// come from the per-family tables (cpu_kernels_*.cpp); any other decodable type is decoded a row
// tile at a time by decode_rows into a reused per-thread buffer, then dotted with x.
#include <algorithm>
#include <string>
#include <vector>

#include "compute/backends.hpp"
#include "compute/cpu_kernels.hpp"
#include "compute/cpu_simd.hpp"
#include "compute/thread_pool.hpp"
#include "core/decode/decode.hpp"
#include "core/fault_guard.hpp"

namespace akview::compute {
namespace {

const CpuKernelRow* find_kernel(const TensorView& view) {
  for (auto table : {cpu_kernels_float(), cpu_kernels_legacy(), cpu_kernels_kquant(), cpu_kernels_affine(),
                     cpu_kernels_fp4(), cpu_kernels_iquant(), cpu_kernels_ternary()})
    for (const auto& row : table)
      if (row.type == view.type && (!row.accepts || row.accepts(view))) return &row;
  return nullptr;
}

// decode_rows fallback: a tile of rows into a buffer reused by this thread.
void decoded_rows(const TensorView& view, const float* x, int64_t r0, int64_t r1, float* y, Status& status) {
  thread_local std::vector<float> tile;
  const int64_t cols = view.n_cols;
  const int64_t tile_rows = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(cols, 1));
  tile.resize(static_cast<size_t>(std::min(tile_rows, r1 - r0) * cols));
  for (int64_t a = r0; a < r1; a += tile_rows) {
    const int64_t b = std::min(r1, a + tile_rows);
    Status s = decode_rows(view, a, b, tile.data());
    if (!s.ok()) {
      status = std::move(s);
      return;
    }
    for (int64_t r = a; r < b; ++r) y[r] = simd::dot_f32(tile.data() + (r - a) * cols, x, cols);
  }
}

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  Availability availability() const override {
    constexpr const char* kSimd = AKVIEW_CPU_VBMI     ? "AVX-512 VBMI"
                                  : AKVIEW_CPU_AVX512 ? "AVX-512"
                                  : AKVIEW_CPU_AVX2   ? "AVX2"
                                                      : "portable";
    return {true, std::to_string(shared_pool().threads()) + " threads, " + kSimd};
  }
  bool supports(const TensorView& view) const override { return find_kernel(view) || can_decode(view.type); }

  Status matvec(const TensorView& view, const float* x, float* y) override {
    AKV_TRY(validate_view(view));       // core: type decodable, spans cover rows / groups
    AKV_TRY(check_view_mapped(view));   // the file has not shrunk since it was opened
    const CpuKernelRow* kernel = find_kernel(view);
    if (view.n_rows == 0) return {};

    std::vector<float> xsum16(static_cast<size_t>(view.n_cols / 16));
    for (size_t k = 0; k < xsum16.size(); ++k) {
      float s = 0;
      for (int i = 0; i < 16; ++i) s += x[k * 16 + i];
      xsum16[k] = s;
    }
    std::vector<float> xperm;
    if (kernel && kernel->prepare) kernel->prepare(view, x, xperm);
    const CpuArgs args{&view, x, xsum16.data(), xperm.empty() ? x : xperm.data()};

    // Each task guards its own reads on its own thread (a file that shrinks mid-run faults there);
    // the kernels only read the view and write y, so the guard may jump out of them.
    return parallel_rows(view.n_rows, view.row_bytes, [&](int64_t r0, int64_t r1) -> Status {
      if (kernel) return guard_reads([&] { kernel->rows(args, r0, r1, y); });
      Status s;
      decoded_rows(view, x, r0, r1, y, s);
      return s;
    });
  }
};

}   // namespace

Backend& cpu_backend() {
  static CpuBackend b;
  return b;
}

void set_cpu_threads(int threads) { set_shared_pool_threads(threads); }
int cpu_threads() { return shared_pool().threads(); }

std::string_view cpu_kernel_variant(const TensorView& view) {
  if (const CpuKernelRow* k = find_kernel(view)) return k->variant;
  return can_decode(view.type) ? "decode_rows tile" : "";
}

}   // namespace akview::compute
