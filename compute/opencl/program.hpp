// The OpenCL program built for one device: a context and command queue on it, the program built
// from the embedded kernel sources (kernel_sources.hpp) and one cl_kernel per kernel-table row,
// released together. Building runs the device's compiler (PoCL caches it in $POCL_CACHE_DIR).
#pragma once

#include <array>
#include <memory>

#include "compute/opencl/kernel_table.hpp"
#include "compute/opencl/loader.hpp"
#include "core/result.hpp"

namespace akview::compute {

class ClProgram {
 public:
  // An unsupported Error saying which step failed (for a failed build, with the compiler's log).
  static Result<std::unique_ptr<ClProgram>> build(const OpenClApi& api, cl_device_id device);
  ~ClProgram();
  ClProgram(const ClProgram&) = delete;
  ClProgram& operator=(const ClProgram&) = delete;

  cl_context context() const { return context_; }
  cl_command_queue queue() const { return queue_; }
  // The kernel of a row of kClKernels.
  cl_kernel kernel(const ClKernelRow& row) const { return kernels_[static_cast<size_t>(&row - kClKernels.data())]; }

 private:
  explicit ClProgram(const OpenClApi& api) : api_(&api) {}
  const OpenClApi* api_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program program_ = nullptr;
  std::array<cl_kernel, kClKernels.size()> kernels_{};
};

}   // namespace akview::compute
