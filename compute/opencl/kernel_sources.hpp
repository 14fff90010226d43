// The OpenCL kernel sources, embedded at build time from compute/kernels/*.cl
// (compute/embed_kernels.cmake writes the definition).
#pragma once

#include <span>
#include <string_view>

namespace akview::compute {

struct KernelSource {
  std::string_view file;   // "k_quants.cl"
  std::string_view text;
};

// Every .cl file, sorted by name; common.cl holds the helpers the others use.
std::span<const KernelSource> opencl_kernel_sources();

}   // namespace akview::compute
