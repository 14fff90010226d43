// Odd sizes on every backend in the table (every_backend.hpp): 1 row, rows that are not a multiple
// of the tile / work-group / thread split, many rows; every fused kernel type, MLX affine at every
// bit width, group size and scale type; guard floats around y; and the OpenCL fallback (with a note)
// for a type it has no kernel for. Each result is checked row by row against the f64 reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "compute/backend.hpp"
#include "compute/reference.hpp"
#include "compute/runner.hpp"
#include "every_backend.hpp"
#include "synthetic.hpp"

namespace akview::compute {
namespace {

using testing::SyntheticTensor;

void expect_matches_reference(Backend& b, const TensorView& v, const std::vector<float>& x, const std::string& what) {
  constexpr size_t kGuard = 8;
  constexpr float kSentinel = 7.25e30f;
  const size_t rows = static_cast<size_t>(v.n_rows);
  std::vector<float> y(rows + 2 * kGuard, kSentinel);
  Status s = b.matvec(v, x.data(), y.data() + kGuard);
  ASSERT_TRUE(s.ok()) << what << ": " << s.error().to_string();
  for (size_t g = 0; g < kGuard; ++g) {
    ASSERT_EQ(y[g], kSentinel) << what << ": guard before y";
    ASSERT_EQ(y[kGuard + rows + g], kSentinel) << what << ": guard after y";
  }
  std::vector<double> ref(rows), abs_wx(rows);
  ASSERT_TRUE(reference_matvec(v, x.data(), ref.data(), abs_wx.data()).ok()) << what;
  for (size_t r = 0; r < rows; ++r)
    ASSERT_LE(std::fabs(y[kGuard + r] - ref[r]), 1e-5 * abs_wx[r] + 1e-30)
        << what << " row " << r << " y=" << y[kGuard + r] << " ref=" << ref[r];
}

class BackendSizes : public testing::EveryBackend {};

constexpr std::array kBlockTypes = {TypeId::f32,     TypeId::f16,    TypeId::bf16,  TypeId::q4_0,    TypeId::q4_1,
                                    TypeId::q5_0,    TypeId::q5_1,   TypeId::q8_0,  TypeId::iq4_nl,  TypeId::q2_k,
                                    TypeId::q3_k,    TypeId::q4_k,   TypeId::q5_k,  TypeId::q6_k,    TypeId::iq4_xs,
                                    TypeId::iq2_xxs, TypeId::iq2_xs, TypeId::iq2_s, TypeId::iq3_xxs, TypeId::iq3_s,
                                    TypeId::iq1_s,   TypeId::iq1_m,  TypeId::tq1_0, TypeId::tq2_0};

TEST_P(BackendSizes, BlockTypesAtOddSizes) {
  for (TypeId type : kBlockTypes) {
    const uint32_t qk = type_info(type).block_elems;
    // Blocks per row chosen so float rows get SIMD tails (cols 7, 9, 33; 100 = 64 + 2 * 16 + 4 for
    // the unrolled f16 loop) and quantized rows 1-4 blocks (odd and even counts for paired blocks)
    // or 19 (the kernels that prepare 8 or 16 blocks at a time, and a remainder).
    for (int64_t blocks : qk == 1 ? std::vector<int64_t>{7, 9, 33, 100, 520} : std::vector<int64_t>{1, 3, 4, 19}) {
      for (int64_t rows : {1, 17, 1000}) {
        SyntheticTensor t = testing::make_block_tensor(type, rows, blocks, 1000 * rows + blocks);
        const auto x = testing::normal_vector(t.view.n_cols, 7);
        expect_matches_reference(
            *backend_, t.view, x,
            std::string(type_info(type).name) + " " + std::to_string(rows) + "x" + std::to_string(t.view.n_cols));
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_P(BackendSizes, AffineEveryBitWidthGroupAndScaleType) {
  for (TypeId type : {TypeId::mlx_affine, TypeId::ollama_int4, TypeId::ollama_int8})
    for (int bits : {2, 3, 4, 5, 6, 8}) {
      if ((type == TypeId::ollama_int4 && bits != 4) || (type == TypeId::ollama_int8 && bits != 8)) continue;
      for (uint32_t group : {32u, 64u, 128u})
        for (TypeId st : {TypeId::f16, TypeId::bf16, TypeId::f32})
          for (int64_t rows : {1, 19}) {
            SyntheticTensor t =
                testing::make_affine_tensor(type, bits, group, st, rows, 3 * 128, bits * 100 + group + rows);
            const auto x = testing::normal_vector(t.view.n_cols, 11);
            expect_matches_reference(*backend_, t.view, x,
                                     std::string(type_info(type).name) + " bits " + std::to_string(bits) + " g" +
                                         std::to_string(group) + " " + std::string(type_info(st).name) + " rows " +
                                         std::to_string(rows));
            if (HasFatalFailure()) return;
          }
    }
}

// Rows with many groups (40 / 20 per row): the per-row scale and bias conversion runs 16 groups at a
// time and then a tail; odd row counts leave a remainder for the multi-row kernels.
TEST_P(BackendSizes, AffineRowsOfManyGroups) {
  for (int bits : {3, 4, 5, 6, 8})
    for (uint32_t group : {64u, 128u})
      for (TypeId st : {TypeId::f16, TypeId::bf16, TypeId::f32})
        for (int64_t rows : {3, 5}) {
          SyntheticTensor t =
              testing::make_affine_tensor(TypeId::mlx_affine, bits, group, st, rows, 2560, bits * 1000 + group + rows);
          const auto x = testing::normal_vector(t.view.n_cols, 13);
          expect_matches_reference(*backend_, t.view, x,
                                   "bits " + std::to_string(bits) + " g" + std::to_string(group) + " " +
                                       std::string(type_info(st).name) + " rows " + std::to_string(rows));
          if (HasFatalFailure()) return;
        }
}

// Rows of many groups: scales and biases come 16 groups at a time on some backends (opencl), with a
// remainder; f16 scales include subnormals and signed zeros, which must decode exactly.
TEST_P(BackendSizes, AffineManyGroupsAndSubnormalScales) {
  for (int bits : {2, 3, 4, 5, 6, 8})
    for (uint32_t group : {16u, 32u})
      for (TypeId st : {TypeId::f16, TypeId::bf16, TypeId::f32}) {
        SyntheticTensor t =
            testing::make_affine_tensor(TypeId::mlx_affine, bits, group, st, 5, 35 * 32, bits * 10 + group);
        if (st == TypeId::f16) {
          const uint16_t odd[] = {0x0001, 0x83ff, 0x0200, 0x8000, 0x0000, 0x03ff, 0x0400};
          for (size_t g = 3, i = 0; g * 2 + 2 <= t.scales.size(); g += 7, ++i)
            std::memcpy(t.scales.data() + g * 2, &odd[i % 7], 2);
        }
        const auto x = testing::normal_vector(t.view.n_cols, 13);
        expect_matches_reference(*backend_, t.view, x,
                                 "mlx bits " + std::to_string(bits) + " g" + std::to_string(group) + " " +
                                     std::string(type_info(st).name) + " 35*32 cols");
        if (HasFatalFailure()) return;
      }
}

// FP4 with E8M0 scales: GGUF mxfp4 blocks and MLX / Ollama mxfp4 groups, in rows of 1 to 19 blocks
// and 1 to 17 rows; some scales are the subnormal E8M0 values (e 0 and 1: 2^-128, 2^-127).
TEST_P(BackendSizes, Mxfp4BlocksAndGroups) {
  int ran = 0;
  for (TypeId type : {TypeId::mxfp4, TypeId::mlx_mxfp4, TypeId::ollama_mxfp4})
    for (int64_t blocks : {1, 3, 19})
      for (int64_t rows : {1, 5, 17}) {
        const uint64_t seed = 100 * blocks + rows;
        SyntheticTensor t = type == TypeId::mxfp4 ? testing::make_block_tensor(type, rows, blocks, seed)
                                                  : testing::make_mxfp4_tensor(type, rows, 32 * blocks, seed, 5);
        if (type == TypeId::mxfp4)
          for (size_t b = 0; b < t.data.size() / 17; b += 7) t.data[b * 17] = static_cast<uint8_t>(b % 2);
        if (!backend_->can_run(t.view)) continue;
        const auto x = testing::normal_vector(t.view.n_cols, seed);
        expect_matches_reference(
            *backend_, t.view, x,
            std::string(type_info(type).name) + " " + std::to_string(rows) + "x" + std::to_string(t.view.n_cols));
        if (HasFatalFailure()) return;
        ++ran;
      }
  if (std::string_view(GetParam()) == "cpu") {
    EXPECT_EQ(ran, 27);
  }
}

// FP8 rows holding every finite code (subnormals, both zeros, the largest), 3 x 256 + 7 columns (a
// tail past the vector steps); a row with a NaN code (E4M3FN S.1111.111, E5M2 exponent 31) gives NaN.
TEST_P(BackendSizes, Fp8EveryCode) {
  for (TypeId type : {TypeId::f8_e4m3, TypeId::f8_e5m2}) {
    auto special = [&](uint8_t c) { return type == TypeId::f8_e4m3 ? (c & 0x7F) == 0x7F : (c & 0x7C) == 0x7C; };
    const int64_t rows = 5, cols = 3 * 256 + 7;
    std::vector<uint8_t> data(static_cast<size_t>(rows * cols));
    for (size_t i = 0; i < data.size(); ++i) {
      const uint8_t c = static_cast<uint8_t>(i * 37 + i / 256);
      data[i] = special(c) ? uint8_t{0x38} : c;
    }
    TensorView v;
    v.type = type;
    v.n_rows = rows;
    v.n_cols = cols;
    v.row_bytes = static_cast<uint64_t>(cols);
    v.data = data;
    if (!backend_->can_run(v)) continue;
    const auto x = testing::normal_vector(cols, 3);
    expect_matches_reference(*backend_, v, x, std::string(type_info(type).name) + " every code");
    if (HasFatalFailure()) return;
    data[static_cast<size_t>(2 * cols + 100)] = type == TypeId::f8_e4m3 ? 0xFF : 0x7F;   // a NaN in row 2
    std::vector<float> y(rows);
    ASSERT_TRUE(backend_->matvec(v, x.data(), y.data()).ok());
    EXPECT_TRUE(std::isnan(y[2])) << type_info(type).name << " " << y[2];
    EXPECT_FALSE(std::isnan(y[1]));
  }
}

TEST_P(BackendSizes, ZeroRowsWritesNothing) {
  SyntheticTensor t = testing::make_block_tensor(TypeId::q4_0, 0, 2, 5);
  const auto x = testing::normal_vector(t.view.n_cols, 5);
  float guard = 3.0f;
  ASSERT_TRUE(backend_->matvec(t.view, x.data(), &guard).ok());
  EXPECT_EQ(guard, 3.0f);
}

TEST_P(BackendSizes, EmptyRowsGiveZeros) {
  for (TypeId type : {TypeId::f32, TypeId::q4_0, TypeId::q4_k}) {
    SyntheticTensor t = testing::make_block_tensor(type, 3, 0, 6);
    ASSERT_EQ(t.view.n_cols, 0);
    std::vector<float> y(3, 5.0f);
    const float x = 1.0f;
    Status s = backend_->matvec(t.view, &x, y.data());
    ASSERT_TRUE(s.ok()) << type_info(type).name << ": " << s.error().to_string();
    EXPECT_EQ(y, std::vector<float>(3, 0.0f)) << type_info(type).name;
  }
}

TEST_P(BackendSizes, MalformedViewIsAnErrorNotACrash) {
  SyntheticTensor t = testing::make_block_tensor(TypeId::q4_k, 4, 2, 9);
  const auto x = testing::normal_vector(t.view.n_cols, 9);
  std::vector<float> y(8);
  TensorView short_data = t.view;
  short_data.data = short_data.data.first(short_data.data.size() - 1);   // last row truncated
  EXPECT_FALSE(backend_->matvec(short_data, x.data(), y.data()).ok());
  TensorView bad_cols = t.view;
  bad_cols.n_cols += 32;   // row_bytes disagrees
  EXPECT_FALSE(backend_->matvec(bad_cols, x.data(), y.data()).ok());
  SyntheticTensor a = testing::make_affine_tensor(TypeId::mlx_affine, 4, 64, TypeId::f16, 4, 128, 3);
  TensorView few_scales = a.view;
  few_scales.scales = few_scales.scales.first(few_scales.scales.size() - 2);
  EXPECT_FALSE(backend_->matvec(few_scales, x.data(), y.data()).ok());
}

INSTANTIATE_TEST_SUITE_P(All, BackendSizes, testing::every_backend(), testing::backend_test_name);

// tq2_0 has a decoder but no OpenCL kernel: opencl hands it to cpu and says so.
TEST(OpenClFallback, TypeWithoutKernelRunsOnCpuWithANote) {
  Backend* ocl = find_backend("opencl");
  const Availability a = ocl->availability();
  if (!a.available) GTEST_SKIP() << "opencl unavailable: " << a.reason;
  SyntheticTensor t = testing::make_block_tensor(TypeId::tq2_0, 37, 2, 21);
  EXPECT_FALSE(ocl->supports(t.view));
  EXPECT_TRUE(ocl->can_run(t.view));
  EXPECT_EQ(ocl->fallback_note(t.view), "tq2_0: no OpenCL kernel, ran on cpu");
  const auto x = testing::normal_vector(t.view.n_cols, 21);
  expect_matches_reference(*ocl, t.view, x, "tq2_0 via opencl");

  RunOptions opt;
  opt.backend = "opencl";
  opt.repeat = 1;
  auto run = run_tensor({"t", t.view}, opt);
  ASSERT_TRUE(run.ok()) << run.error().to_string();
  EXPECT_EQ(run->backend, "opencl");
  EXPECT_EQ(run->note, "tq2_0: no OpenCL kernel, ran on cpu");
  ASSERT_TRUE(run->vs_reference.has_value());
  EXPECT_LT(run->vs_reference->nmse, 1e-10);
}

}   // namespace
}   // namespace akview::compute
