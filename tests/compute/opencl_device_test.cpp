// OpenCL device selection by global index (select_opencl_device / RunOptions::opencl_device): a bad
// index is a usage error that names the valid range and keeps the current choice; a good index is
// the device list_devices() marks as used, and matvec on it matches the reference.
#include <gtest/gtest.h>

#include <cmath>

#include "compute/backend.hpp"
#include "compute/devices.hpp"
#include "compute/reference.hpp"
#include "synthetic.hpp"

namespace akview::compute {
namespace {

int count_devices(const DevicesReport& r) {
  int n = 0;
  for (const auto& p : r.opencl_platforms) n += static_cast<int>(p.devices.size());
  return n;
}

TEST(OpenClDevice, BadIndexIsAUsageErrorAndKeepsTheChoice) {
  const int before = selected_opencl_device();
  for (int bad : {1000000, -2}) {
    Status s = select_opencl_device(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.error().code, ErrorCode::usage) << s.error().to_string();
    EXPECT_NE(s.error().to_string().find(std::to_string(bad)), std::string::npos) << s.error().to_string();
    EXPECT_EQ(selected_opencl_device(), before);
  }
}

TEST(OpenClDevice, IndexMatchesListDevicesAndRuns) {
  Backend* ocl = find_backend("opencl");
  ASSERT_NE(ocl, nullptr);
  if (!ocl->availability().available) GTEST_SKIP() << "opencl unavailable";
  const DevicesReport before = list_devices();
  const int n = count_devices(before);
  ASSERT_GT(n, 0);
  // Indices are 0..n-1 in list order, and exactly one device is marked used.
  int expect = 0, used = 0;
  for (const auto& p : before.opencl_platforms)
    for (const auto& d : p.devices) {
      EXPECT_EQ(d.index, expect++);
      used += d.used;
    }
  EXPECT_EQ(used, 1);

  const Status past_end = select_opencl_device(n);
  ASSERT_FALSE(past_end.ok());
  EXPECT_NE(past_end.error().to_string().find("0.." + std::to_string(n - 1)), std::string::npos)
      << past_end.error().to_string();

  const int last = n - 1;
  ASSERT_TRUE(select_opencl_device(last).ok());
  EXPECT_EQ(selected_opencl_device(), last);
  const DevicesReport after = list_devices();
  for (const auto& p : after.opencl_platforms)
    for (const auto& d : p.devices) EXPECT_EQ(d.used, d.index == last) << d.name;

  testing::SyntheticTensor t = testing::make_block_tensor(TypeId::q4_0, 37, 3, 77);
  const auto x = testing::normal_vector(t.view.n_cols, 3);
  std::vector<float> y(37);
  ASSERT_TRUE(ocl->matvec(t.view, x.data(), y.data()).ok());
  std::vector<double> ref(37), abs_wx(37);
  ASSERT_TRUE(reference_matvec(t.view, x.data(), ref.data(), abs_wx.data()).ok());
  for (size_t r = 0; r < y.size(); ++r) EXPECT_LE(std::fabs(y[r] - ref[r]), 1e-5 * abs_wx[r] + 1e-30) << r;

  ASSERT_TRUE(select_opencl_device(-1).ok());
  EXPECT_EQ(selected_opencl_device(), -1);
  EXPECT_TRUE(ocl->availability().available);
}

}   // namespace
}   // namespace akview::compute
