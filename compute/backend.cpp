// The backend registry table, `auto` selection and the view checks every backend shares.
#include "compute/backend.hpp"

#include <array>

#include <fmt/format.h>

#include "compute/backends.hpp"

namespace akview::compute {
namespace {

constexpr std::array kBackends = {
    BackendRow{"reference", "f64 accumulation over the scalar decoders (the truth)", &reference_backend},
    BackendRow{"cpu", "fused dequant + dot, SIMD, persistent thread pool", &cpu_backend},
    BackendRow{"blas", "OpenBLAS cblas_sgemv over tiles dequantized into a reused buffer", &blas_backend},
    BackendRow{"opencl", "OpenCL kernels per storage family (ICD loader, dlopen)", &opencl_backend},
};

}   // namespace

std::span<const BackendRow> backend_table() { return kBackends; }

Backend* find_backend(std::string_view name) {
  for (const auto& row : kBackends)
    if (row.name == name) return &row.instance();
  return nullptr;
}

Result<Backend*> pick_backend(std::string_view name, const TensorView& view) {
  if (name != "auto") {
    Backend* b = find_backend(name);
    if (!b) return make_error(ErrorCode::usage, "", kNoOffset, fmt::format("unknown backend '{}'", name));
    auto a = b->availability();
    if (!a.available)
      return make_error(ErrorCode::unsupported, "", kNoOffset,
                        fmt::format("backend '{}' is unavailable: {}", name, a.reason));
    if (!b->can_run(view))
      return make_error(ErrorCode::unsupported, "", kNoOffset,
                        fmt::format("backend '{}' cannot run type {}", name, type_info(view.type).name));
    return b;
  }
  // An OpenCL GPU beats everything; on a CPU device PoCL measured slower than cpu and blas.
  if (opencl_has_gpu()) {
    Backend& ocl = opencl_backend();
    if (ocl.availability().available && ocl.supports(view)) return &ocl;
  }
  if (cpu_backend().supports(view)) return &cpu_backend();
  return make_error(ErrorCode::unsupported, "", kNoOffset,
                    fmt::format("no backend can run type {}", type_info(view.type).name));
}

uint64_t weight_bytes(const TensorView& view) {
  return view.data.size() + view.scales.size() + view.biases.size() + view.global_scale.size();
}

}   // namespace akview::compute
