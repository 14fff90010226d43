// How many work-items share a row on the OpenCL device: one on a CPU device (PoCL), a work-group on a
// GPU, or what AKVIEW_OPENCL_ROW_LANES asks. ctest runs the OpenCL tests a second time with 64
// lanes on PoCL (tests/compute/compute.cmake), so the kernels' GPU shape is checked here too;
// this test makes sure that run really used them.
#include <gtest/gtest.h>

#include <cstdlib>

#include "compute/backend.hpp"
#include "compute/backends.hpp"

namespace akview::compute {
namespace {

TEST(OpenClRowLanes, TheBackendUsesTheLanesAsked) {
  Backend& cl = opencl_backend();
  const Availability a = cl.availability();
  if (!a.available) GTEST_SKIP() << "opencl unavailable: " << a.reason;
  const char* asked = std::getenv("AKVIEW_OPENCL_ROW_LANES");
  if (asked && *asked) {
    EXPECT_EQ(opencl_row_lanes(), std::atoi(asked));
  } else {
    EXPECT_EQ(opencl_row_lanes(), opencl_has_gpu() ? 64 : 1);
  }
}

}   // namespace
}   // namespace akview::compute
