// OpenCL buffers over a view's weights: a cl_mem released with its scope, the rows per launch that
// keep every buffer under the device's largest allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE, 2 GiB on
// PoCL), and one chunk of rows as weight, scale and bias buffers.
#pragma once

#include <cstdint>
#include <utility>

#include "compute/opencl/kernel_table.hpp"
#include "compute/opencl/loader.hpp"
#include "core/result.hpp"
#include "core/tensor_view.hpp"

namespace akview::compute {

// A cl_mem released when it goes out of scope.
struct ClMem {
  const OpenClApi* api = nullptr;
  cl_mem mem = nullptr;
  ClMem() = default;
  ClMem(const OpenClApi* a, cl_mem m) : api(a), mem(m) {}
  ClMem(const ClMem&) = delete;
  ClMem& operator=(const ClMem&) = delete;
  ClMem(ClMem&& o) noexcept : api(o.api), mem(o.mem) { o.mem = nullptr; }
  ClMem& operator=(ClMem&& o) noexcept {
    std::swap(api, o.api);
    std::swap(mem, o.mem);
    return *this;
  }
  ~ClMem() {
    if (mem) api->ReleaseMemObject(mem);
  }
};

// Where buffers are made: the API, the context, and the device's largest allocation in bytes.
struct ClTarget {
  const OpenClApi* api = nullptr;
  cl_context context = nullptr;
  uint64_t max_alloc_bytes = 0;
};

// Rows per launch: every buffer of a chunk stays under the device's max allocation.
struct ChunkPlan {
  int64_t chunk_rows = 0;
  uint64_t s_row = 0, b_row = 0;   // scale and bias bytes per row (affine)
};
Result<ChunkPlan> plan_chunks(const TensorView& view, uint64_t max_alloc_bytes);

// One chunk's buffers: over the caller's bytes (`mode` CL_MEM_USE_HOST_PTR: read in place where
// 4-byte aligned, which the kernels need for f32/f16, else copied into a buffer the driver aligns)
// or the device's own copy (CL_MEM_COPY_HOST_PTR: the upload). s and b only for the affine layout.
struct Chunk {
  ClMem w, s, b;
};
Result<Chunk> make_chunk(const ClTarget& target, const TensorView& view, const ClKernelRow& row, const ChunkPlan& plan,
                         int64_t r0, int64_t rows, cl_mem_flags mode);

}   // namespace akview::compute
