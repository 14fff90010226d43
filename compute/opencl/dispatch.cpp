// The OpenCL matvec launch (dispatch.hpp).
#include "compute/opencl/dispatch.hpp"

#include <algorithm>

#include "core/fault_guard.hpp"

namespace akview::compute {

Status dispatch_matvec(ClProgram& program, const ClTarget& target, const ClKernelRow& row, const TensorView& view,
                       const Resident* kept, const float* x, float* y) {
  const OpenClApi& api = *target.api;
  auto plan_or = plan_chunks(view, target.max_alloc_bytes);
  if (!plan_or) return std::move(plan_or).error();
  const ChunkPlan plan = *plan_or;
  cl_kernel k = program.kernel(row);

  const size_t x_bytes = sizeof(float) * static_cast<size_t>(view.n_cols);
  auto xmem = program.io_buffer(ClProgram::kX, x_bytes);
  if (!xmem) return std::move(xmem).error();
  // Blocking: x may be freed as soon as this returns, an error included.
  cl_int err = api.EnqueueWriteBuffer(program.queue(), *xmem, CL_TRUE, 0, x_bytes, x, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return cl_call_error("clEnqueueWriteBuffer(x)", err);

  // The kernels read the weights on the OpenCL runtime's own threads (PoCL: in this process), which
  // carry no SIGBUS guard and must not be jumped out of (they hold the runtime's locks). Kept
  // weights are the device's copy; weights read in place are protected only by the size
  // pre-check, repeated per chunk: a file cut while a chunk runs still ends the process
  // (core/fault_guard.hpp).
  size_t chunk_index = 0;
  for (int64_t r0 = 0; r0 < view.n_rows; r0 += plan.chunk_rows, ++chunk_index) {
    const int64_t rows = std::min(plan.chunk_rows, view.n_rows - r0);
    Chunk local;
    if (!kept) {
      if (r0 > 0) AKV_TRY(check_view_mapped(view));
      auto made = make_chunk(target, view, row, plan, r0, rows, CL_MEM_USE_HOST_PTR);
      if (!made) return std::move(made).error();
      local = std::move(*made);
    }
    const Chunk* chunk = kept ? &kept->chunks[chunk_index] : &local;
    const size_t y_bytes = sizeof(float) * static_cast<size_t>(rows);
    auto ymem = program.io_buffer(ClProgram::kY, y_bytes);
    if (!ymem) return std::move(ymem).error();
    const cl_ulong w_bytes = static_cast<cl_ulong>(rows) * view.row_bytes;
    const cl_int n_rows = static_cast<cl_int>(rows), n_cols = static_cast<cl_int>(view.n_cols);
    cl_uint arg = 0;
    auto set = [&](size_t size, const void* value) {
      if (err == CL_SUCCESS) err = api.SetKernelArg(k, arg, size, value);
      ++arg;
    };
    set(sizeof(cl_mem), &chunk->w.mem);
    set(sizeof(cl_ulong), &w_bytes);
    if (row.layout == ArgLayout::affine) {
      const cl_ulong s_bytes = static_cast<cl_ulong>(rows) * plan.s_row;
      const cl_ulong b_bytes = static_cast<cl_ulong>(rows) * plan.b_row;
      set(sizeof(cl_mem), &chunk->s.mem);
      set(sizeof(cl_ulong), &s_bytes);
      set(sizeof(cl_mem), &chunk->b.mem);
      set(sizeof(cl_ulong), &b_bytes);
    }
    set(sizeof(cl_mem), &*xmem);
    set(sizeof(cl_mem), &*ymem);
    set(sizeof(cl_int), &n_rows);
    set(sizeof(cl_int), &n_cols);
    if (row.layout == ArgLayout::affine) {
      const cl_int bits = view.bits, gs = static_cast<cl_int>(view.group_size);
      const cl_int st = cl_scalar_code(view.scales_type), bt = cl_scalar_code(view.biases_type);
      set(sizeof(cl_int), &bits);
      set(sizeof(cl_int), &gs);
      set(sizeof(cl_int), &st);
      set(sizeof(cl_int), &bt);
    }
    if (err != CL_SUCCESS) return cl_call_error("clSetKernelArg", err);
    // One work-item a row, the global size rounded up to kLocalSize (the kernels return for
    // row >= rows); or a work-group of lanes a row.
    const size_t lanes = static_cast<size_t>(program.lanes());
    const size_t local_size = lanes > 1 ? lanes : kLocalSize;
    const size_t global = lanes > 1 ? static_cast<size_t>(rows) * lanes
                                    : (static_cast<size_t>(rows) + kLocalSize - 1) / kLocalSize * kLocalSize;
    err = api.EnqueueNDRangeKernel(program.queue(), k, 1, nullptr, &global, &local_size, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return cl_call_error("clEnqueueNDRangeKernel", err);
    err = api.EnqueueReadBuffer(program.queue(), *ymem, CL_TRUE, 0, y_bytes, y + r0, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return cl_call_error("clEnqueueReadBuffer", err);
  }
  return {};
}

}   // namespace akview::compute
