// Building the OpenCL program for a device (program.hpp).
#include "compute/opencl/program.hpp"

#include <cstdlib>
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
  io_ = {};   // buffers of the context, released before it
  for (auto& k : kernels_)
    if (k) api_->ReleaseKernel(k);
  if (program_) api_->ReleaseProgram(program_);
  if (queue_) api_->ReleaseCommandQueue(queue_);
  if (context_) api_->ReleaseContext(context_);
}

Result<cl_mem> ClProgram::io_buffer(IoBuffer which, size_t bytes) {
  if (io_[which].mem && io_bytes_[which] >= bytes) return io_[which].mem;
  io_[which] = {};
  io_bytes_[which] = 0;
  cl_int err = CL_SUCCESS;
  const cl_mem_flags flags = which == kX ? CL_MEM_READ_ONLY : CL_MEM_WRITE_ONLY;
  cl_mem mem = api_->CreateBuffer(context_, flags, bytes, nullptr, &err);
  if (err != CL_SUCCESS)
    return build_error(fmt::format("clCreateBuffer({}) failed: {}", which == kX ? "x" : "y", cl_error_name(err)));
  io_[which] = ClMem(api_, mem);
  io_bytes_[which] = bytes;
  return mem;
}

int row_lanes(const OpenClApi& api, cl_device_id device) {
  const auto type = info_value<cl_device_type>(api, device, CL_DEVICE_TYPE);
  int lanes = (type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR)) ? 64 : 1;
  if (const char* env = std::getenv("AKVIEW_OPENCL_ROW_LANES")) {
    const int asked = std::atoi(env);
    if (asked >= 1 && asked <= 256 && (asked & (asked - 1)) == 0) lanes = asked;
  }
  const auto group_max = info_value<size_t>(api, device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  while (lanes > 1 && group_max && static_cast<size_t>(lanes) > group_max) lanes /= 2;
  return lanes;
}

Result<std::unique_ptr<ClProgram>> ClProgram::build(const OpenClApi& api, cl_device_id device, int lanes) {
  std::unique_ptr<ClProgram> p(new ClProgram(api));
  p->lanes_ = lanes;
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
  const std::string options = fmt::format("-cl-mad-enable -DAKV_LANES={}", lanes);
  err = api.BuildProgram(p->program_, 1, &device, options.c_str(), nullptr, nullptr);
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
