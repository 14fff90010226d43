// OpenCL keeps a tensor's weights on the device: the first run of a tensor uploads them (timed on
// its own, not in the matvec times), repeats and later runs of the same tensor upload nothing and give
// the same y bit for bit, as does the same tensor read in place (bytes of unknown lifetime are never
// kept); the file opened again is a new mapping and is uploaded anew.
#include <gtest/gtest.h>

#include <cstring>

#include "compute/backend.hpp"
#include "compute/backends.hpp"
#include "compute/runner.hpp"
#include "core/formats/format.hpp"
#include "core/tensor_view.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/gguf_writer.hpp"

namespace akview::compute {
namespace {

constexpr uint32_t kGgmlQ4_0 = 2, kGgmlQ8_0 = 8;

std::string write_model(const testing::TempDir& dir) {
  testing::GgufWriter w;
  w.set("general.architecture", testing::gguf_string("llama"));
  w.add_tensor(testing::GgufTensorSpec("blk.0.ffn_up.weight", kGgmlQ4_0, {256, 96}));
  w.add_tensor(testing::GgufTensorSpec("blk.0.ffn_down.weight", kGgmlQ8_0, {96, 256}));
  const std::string path = dir.file("m.gguf");
  EXPECT_TRUE(w.write(path));
  return path;
}

TEST(OpenClResident, UploadsOncePerTensorAndMapping) {
  Backend& cl = opencl_backend();
  const Availability a = cl.availability();
  if (!a.available) GTEST_SKIP() << "opencl unavailable: " << a.reason;
  testing::TempDir dir;
  const std::string path = write_model(dir);
  auto model = open_model(path);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  RunOptions options;
  options.backend = "opencl";
  options.repeat = 4;
  for (const Tensor& t : model->tensors) {
    SCOPED_TRACE(std::string(t.name));
    auto view = make_tensor_view(*model, t);
    ASSERT_TRUE(view.ok());
    ASSERT_NE(view->source_id, 0u);
    const uint64_t before = opencl_upload_count();
    auto first = run_tensor(NamedView{std::string(t.name), *view}, options);
    ASSERT_TRUE(first.ok()) << first.error().to_string();
    EXPECT_EQ(opencl_upload_count(), before + 1) << "the first run uploads once, for all its repeats";
    ASSERT_TRUE(first->upload_seconds.has_value());
    auto again = run_tensor(NamedView{std::string(t.name), *view}, options);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(opencl_upload_count(), before + 1) << "a second run of the tensor finds it on the device";
    EXPECT_FALSE(again->upload_seconds.has_value());
    ASSERT_EQ(first->y.size(), again->y.size());
    EXPECT_EQ(std::memcmp(first->y.data(), again->y.data(), first->y.size() * sizeof(float)), 0);
    EXPECT_TRUE(first->vs_reference.has_value());

    // The same bytes with no mapping to key on: read in place each time, never kept, same y.
    TensorView loose = *view;
    loose.source_id = 0;
    auto in_place = run_tensor(NamedView{std::string(t.name), loose}, options);
    ASSERT_TRUE(in_place.ok());
    EXPECT_EQ(opencl_upload_count(), before + 1);
    EXPECT_EQ(std::memcmp(first->y.data(), in_place->y.data(), first->y.size() * sizeof(float)), 0);
  }
  EXPECT_GT(opencl_cached_bytes(), 0u);

  // Opened again: a new mapping, uploaded anew (a stale copy is never used).
  auto reopened = open_model(path);
  ASSERT_TRUE(reopened.ok());
  auto view = make_tensor_view(*reopened, reopened->tensors[0]);
  ASSERT_TRUE(view.ok());
  const uint64_t before = opencl_upload_count();
  auto run = run_tensor(NamedView{"again", *view}, options);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(opencl_upload_count(), before + 1);
}

TEST(OpenClResident, OtherBackendsUploadNothing) {
  testing::TempDir dir;
  auto model = open_model(write_model(dir));
  ASSERT_TRUE(model.ok());
  auto view = make_tensor_view(*model, model->tensors[0]);
  ASSERT_TRUE(view.ok());
  for (const auto& row : backend_table()) {
    if (row.name == "opencl") continue;
    Backend& b = row.instance();
    if (!b.availability().available) continue;
    auto up = b.upload(*view);
    ASSERT_TRUE(up.ok()) << row.name;
    EXPECT_FALSE(*up) << row.name;
  }
}

}   // namespace
}   // namespace akview::compute
