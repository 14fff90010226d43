// What the OpenCL runtime says about its platforms and devices: clGet*Info strings and values, a
// device described as `akview devices` shows it, and every platform with its devices.
#pragma once

#include <string>
#include <vector>

#include "compute/devices.hpp"
#include "compute/opencl/loader.hpp"
#include "core/result.hpp"

namespace akview::compute {

// An OpenCL string query (size first, then the bytes) without its trailing NULs and newlines;
// query(size, buffer, &size_out) is one clGet*Info call.
template <class Query>
std::string cl_string(Query query) {
  size_t n = 0;
  if (query(0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (query(n, s.data(), nullptr) != CL_SUCCESS) return {};
  while (!s.empty() && (s.back() == '\0' || s.back() == '\n')) s.pop_back();
  return s;
}

std::string info_string(const OpenClApi& api, cl_device_id d, cl_device_info what);
std::string platform_string(const OpenClApi& api, cl_platform_id p, cl_platform_info what);

// A fixed-size device property; T{} when the query fails.
template <typename T>
T info_value(const OpenClApi& api, cl_device_id d, cl_device_info what) {
  T v{};
  if (api.GetDeviceInfo(d, what, sizeof v, &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

// Name, vendor, versions, type, sizes and fp16 support (index and `used` are the caller's).
OpenClDevice describe_device(const OpenClApi& api, cl_device_id d);

// Why no platform was found (clGetPlatformIDs' error, or none installed) and, where a vendor's
// OpenCL library can be loaded while no ICD file names it (NVIDIA's driver in a container brings
// libnvidia-opencl.so.1 but often not /etc/OpenCL/vendors/nvidia.icd), how to make one.
std::string no_platform_message(cl_int err);

// Every platform in the ICD loader's order, its devices numbered by their global index (the
// `--device N` number); the device at `used_index` marked used. An unsupported Error when no
// platform can be listed; a platform whose devices cannot be listed says so in its `error`.
Result<std::vector<OpenClPlatform>> list_platforms(const OpenClApi& api, int used_index);

}   // namespace akview::compute
