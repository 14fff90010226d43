// dlopen("libOpenCL.so.1") and dlsym of each entry point, once per process (see opencl_loader.hpp).
#include "compute/opencl_loader.hpp"

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

struct Loaded {
  OpenClApi api;
  bool ok = false;
  std::string why;
};

Loaded load() {
  Loaded l;
  const DlLibrary library = open_library("AKVIEW_OPENCL_LIBRARY", "libOpenCL.so.1");
  if (!library.handle) {
    l.why = library.why;
    return l;
  }
  void* h = library.handle;
  const std::string& lib = library.name;
  bool missing = false;
  auto sym = [&](auto member, const char* name) {
    void* p = dlsym(h, name);
    if (!p && !missing) {
      missing = true;
      l.why = fmt::format("{} lacks {}", lib, name);
    }
    assign(l.api, member, p);
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
  l.ok = !missing;   // the handle stays open for the life of the process (ICDs hold pointers into it)
  return l;
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

}  // namespace

const OpenClApi* opencl_api(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.ok) {
    if (why) *why = loaded.why;
    return nullptr;
  }
  return &loaded.api;
}

std::string cl_error_name(cl_int code) {
  for (const auto& e : kClErrors)
    if (e.code == code) return fmt::format("{} ({})", e.name, code);
  return fmt::format("OpenCL error {}", code);
}

}  // namespace akview::compute
