// dlopen("libOpenCL.so.1") and dlsym of each entry point, once per process (see loader.hpp).
#include "compute/opencl/loader.hpp"

#include <dlfcn.h>

#include <array>
#include <mutex>

#include <fmt/format.h>

#include "compute/dl_library.hpp"

namespace akview::compute {
namespace {

template <typename F>
void assign(OpenClApi& api, F OpenClApi::*member, void* p) {
  api.*member = reinterpret_cast<F>(p);
}

Result<OpenClApi> load() {
  auto library = open_library("AKVIEW_OPENCL_LIBRARY", "libOpenCL.so.1");
  if (!library) return std::move(library).error();
  void* h = library->handle;
  const std::string& lib = library->name;
  OpenClApi api;
  std::string missing;   // the first entry point the library lacks
  auto sym = [&](auto member, const char* name) {
    void* p = dlsym(h, name);
    if (!p && missing.empty()) missing = name;
    assign(api, member, p);
  };
  sym(&OpenClApi::GetPlatformIDs, "clGetPlatformIDs");
  sym(&OpenClApi::GetPlatformInfo, "clGetPlatformInfo");
  sym(&OpenClApi::GetDeviceIDs, "clGetDeviceIDs");
  sym(&OpenClApi::GetDeviceInfo, "clGetDeviceInfo");
  sym(&OpenClApi::CreateContext, "clCreateContext");
  sym(&OpenClApi::ReleaseContext, "clReleaseContext");
  sym(&OpenClApi::CreateCommandQueue, "clCreateCommandQueue");
  sym(&OpenClApi::ReleaseCommandQueue, "clReleaseCommandQueue");
  sym(&OpenClApi::CreateProgramWithSource, "clCreateProgramWithSource");
  sym(&OpenClApi::BuildProgram, "clBuildProgram");
  sym(&OpenClApi::GetProgramBuildInfo, "clGetProgramBuildInfo");
  sym(&OpenClApi::ReleaseProgram, "clReleaseProgram");
  sym(&OpenClApi::CreateKernel, "clCreateKernel");
  sym(&OpenClApi::ReleaseKernel, "clReleaseKernel");
  sym(&OpenClApi::SetKernelArg, "clSetKernelArg");
  sym(&OpenClApi::CreateBuffer, "clCreateBuffer");
  sym(&OpenClApi::ReleaseMemObject, "clReleaseMemObject");
  sym(&OpenClApi::EnqueueNDRangeKernel, "clEnqueueNDRangeKernel");
  sym(&OpenClApi::EnqueueReadBuffer, "clEnqueueReadBuffer");
  sym(&OpenClApi::EnqueueWriteBuffer, "clEnqueueWriteBuffer");
  if (!missing.empty())
    return make_error(ErrorCode::unsupported, "", kNoOffset, fmt::format("{} lacks {}", lib, missing));
  return api;   // the handle stays open for the life of the process (ICDs hold pointers into it)
}

struct ClErrorName {
  cl_int code;
  const char* name;
};
constexpr std::array kClErrors = {
    ClErrorName{CL_DEVICE_NOT_FOUND, "CL_DEVICE_NOT_FOUND"},
    ClErrorName{CL_DEVICE_NOT_AVAILABLE, "CL_DEVICE_NOT_AVAILABLE"},
    ClErrorName{CL_COMPILER_NOT_AVAILABLE, "CL_COMPILER_NOT_AVAILABLE"},
    ClErrorName{CL_MEM_OBJECT_ALLOCATION_FAILURE, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
    ClErrorName{CL_OUT_OF_RESOURCES, "CL_OUT_OF_RESOURCES"},
    ClErrorName{CL_OUT_OF_HOST_MEMORY, "CL_OUT_OF_HOST_MEMORY"},
    ClErrorName{CL_BUILD_PROGRAM_FAILURE, "CL_BUILD_PROGRAM_FAILURE"},
    ClErrorName{CL_INVALID_VALUE, "CL_INVALID_VALUE"},
    ClErrorName{CL_INVALID_DEVICE, "CL_INVALID_DEVICE"},
    ClErrorName{CL_INVALID_BUFFER_SIZE, "CL_INVALID_BUFFER_SIZE"},
    ClErrorName{CL_INVALID_HOST_PTR, "CL_INVALID_HOST_PTR"},
    ClErrorName{CL_INVALID_KERNEL_ARGS, "CL_INVALID_KERNEL_ARGS"},
    ClErrorName{CL_INVALID_WORK_GROUP_SIZE, "CL_INVALID_WORK_GROUP_SIZE"},
    ClErrorName{CL_INVALID_GLOBAL_WORK_SIZE, "CL_INVALID_GLOBAL_WORK_SIZE"},
    ClErrorName{-1001, "CL_PLATFORM_NOT_FOUND_KHR"},
};

}   // namespace

Result<const OpenClApi*> opencl_api() {
  static const Result<OpenClApi> loaded = load();
  if (!loaded) return loaded.error();
  return &*loaded;
}

std::string cl_error_name(cl_int code) {
  for (const auto& e : kClErrors)
    if (e.code == code) return fmt::format("{} ({})", e.name, code);
  return fmt::format("OpenCL error {}", code);
}

Error cl_call_error(std::string_view what, cl_int code) {
  return make_error(ErrorCode::unsupported, "", kNoOffset,
                    fmt::format("opencl: {} failed: {}", what, cl_error_name(code)));
}

}   // namespace akview::compute
