// Which OpenCL device the backend runs on. Devices are numbered across platforms in one global order
// (platforms as the ICD loader lists them, devices in order within each): the `--device N` numbers
// `akview devices` shows. Asked for none (-1), the backend takes a GPU anywhere, else the first device.
#pragma once

#include <vector>

#include "compute/opencl/loader.hpp"
#include "core/result.hpp"

namespace akview::compute {

// Every device of every platform, in the global index order.
std::vector<cl_device_id> all_devices(const OpenClApi& api);

struct DeviceChoice {
  int index = -1;   // global index
  cl_device_id id = nullptr;
};

// The device asked for by global index (`requested`), or the automatic choice for -1. An
// unsupported Error (the sentence `akview devices` shows) when there is no platform, no such
// device, or no device at all.
Result<DeviceChoice> choose_device(const OpenClApi& api, int requested);

// A usage Error naming the valid range when `index` is no device's global index.
Status check_device_index(const OpenClApi& api, int index);

// True when the device the choice above would take is a GPU. From the device list only: building
// the program would cost every `auto` run on a machine whose only device is PoCL's CPU.
bool chooses_gpu(const OpenClApi& api, int requested);

}   // namespace akview::compute
