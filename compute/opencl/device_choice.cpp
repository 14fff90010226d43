// The OpenCL device choice (device_choice.hpp).
#include "compute/opencl/device_choice.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "compute/opencl/device_info.hpp"

namespace akview::compute {
namespace {

bool is_gpu(const OpenClApi& api, cl_device_id d) {
  return (info_value<cl_device_type>(api, d, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU) != 0;
}

Error unavailable(std::string message) { return make_error(ErrorCode::unsupported, "", kNoOffset, std::move(message)); }

}   // namespace

std::vector<cl_device_id> all_devices(const OpenClApi& api) {
  std::vector<cl_device_id> out;
  cl_uint n_platforms = 0;
  if (api.GetPlatformIDs(0, nullptr, &n_platforms) != CL_SUCCESS || n_platforms == 0) return out;
  std::vector<cl_platform_id> platforms(n_platforms);
  api.GetPlatformIDs(n_platforms, platforms.data(), nullptr);
  for (cl_platform_id p : platforms) {
    cl_uint n = 0;
    if (api.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) continue;
    std::vector<cl_device_id> devs(n);
    api.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, devs.data(), nullptr);
    out.insert(out.end(), devs.begin(), devs.end());
  }
  return out;
}

Result<DeviceChoice> choose_device(const OpenClApi& api, int requested) {
  cl_uint n_platforms = 0;
  const cl_int err = api.GetPlatformIDs(0, nullptr, &n_platforms);
  if (err != CL_SUCCESS || n_platforms == 0) return unavailable(no_platform_message(err));
  const std::vector<cl_device_id> devices = all_devices(api);
  DeviceChoice choice;
  if (requested >= 0) {
    if (static_cast<size_t>(requested) >= devices.size())
      return unavailable(fmt::format("no OpenCL device {} ({} found)", requested, devices.size()));
    choice.index = requested;
  } else {
    // A GPU anywhere beats the first device of any kind.
    for (size_t i = 0; i < devices.size() && choice.index < 0; ++i)
      if (is_gpu(api, devices[i])) choice.index = static_cast<int>(i);
    if (choice.index < 0 && !devices.empty()) choice.index = 0;
  }
  if (choice.index < 0) return unavailable("OpenCL platforms found, but no device");
  choice.id = devices[static_cast<size_t>(choice.index)];
  return choice;
}

Status check_device_index(const OpenClApi& api, int index) {
  const auto devices = all_devices(api);
  if (index >= 0 && static_cast<size_t>(index) < devices.size()) return {};
  return make_error(ErrorCode::usage, "", kNoOffset,
                    devices.empty() ? fmt::format("opencl: no device {}: no OpenCL device found", index)
                                    : fmt::format("opencl: no device {}: {} device(s) found, valid indices 0..{}",
                                                  index, devices.size(), devices.size() - 1));
}

bool chooses_gpu(const OpenClApi& api, int requested) {
  const auto devices = all_devices(api);
  auto gpu = [&](cl_device_id d) { return is_gpu(api, d); };
  if (requested >= 0)
    return static_cast<size_t>(requested) < devices.size() && gpu(devices[static_cast<size_t>(requested)]);
  return std::any_of(devices.begin(), devices.end(), gpu);
}

}   // namespace akview::compute
