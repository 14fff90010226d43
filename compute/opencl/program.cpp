// Building the OpenCL program for a device (program.hpp).
#include "compute/opencl/program.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "compute/opencl/device_info.hpp"
#include "compute/opencl/kernel_sources.hpp"

namespace akview::compute {
namespace {

Error build_error(std::string message) { return make_error(ErrorCode::unsupported, "", kNoOffset, std::move(message)); }

}   // namespace

ClProgram::~ClProgram() {
  for (auto& k : kernels_)
    if (k) api_->ReleaseKernel(k);
  if (program_) api_->ReleaseProgram(program_);
  if (queue_) api_->ReleaseCommandQueue(queue_);
  if (context_) api_->ReleaseContext(context_);
}

Result<std::unique_ptr<ClProgram>> ClProgram::build(const OpenClApi& api, cl_device_id device) {
  std::unique_ptr<ClProgram> p(new ClProgram(api));
  cl_int err = CL_SUCCESS;
  p->context_ = api.CreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) return build_error("clCreateContext failed: " + cl_error_name(err));
  p->queue_ = api.CreateCommandQueue(p->context_, device, 0, &err);
  if (err != CL_SUCCESS) return build_error("clCreateCommandQueue failed: " + cl_error_name(err));
  // common.cl first: the helpers the other files use.
  std::vector<const char*> texts;
  std::vector<size_t> lengths;
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& src : opencl_kernel_sources())
      if ((src.file == "common.cl") == (pass == 0)) {
        texts.push_back(src.text.data());
        lengths.push_back(src.text.size());
      }
  p->program_ =
      api.CreateProgramWithSource(p->context_, static_cast<cl_uint>(texts.size()), texts.data(), lengths.data(), &err);
  if (err != CL_SUCCESS) return build_error("clCreateProgramWithSource failed: " + cl_error_name(err));
  err = api.BuildProgram(p->program_, 1, &device, "-cl-mad-enable", nullptr, nullptr);
  if (err != CL_SUCCESS) {
    cl_program program = p->program_;
    const std::string log = cl_string([&](size_t n, void* buf, size_t* out) {
      return api.GetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, n, buf, out);
    });
    return build_error("kernel build failed: " + cl_error_name(err) + ": " + log.substr(0, 2000));
  }
  for (size_t i = 0; i < kClKernels.size(); ++i) {
    p->kernels_[i] = api.CreateKernel(p->program_, kClKernels[i].kernel, &err);
    if (err != CL_SUCCESS)
      return build_error(fmt::format("clCreateKernel({}) failed: {}", kClKernels[i].kernel, cl_error_name(err)));
  }
  return {std::move(p)};
}

}   // namespace akview::compute
