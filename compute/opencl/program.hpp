// The OpenCL program built for one device: a context and command queue on it, the program built
// from the embedded kernel sources (kernel_sources.hpp) and one cl_kernel per kernel-table row,
// released together. Building runs the device's compiler (PoCL caches it in $POCL_CACHE_DIR).
#pragma once

#include <array>
#include <memory>

#include "compute/opencl/buffers.hpp"
#include "compute/opencl/kernel_table.hpp"
#include "compute/opencl/loader.hpp"
#include "core/result.hpp"

namespace akview::compute {

class ClProgram {
 public:
  // An unsupported Error saying which step failed (for a failed build, with the compiler's log).
  // lanes: the work-items that share a row (row_lanes()), built into the kernels as AKV_LANES.
  static Result<std::unique_ptr<ClProgram>> build(const OpenClApi& api, cl_device_id device, int lanes);
  ~ClProgram();
  ClProgram(const ClProgram&) = delete;
  ClProgram& operator=(const ClProgram&) = delete;

  cl_context context() const { return context_; }
  cl_command_queue queue() const { return queue_; }
  int lanes() const { return lanes_; }
  // The buffer that takes x (kX) or y (kY) of a launch, at least `bytes` long: kept from launch to
  // launch and grown when a longer one comes (making and freeing them took 0.04-0.06 ms of each
  // matvec on an H200, a sixth of a 4096 x 14336 one).
  enum IoBuffer { kX, kY };
  Result<cl_mem> io_buffer(IoBuffer which, size_t bytes);
  // The kernel of a row of kClKernels.
  cl_kernel kernel(const ClKernelRow& row) const { return kernels_[static_cast<size_t>(&row - kClKernels.data())]; }

 private:
  explicit ClProgram(const OpenClApi& api) : api_(&api) {}
  const OpenClApi* api_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program program_ = nullptr;
  int lanes_ = 1;
  std::array<ClMem, 2> io_;   // x, y
  std::array<size_t, 2> io_bytes_{};
  std::array<cl_kernel, kClKernels.size()> kernels_{};
};

// How many work-items compute one row on this device (compute/kernels/common.cl): 1 on a CPU
// device, 64 on a GPU or accelerator (whose threads must read neighbouring bytes, and of which
// one-per-row would leave most idle), at most the device's work-group size.
// AKVIEW_OPENCL_ROW_LANES (a power of two, 1 to 256) chooses it instead: the tests run the GPU
// shape on PoCL with it.
int row_lanes(const OpenClApi& api, cl_device_id device);

}   // namespace akview::compute
