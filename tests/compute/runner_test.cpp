// The runner, the metrics, backend selection and `akview devices` data; OpenCL's unavailable
// paths (no libOpenCL.so.1, no ICD) in child processes, since the loader is opened once per process.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <string_view>

#include "compute/backend.hpp"
#include "compute/devices.hpp"
#include "compute/metrics.hpp"
#include "compute/runner.hpp"
#include "synthetic.hpp"
#include "tests/common/temp_dir.hpp"

namespace akview::compute {
namespace {

TEST(Metrics, IdenticalScaledAndZero) {
  const std::vector<float> y{1, -2, 3};
  const std::vector<double> same{1, -2, 3};
  auto s = compare_outputs(y, same);
  EXPECT_EQ(s.max_abs, 0);
  EXPECT_EQ(s.nmse, 0);
  EXPECT_NEAR(s.cosine, 1, 1e-15);
  const std::vector<double> half{0.5, -1, 1.5};
  s = compare_outputs(y, half);
  EXPECT_DOUBLE_EQ(s.max_abs, 1.5);
  EXPECT_DOUBLE_EQ(s.nmse, 1.0);
  EXPECT_DOUBLE_EQ(s.rel_rms, 1.0);
  EXPECT_NEAR(s.cosine, 1, 1e-15);
  EXPECT_NEAR(s.rms, std::sqrt((0.25 + 1 + 2.25) / 3), 1e-15);
  const std::vector<double> zero{0, 0, 0};
  s = compare_outputs(y, zero);
  EXPECT_TRUE(std::isinf(s.nmse));
  EXPECT_EQ(s.cosine, 0);
  const std::vector<float> zy{0, 0, 0};
  EXPECT_EQ(compare_outputs(zy, zero).cosine, 1);
}

TEST(RunnerInput, ParsesSpecs) {
  auto a = parse_input_spec("seed:42");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->kind, InputKind::seeded_normal);
  EXPECT_EQ(a->seed, 42u);
  EXPECT_EQ(parse_input_spec("ones")->kind, InputKind::ones);
  EXPECT_EQ(parse_input_spec("x.f32")->kind, InputKind::file);
  EXPECT_FALSE(parse_input_spec("seed:").ok());
  EXPECT_FALSE(parse_input_spec("seed:12z").ok());
  EXPECT_EQ(parse_input_spec("seed:x").error().code, ErrorCode::usage);
}

TEST(RunnerInput, SeededNormalIsDeterministicAndStandard) {
  InputSpec s;
  s.seed = 1234;
  auto a = make_input(s, 100001), b = make_input(s, 100001);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  s.seed = 1235;
  EXPECT_NE(*make_input(s, 100001), *a);
  double mean = std::accumulate(a->begin(), a->end(), 0.0) / a->size(), var = 0;
  for (float v : *a) var += (v - mean) * (v - mean);
  var /= a->size();
  EXPECT_NEAR(mean, 0, 0.02);
  EXPECT_NEAR(var, 1, 0.02);
  InputSpec ones;
  ones.kind = InputKind::ones;
  EXPECT_EQ(*make_input(ones, 3), (std::vector<float>{1, 1, 1}));
}

TEST(RunnerInput, RawFloatFile) {
  const akview::testing::TempDir dir;   // removed even when an assertion returns early
  const std::filesystem::path path = dir.file("x.f32");
  const std::vector<float> v{0.5f, -1.25f, 3.0f, 4.0f};
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(v.data()), 16);
  }
  InputSpec s;
  s.kind = InputKind::file;
  s.path = path.string();
  auto x = make_input(s, 4);
  ASSERT_TRUE(x.ok()) << x.error().to_string();
  EXPECT_EQ(*x, v);
  auto wrong = make_input(s, 5);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, ErrorCode::size_mismatch);
  std::filesystem::remove(path);
  EXPECT_EQ(make_input(s, 4).error().code, ErrorCode::io);
}

TEST(Runner, RunsTimesAndComparesWithProgress) {
  auto t = testing::make_block_tensor(TypeId::q8_0, 64, 8, 3);
  RunOptions opt;
  opt.backend = "cpu";
  opt.repeat = 4;
  opt.input.seed = 9;
  std::vector<int> steps;
  RunCallbacks cb;
  cb.on_progress = [&](const RunProgress& p) {
    steps.push_back(p.step);
    EXPECT_EQ(p.steps, 6);
    EXPECT_EQ(p.name, "w");
  };
  auto run = run_tensor({"w", t.view}, opt, cb);
  ASSERT_TRUE(run.ok()) << run.error().to_string();
  EXPECT_EQ(steps, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(run->backend, "cpu");
  EXPECT_EQ(run->type, "q8_0");
  EXPECT_EQ(run->repeats, 4);
  EXPECT_EQ(run->weight_bytes, t.data.size());
  EXPECT_GT(run->min_seconds, 0);
  EXPECT_GE(run->median_seconds, run->min_seconds);
  EXPECT_GE(run->gbps_best, run->gbps_median);
  ASSERT_TRUE(run->vs_reference.has_value());
  EXPECT_LT(run->vs_reference->nmse, 1e-10);
  EXPECT_GT(run->vs_reference->cosine, 0.999999);
  EXPECT_EQ(run->y.size(), 64u);

  // --ref: the same tensor as "the other model" gives ~0; a different one gives a real error.
  auto same = compare_with_second(*run, t.view);
  ASSERT_TRUE(same.ok());
  EXPECT_LT(same->nmse, 1e-10);
  auto other = testing::make_block_tensor(TypeId::q8_0, 64, 8, 4);
  auto diff = compare_with_second(*run, other.view);
  ASSERT_TRUE(diff.ok());
  EXPECT_GT(diff->nmse, 0.1);
  auto wrong_shape = testing::make_block_tensor(TypeId::q8_0, 63, 8, 4);
  EXPECT_EQ(compare_with_second(*run, wrong_shape.view).error().code, ErrorCode::bad_shape);
}

// --x-quant: the ggml-equivalent path runs beside the exact one, with its own timing and error; its
// activation quantization costs accuracy the exact path does not have; a type without the path says why.
TEST(Runner, XQuantRunsBesideTheExactPath) {
  auto t = testing::make_block_tensor(TypeId::q4_k, 48, 4, 5);
  RunOptions opt;
  opt.backend = "cpu";
  opt.repeat = 3;
  opt.x_quant = true;
  int steps = 0;
  RunCallbacks cb;
  cb.on_progress = [&](const RunProgress& p) { steps = p.steps; };
  auto run = run_tensor({"w", t.view}, opt, cb);
  ASSERT_TRUE(run.ok()) << run.error().to_string();
  EXPECT_EQ(steps, 1 + 3 + 1 + 3 + 1);
  ASSERT_TRUE(run->xquant.has_value());
  const XQuantRun& q = *run->xquant;
  EXPECT_EQ(q.act, "q8_K");
  EXPECT_FALSE(q.variant.empty());
  EXPECT_GT(q.min_seconds, 0);
  EXPECT_GE(q.median_seconds, q.min_seconds);
  ASSERT_TRUE(q.vs_reference.has_value() && run->vs_reference.has_value());
  EXPECT_GT(q.vs_reference->rel_rms, 10 * run->vs_reference->rel_rms);   // 8-bit x is visibly less exact
  EXPECT_LT(q.vs_reference->rel_rms, 0.05);                              // but still the same product
  EXPECT_NE(q.y, run->y);

  auto f = testing::make_block_tensor(TypeId::f16, 8, 64, 6);
  auto plain = run_tensor({"f", f.view}, opt);
  ASSERT_TRUE(plain.ok());
  ASSERT_TRUE(plain->xquant.has_value());
  EXPECT_TRUE(plain->xquant->act.empty());
  EXPECT_NE(plain->xquant->note.find("no x-quant path"), std::string::npos);
  opt.x_quant = false;
  EXPECT_FALSE(run_tensor({"w", t.view}, opt)->xquant.has_value());
}

TEST(Runner, CancelStopsAList) {
  auto a = testing::make_block_tensor(TypeId::q4_0, 8, 2, 1), b = testing::make_block_tensor(TypeId::f16, 8, 64, 2);
  std::vector<NamedView> list{{"a", a.view}, {"b", b.view}};
  RunOptions opt;
  opt.repeat = 2;
  int polls = 0;
  RunCallbacks cb;
  cb.cancelled = [&] { return ++polls > 6; };   // a: list check + 4 steps; b: list check, then cancelled
  RunReport report = run_tensors(list, opt, cb);
  EXPECT_TRUE(report.cancelled);
  ASSERT_EQ(report.runs.size(), 1u);
  EXPECT_EQ(report.runs[0].name, "a");
  EXPECT_TRUE(report.failures.empty());
}

TEST(Runner, FailingTensorIsRecordedAndTheRestRuns) {
  auto good = testing::make_block_tensor(TypeId::q4_0, 8, 2, 1);
  TensorView bad = good.view;
  bad.n_rows = 9;   // data too short
  std::vector<NamedView> list{{"bad", bad}, {"good", good.view}};
  RunOptions opt;
  opt.backend = "cpu";
  opt.repeat = 1;
  RunReport report = run_tensors(list, opt);
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_EQ(report.failures[0].name, "bad");
  ASSERT_EQ(report.runs.size(), 1u);
  EXPECT_EQ(report.runs[0].name, "good");
}

// The table's rows name their backends, once each; the reference (the truth) comes first, and the
// backends akview ships are there (a row added to the table needs no change here).
TEST(Backends, TableAndAutoSelection) {
  std::set<std::string_view> names;
  for (const auto& row : backend_table()) {
    EXPECT_EQ(row.instance().name(), row.name);
    EXPECT_EQ(find_backend(row.name), &row.instance()) << row.name;
    EXPECT_TRUE(names.insert(row.name).second) << row.name << " twice";
    EXPECT_NE(row.name, "auto") << "`auto` is the automatic choice, not a backend";
  }
  EXPECT_EQ(backend_table().front().name, "reference");
  for (std::string_view shipped : {"reference", "cpu", "blas", "opencl"}) EXPECT_TRUE(names.count(shipped)) << shipped;
  auto t = testing::make_block_tensor(TypeId::q4_k, 4, 1, 1);
  auto picked = pick_backend("auto", t.view);
  ASSERT_TRUE(picked.ok());
  // cpu wins unless OpenCL runs on a GPU (bench/matvec_bench.cpp has the measurements).
  const bool gpu = [] {
    for (const auto& p : list_devices().opencl_platforms)
      for (const auto& d : p.devices)
        if (d.used && d.type == "GPU") return true;
    return false;
  }();
  EXPECT_EQ((*picked)->name(), gpu ? "opencl" : "cpu");
  EXPECT_EQ(pick_backend("gpu9000", t.view).error().code, ErrorCode::usage);
}

TEST(Devices, ListsEveryBackendAndOpenClDevices) {
  DevicesReport r = list_devices();
  ASSERT_EQ(r.backends.size(), backend_table().size());
  for (size_t i = 0; i < r.backends.size(); ++i) EXPECT_EQ(r.backends[i].name, backend_table()[i].name);
  auto status_of = [&](std::string_view name) -> const BackendStatus& {
    return *std::find_if(r.backends.begin(), r.backends.end(), [&](const BackendStatus& b) { return b.name == name; });
  };
  EXPECT_TRUE(status_of("reference").available);
  EXPECT_TRUE(status_of("cpu").available);
  EXPECT_GE(r.cpu_threads, 1);
  const BackendStatus& ocl = status_of("opencl");
  if (!ocl.available) {
    EXPECT_FALSE(ocl.reason.empty());
    EXPECT_FALSE(r.opencl_error.empty());
    return;
  }
  ASSERT_FALSE(r.opencl_platforms.empty());
  int used = 0;
  for (const auto& p : r.opencl_platforms)
    for (const auto& d : p.devices) {
      EXPECT_FALSE(d.name.empty());
      EXPECT_GT(d.compute_units, 0u);
      EXPECT_GT(d.max_alloc_bytes, 0u);
      used += d.used;
    }
  EXPECT_EQ(used, 1);
}

// The OpenCL loader is opened once per process, so the unavailable paths run in a child.
int child_opencl_unavailable(const char* var, const char* value, const char* expect) {
  setenv(var, value, 1);
  const Availability a = find_backend("opencl")->availability();
  std::fprintf(stderr, "reason: %s\n", a.reason.c_str());
  auto t = testing::make_block_tensor(TypeId::q4_0, 4, 1, 1);
  auto picked = pick_backend("auto", t.view);   // akview goes on without OpenCL
  auto forced = pick_backend("opencl", t.view);
  const bool ok = !a.available && a.reason.find(expect) != std::string::npos && picked.ok() &&
                  (*picked)->name() == "cpu" && !forced.ok() && !list_devices().opencl_error.empty();
  std::exit(ok ? 0 : 1);
}

TEST(OpenClUnavailableDeathTest, MissingLoaderLibrary) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(child_opencl_unavailable("AKVIEW_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1", "cannot load"),
              ::testing::ExitedWithCode(0), "reason: cannot load /nonexistent/libOpenCL.so.1");
}

// OpenBLAS is loaded on first use too: without it the blas backend is unavailable, says why, and
// refuses a matvec, while auto goes on with the others.
int child_blas_unavailable() {
  setenv("AKVIEW_OPENBLAS_LIBRARY", "/nonexistent/libopenblas.so.0", 1);
  const Availability a = find_backend("blas")->availability();
  std::fprintf(stderr, "reason: %s\n", a.reason.c_str());
  auto t = testing::make_block_tensor(TypeId::q4_0, 4, 1, 1);
  std::vector<float> x(static_cast<size_t>(t.view.n_cols), 1.0f), y(static_cast<size_t>(t.view.n_rows));
  const Status s = find_backend("blas")->matvec(t.view, x.data(), y.data());
  auto picked = pick_backend("auto", t.view);
  const bool ok = !a.available && !s.ok() && s.error().to_string().find("cannot load") != std::string::npos &&
                  picked.ok() && (*picked)->name() != "blas";
  std::exit(ok ? 0 : 1);
}

TEST(BlasUnavailableDeathTest, MissingLibrary) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(child_blas_unavailable(), ::testing::ExitedWithCode(0),
              "reason: cannot load /nonexistent/libopenblas.so.0");
}

TEST(OpenClUnavailableDeathTest, NoIcdInstalled) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(child_opencl_unavailable("OCL_ICD_VENDORS", "/nonexistent-icd-dir", "no OpenCL platform"),
              ::testing::ExitedWithCode(0), "reason: no OpenCL platform");
}

}   // namespace
}   // namespace akview::compute
