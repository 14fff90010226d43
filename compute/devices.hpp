// `akview devices` data: every backend with its availability, and every OpenCL platform/device
// found through the ICD loader with its properties. Data only; the CLI renders it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace akview::compute {

struct BackendStatus {
  std::string name;
  std::string description;
  bool available = false;
  std::string reason;     // why unavailable, or a detail when available (OpenCL: the device used)
};

struct OpenClDevice {
  std::string name, vendor, version, driver_version, type;   // type: "CPU", "GPU", "accelerator", ...
  uint32_t compute_units = 0;
  uint64_t global_mem_bytes = 0;
  uint64_t max_alloc_bytes = 0;
  uint64_t max_work_group_size = 0;
  bool fp16 = false;      // cl_khr_fp16 (PoCL CPU: no; akview does not need it)
  bool used = false;      // the device the opencl backend runs on
};

struct OpenClPlatform {
  std::string name, vendor, version;
  std::vector<OpenClDevice> devices;
  std::string error;      // why its devices could not be listed
};

struct DevicesReport {
  std::vector<BackendStatus> backends;
  std::vector<OpenClPlatform> opencl_platforms;
  std::string opencl_error;   // loader missing, no ICD (-1001), ... (empty when platforms were listed)
  int cpu_threads = 0;
};

DevicesReport list_devices();

}  // namespace akview::compute
