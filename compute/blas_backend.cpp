// The OpenBLAS backend: f32 tensors are one cblas_sgemv per tile of rows straight on the mapping;
// every other decodable type is dequantized a tile at a time (decode_rows) into a reused,
// cache-sized per-thread buffer, and each tile is one cblas_sgemv. Tiles are spread over the shared
// thread pool, with OpenBLAS itself single-threaded inside them (no oversubscription of the cores).
// That also keeps every read of the mapping on a thread akview guards (core/fault_guard.hpp):
// OpenBLAS's own threads would carry no SIGBUS guard. A single-threaded sgemv holds no lock while
// its kernel runs, so the guard may jump out of it; the one cost of such a fault is the scratch
// buffer that call took from OpenBLAS's allocator, which is never given back (after many faults
// OpenBLAS grows its table and says so once on stderr: "precompiled NUM_THREADS exceeded").
//
// libopenblas.so.0 is loaded with dlopen the first time the backend is asked for (as OpenCL is):
// linked, its thread pool started with every process and one of its threads spun in sched_yield for
// ~0.1 s of CPU, beside a listing or a TUI that never multiplies. Without the library the backend
// is unavailable with dlerror's reason (AKVIEW_OPENBLAS_LIBRARY names another file; tests use it).
#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include <cblas.h>
#include <fmt/format.h>

#include "compute/backends.hpp"
#include "compute/dl_library.hpp"
#include "compute/thread_pool.hpp"
#include "core/decode/decode.hpp"
#include "core/fault_guard.hpp"

namespace akview::compute {
namespace {

constexpr int64_t kMaxBlasDim = 0x7fffffff;

// The two entry points akview calls, resolved once per process; an unsupported Error when the
// library or one of them is missing.
struct BlasApi {
  decltype(&::cblas_sgemv) sgemv = nullptr;
  void (*set_num_threads)(int) = nullptr;
};

Result<BlasApi> load_blas() {
  auto lib = open_library("AKVIEW_OPENBLAS_LIBRARY", "libopenblas.so.0");
  if (!lib) return std::move(lib).error();
  BlasApi a;
  a.sgemv = reinterpret_cast<decltype(a.sgemv)>(dlsym(lib->handle, "cblas_sgemv"));
  a.set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(lib->handle, "openblas_set_num_threads"));
  if (!a.sgemv || !a.set_num_threads)
    return make_error(ErrorCode::unsupported, "", kNoOffset,
                      fmt::format("{} lacks {}", lib->name, a.sgemv ? "openblas_set_num_threads" : "cblas_sgemv"));
  return a;
}

const Result<BlasApi>& blas_api() {
  static const Result<BlasApi> api = load_blas();
  return api;
}
constexpr uint64_t kTileBytes = uint64_t{256} << 10;   // fits the L2 of one core

class BlasBackend final : public Backend {
 public:
  std::string_view name() const override { return "blas"; }
  Availability availability() const override {
    const Result<BlasApi>& api = blas_api();
    return {api.ok(), api.ok() ? "" : api.error().message};
  }
  bool supports(const TensorView& view) const override { return view.type == TypeId::f32 || can_decode(view.type); }

  Status matvec(const TensorView& view, const float* x, float* y) override {
    AKV_TRY(validate_view(view));   // core: type decodable, spans cover rows / groups
    if (!supports(view))
      return make_error(ErrorCode::unsupported, "", kNoOffset,
                        std::string("blas: no decoder for type ") + std::string(type_info(view.type).name));
    if (view.n_rows == 0) return {};
    if (view.n_cols == 0) {   // sgemv returns early on N = 0 without writing y
      std::fill_n(y, view.n_rows, 0.0f);
      return {};
    }
    if (view.n_cols > kMaxBlasDim || view.n_rows > kMaxBlasDim)
      return make_error(ErrorCode::unsupported, "", kNoOffset, "blas: dimension above 2^31-1 (cblas takes int)");
    const Result<BlasApi>& loaded = blas_api();
    if (!loaded) return make_error(ErrorCode::unsupported, "", kNoOffset, "blas: " + loaded.error().message);
    const BlasApi& api = *loaded;
    std::lock_guard lock(mutex_);
    api.set_num_threads(1);
    const int64_t cols = view.n_cols;
    const int64_t tile_rows =
        std::max<int64_t>(1, static_cast<int64_t>(kTileBytes / (sizeof(float) * std::max<int64_t>(cols, 1))));
    const int64_t n_tiles = (view.n_rows + tile_rows - 1) / tile_rows;
    std::vector<Status> status(static_cast<size_t>(n_tiles));
    const bool direct = view.type == TypeId::f32 && reinterpret_cast<uintptr_t>(view.data.data()) % alignof(float) == 0;
    if (direct) AKV_TRY(check_view_mapped(view));
    shared_pool().parallel_for(n_tiles, [&](int64_t t) {
      thread_local std::vector<float> tile;
      const int64_t r0 = t * tile_rows, r1 = std::min(view.n_rows, r0 + tile_rows);
      if (direct) {   // sgemv straight on the mapping, on this (guarded) thread: OpenBLAS is single-threaded here
        const float* w = reinterpret_cast<const float*>(view.data.data()) + r0 * cols;
        status[t] = guard_reads([&] {
          api.sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(r1 - r0), static_cast<int>(cols), 1.0f, w,
                    static_cast<int>(cols), x, 1, 0.0f, y + r0, 1);
        });
        return;
      }
      tile.resize(static_cast<size_t>((r1 - r0) * cols));
      Status s = decode_rows(view, r0, r1, tile.data());
      if (!s.ok()) {
        status[t] = std::move(s);
        return;
      }
      api.sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(r1 - r0), static_cast<int>(cols), 1.0f, tile.data(),
                static_cast<int>(cols), x, 1, 0.0f, y + r0, 1);
    });
    for (auto& s : status)
      if (!s.ok()) return std::move(s).error();
    return {};
  }

 private:
  std::mutex mutex_;
};

}   // namespace

Backend& blas_backend() {
  static BlasBackend b;
  return b;
}

}   // namespace akview::compute
