// `akview devices` data: every backend with its availability, and every OpenCL platform/device
// found through the ICD loader with its properties. Data only; the CLI renders it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace akview::compute {

struct BackendStatus {
  std::string name;
  std::string description;
  bool available = false;
  std::string reason;   // why unavailable, or a detail when available (OpenCL: the device used)
};

struct OpenClDevice {
  std::string name, vendor, version, driver_version, type;   // type: "CPU", "GPU", "accelerator", ...
  uint32_t compute_units = 0;
  uint64_t global_mem_bytes = 0;
  uint64_t max_alloc_bytes = 0;
  uint64_t max_work_group_size = 0;
  bool fp16 = false;   // cl_khr_fp16 (PoCL CPU: no; akview does not need it)
  bool used = false;   // the device the opencl backend runs on
  int index = -1;      // global index across all platforms (the `--device N` number)
};

struct OpenClPlatform {
  std::string name, vendor, version;
  std::vector<OpenClDevice> devices;
  std::string error;   // why its devices could not be listed
};

struct DevicesReport {
  std::vector<BackendStatus> backends;
  std::vector<OpenClPlatform> opencl_platforms;
  std::string opencl_error;   // loader missing, no ICD (-1001), ... (empty when platforms were listed)
  int cpu_threads = 0;
};

DevicesReport list_devices();

// Picks the OpenCL device by its global index: platforms in the order the ICD loader lists them,
// devices in order within each platform (the order and `index` list_devices() reports). -1 goes
// back to the automatic choice (a GPU if any, else the first device). An index outside
// [0, device count) is an error that names the valid range, and leaves the current choice as it
// was. The backend is rebuilt for the new device (kernels compiled again; PoCL caches them).
Status select_opencl_device(int index);
// The index the backend was asked for (-1: automatic).
int selected_opencl_device();

}   // namespace akview::compute
