// clGet*Info queries and the platform listing (device_info.hpp).
#include "compute/opencl/device_info.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

namespace akview::compute {

std::string info_string(const OpenClApi& api, cl_device_id d, cl_device_info what) {
  return cl_string([&](size_t n, void* p, size_t* out) { return api.GetDeviceInfo(d, what, n, p, out); });
}

std::string platform_string(const OpenClApi& api, cl_platform_id p, cl_platform_info what) {
  return cl_string([&](size_t n, void* buf, size_t* out) { return api.GetPlatformInfo(p, what, n, buf, out); });
}

OpenClDevice describe_device(const OpenClApi& api, cl_device_id d) {
  OpenClDevice dev;
  dev.name = info_string(api, d, CL_DEVICE_NAME);
  dev.vendor = info_string(api, d, CL_DEVICE_VENDOR);
  dev.version = info_string(api, d, CL_DEVICE_VERSION);
  dev.driver_version = info_string(api, d, CL_DRIVER_VERSION);
  const auto type = info_value<cl_device_type>(api, d, CL_DEVICE_TYPE);
  dev.type = (type & CL_DEVICE_TYPE_GPU)           ? "GPU"
             : (type & CL_DEVICE_TYPE_CPU)         ? "CPU"
             : (type & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator"
                                                   : "other";
  dev.compute_units = info_value<cl_uint>(api, d, CL_DEVICE_MAX_COMPUTE_UNITS);
  dev.global_mem_bytes = info_value<cl_ulong>(api, d, CL_DEVICE_GLOBAL_MEM_SIZE);
  dev.max_alloc_bytes = info_value<cl_ulong>(api, d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  dev.max_work_group_size = info_value<size_t>(api, d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  dev.fp16 = info_string(api, d, CL_DEVICE_EXTENSIONS).find("cl_khr_fp16") != std::string::npos;
  return dev;
}

namespace {

// OpenCL libraries of GPU vendors that ship one with their driver, and the ICD file that names it.
struct VendorLibrary {
  const char* library;
  const char* icd_file;
};
constexpr VendorLibrary kVendorLibraries[] = {
    {"libnvidia-opencl.so.1", "nvidia.icd"},
    {"libamdocl64.so", "amdocl64.icd"},
    {"libigdrcl.so", "intel.icd"},
};

}   // namespace

std::string no_platform_message(cl_int err) {
  std::string message = err == CL_SUCCESS ? "no OpenCL platform (no ICD installed)"
                                          : "no OpenCL platform: clGetPlatformIDs returned " + cl_error_name(err);
  for (const VendorLibrary& v : kVendorLibraries) {
    void* handle = dlopen(v.library, RTLD_LAZY | RTLD_LOCAL);
    if (!handle) {
      // Read the error and ask again: glibc frees the message it keeps for this thread only then
      // (LeakSanitizer, which is told not to scan thread-local storage, reports it otherwise).
      dlerror();
      dlerror();
      continue;
    }
    dlclose(handle);
    message += fmt::format(
        "; {} is here but no ICD file names it: echo {} > DIR/{} and set OCL_ICD_VENDORS=DIR (or put the file "
        "in /etc/OpenCL/vendors)",
        v.library, v.library, v.icd_file);
    break;
  }
  return message;
}

Result<std::vector<OpenClPlatform>> list_platforms(const OpenClApi& api, int used_index) {
  cl_uint n = 0;
  cl_int err = api.GetPlatformIDs(0, nullptr, &n);
  if (err != CL_SUCCESS || n == 0) return make_error(ErrorCode::unsupported, "", kNoOffset, no_platform_message(err));
  std::vector<cl_platform_id> platforms(n);
  api.GetPlatformIDs(n, platforms.data(), nullptr);
  std::vector<OpenClPlatform> out;
  int index = 0;
  for (cl_platform_id p : platforms) {
    OpenClPlatform plat;
    plat.name = platform_string(api, p, CL_PLATFORM_NAME);
    plat.vendor = platform_string(api, p, CL_PLATFORM_VENDOR);
    plat.version = platform_string(api, p, CL_PLATFORM_VERSION);
    cl_uint nd = 0;
    err = api.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd);
    if (err != CL_SUCCESS || nd == 0) {
      plat.error = err == CL_SUCCESS ? "no devices" : "clGetDeviceIDs returned " + cl_error_name(err);
    } else {
      std::vector<cl_device_id> devs(nd);
      api.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devs.data(), nullptr);
      for (cl_device_id d : devs) {
        OpenClDevice dev = describe_device(api, d);
        dev.index = index++;
        dev.used = dev.index == used_index;
        plat.devices.push_back(std::move(dev));
      }
    }
    out.push_back(std::move(plat));
  }
  return out;
}

}   // namespace akview::compute
