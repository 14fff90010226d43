// The backend singletons behind the registry table (internal to compute/).
#pragma once

#include <string>
#include <vector>

#include "compute/backend.hpp"

namespace akview::compute {

Backend& reference_backend();
Backend& cpu_backend();
Backend& blas_backend();
Backend& opencl_backend();
bool opencl_has_gpu();   // true when the OpenCL backend runs on a GPU device
// Weight uploads the OpenCL backend made (a tensor kept on the device is uploaded once), and the
// bytes it keeps there now (tests, the bench).
uint64_t opencl_upload_count();
uint64_t opencl_cached_bytes();
// The work-items that share a row in the OpenCL program (compute/opencl/program.hpp, row_lanes);
// 0 until the backend has been initialised on a device.
int opencl_row_lanes();

}   // namespace akview::compute

namespace akview::compute {

// cpu backend knobs (bench, tests): worker count (the pool is rebuilt), and which kernel runs a
// view ("avx2", "block", "decode_rows tile" or "" when none).
void set_cpu_threads(int threads);
int cpu_threads();
std::string_view cpu_kernel_variant(const TensorView& view);

}   // namespace akview::compute

namespace akview::compute {
struct OpenClPlatform;
// Lists OpenCL platforms/devices (through the ICD loader), the device the backend uses marked; an
// unsupported Error when none can be listed (no loader, no ICD).
Result<std::vector<OpenClPlatform>> opencl_enumerate();
}   // namespace akview::compute
