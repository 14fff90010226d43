// Chunk plans and chunk buffers (buffers.hpp).
#include "compute/opencl/buffers.hpp"

#include <algorithm>
#include <climits>

namespace akview::compute {
namespace {

ClMem host_buffer(const ClTarget& target, const uint8_t* p, uint64_t bytes, cl_mem_flags mode, cl_int& err) {
  err = CL_SUCCESS;
  if (bytes == 0) {   // an empty span: a one-byte dummy buffer, never read (w_bytes = 0)
    return ClMem(target.api, target.api->CreateBuffer(target.context, CL_MEM_READ_ONLY, 1, nullptr, &err));
  }
  const bool aligned = reinterpret_cast<uintptr_t>(p) % 4 == 0;
  const cl_mem_flags flags =
      CL_MEM_READ_ONLY | (aligned && mode == CL_MEM_USE_HOST_PTR ? CL_MEM_USE_HOST_PTR : CL_MEM_COPY_HOST_PTR);
  void* host = const_cast<uint8_t*>(p);
  return ClMem(target.api, target.api->CreateBuffer(target.context, flags, static_cast<size_t>(bytes), host, &err));
}

}   // namespace

Result<ChunkPlan> plan_chunks(const TensorView& view, uint64_t max_alloc_bytes) {
  ChunkPlan p;
  const uint64_t groups_per_row = view.group_size ? static_cast<uint64_t>(view.n_cols / view.group_size) : 0;
  p.s_row = groups_per_row * type_info(view.scales_type).block_bytes;
  p.b_row = groups_per_row * type_info(view.biases_type).block_bytes;
  const uint64_t widest = std::max({view.row_bytes, p.s_row, p.b_row, uint64_t{1}});
  const uint64_t limit = std::min<uint64_t>(max_alloc_bytes, uint64_t{1} << 40);
  if (widest > limit)
    return make_error(ErrorCode::unsupported, "", kNoOffset,
                      "opencl: one row is larger than the device's max allocation");
  // At most INT_MAX - kLocalSize rows: the global size, rounded up to the work group, stays an int.
  p.chunk_rows = static_cast<int64_t>(
      std::min<uint64_t>({limit / widest, static_cast<uint64_t>(view.n_rows), uint64_t{INT_MAX} - kLocalSize}));
  return p;
}

Result<Chunk> make_chunk(const ClTarget& target, const TensorView& view, const ClKernelRow& row, const ChunkPlan& plan,
                         int64_t r0, int64_t rows, cl_mem_flags mode) {
  Chunk out;
  cl_int err = CL_SUCCESS;
  out.w = host_buffer(target, view.data.data() + static_cast<uint64_t>(r0) * view.row_bytes,
                      static_cast<uint64_t>(rows) * view.row_bytes, mode, err);
  if (err != CL_SUCCESS) return cl_call_error("clCreateBuffer(weights)", err);
  if (row.layout == ArgLayout::affine) {
    cl_int e2 = CL_SUCCESS, e3 = CL_SUCCESS;
    const uint64_t first = static_cast<uint64_t>(r0), n = static_cast<uint64_t>(rows);
    out.s = host_buffer(target, view.scales.data() + first * plan.s_row, n * plan.s_row, mode, e2);
    out.b = host_buffer(target, view.biases.data() + first * plan.b_row, n * plan.b_row, mode, e3);
    if (e2 != CL_SUCCESS || e3 != CL_SUCCESS)
      return cl_call_error("clCreateBuffer(scales/biases)", e2 != CL_SUCCESS ? e2 : e3);
  }
  return out;
}

}   // namespace akview::compute
