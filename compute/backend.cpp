// The backend registry table, `auto` selection and the view checks every backend shares.
#include "compute/backend.hpp"

#include <array>

#include <fmt/format.h>

#include "compute/backends.hpp"
#include "core/checked.hpp"

namespace akview::compute {
namespace {

constexpr std::array kBackends = {
    BackendRow{"reference", "f64 accumulation over the scalar decoders (the truth)", &reference_backend},
    BackendRow{"cpu", "fused dequant + dot, SIMD, persistent thread pool", &cpu_backend},
    BackendRow{"blas", "OpenBLAS cblas_sgemv over tiles dequantized into a reused buffer", &blas_backend},
    BackendRow{"opencl", "OpenCL kernels per storage family (ICD loader, dlopen)", &opencl_backend},
};

Error view_error(std::string message) { return make_error(ErrorCode::bad_shape, "", kNoOffset, std::move(message)); }

}  // namespace

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
    if (!a.available) return make_error(ErrorCode::unsupported, "", kNoOffset, fmt::format("backend '{}' is unavailable: {}", name, a.reason));
    if (!b->can_run(view))
      return make_error(ErrorCode::unsupported, "", kNoOffset, fmt::format("backend '{}' cannot run type {}", name, type_info(view.type).name));
    return b;
  }
  // An OpenCL GPU beats everything; on a CPU device PoCL measured slower than cpu and blas.
  if (opencl_has_gpu()) {
    Backend& ocl = opencl_backend();
    if (ocl.availability().available && ocl.supports(view)) return &ocl;
  }
  for (std::string_view n : {"cpu", "blas", "opencl", "reference"}) {
    Backend* b = find_backend(n);
    if (b->availability().available && b->supports(view)) return b;
  }
  return make_error(ErrorCode::unsupported, "", kNoOffset, fmt::format("no backend can run type {}", type_info(view.type).name));
}

uint64_t weight_bytes(const TensorView& view) {
  return view.data.size() + view.scales.size() + view.biases.size() + view.global_scale.size();
}

Status check_view(const TensorView& v) {
  if (v.n_rows < 0 || v.n_cols < 0) return view_error("negative dimension");
  const TypeInfo& info = type_info(v.type);
  auto need = checked_mul(v.row_bytes, static_cast<uint64_t>(v.n_rows));
  if (!need || v.data.size() < *need) return view_error("weight bytes do not cover n_rows x row_bytes");
  if (info.kind != TypeKind::composite) {
    if (info.block_elems == 0 || v.n_cols % info.block_elems != 0) return view_error("row is not a whole number of blocks");
    if (static_cast<uint64_t>(v.n_cols) / info.block_elems * info.block_bytes != v.row_bytes)
      return view_error("row_bytes disagrees with n_cols x type");
    return {};
  }
  if (v.bits == 0 || v.bits > 8 || v.group_size == 0 || v.n_cols % v.group_size != 0)
    return view_error("composite row is not a whole number of groups");
  if (static_cast<uint64_t>(v.n_cols) * v.bits % 8 != 0 || static_cast<uint64_t>(v.n_cols) * v.bits / 8 != v.row_bytes)
    return view_error("packed row bytes disagree with n_cols x bits");
  const uint64_t groups = static_cast<uint64_t>(v.n_rows) * static_cast<uint64_t>(v.n_cols / v.group_size);
  auto sb = checked_mul(groups, type_info(v.scales_type).block_bytes);
  if (!sb || v.scales.size() < *sb) return view_error("scales do not hold one value per group");
  if (!v.biases.empty()) {
    auto bb = checked_mul(groups, type_info(v.biases_type).block_bytes);
    if (!bb || v.biases.size() < *bb) return view_error("biases do not hold one value per group");
  }
  return {};
}

}  // namespace akview::compute
