// One matvec launched on an OpenCL device: per chunk of rows, the kernel's arguments in its table
// row's layout, an NDRange over the rows and y read back.
#pragma once

#include "compute/opencl/program.hpp"
#include "compute/opencl/residency.hpp"

namespace akview::compute {

// y[0..n_rows) = W x on `program`'s device with `row`'s kernel, for a view with rows and columns.
// `kept` is the device's copy of the weights, or null to read them in place (over the mapping).
Status dispatch_matvec(ClProgram& program, const ClTarget& target, const ClKernelRow& row, const TensorView& view,
                       const Resident* kept, const float* x, float* y);

}   // namespace akview::compute
