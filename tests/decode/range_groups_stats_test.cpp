// decode_rows on sub-ranges equals the slice of a full decode (every oracle tensor, every type);
// groups and stats on small tensors whose answers are derived by hand; cancellation; .npy output.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

#include "core/decode/decode.hpp"
#include "core/decode/groups.hpp"
#include "core/decode/npy_writer.hpp"
#include "core/decode/stats.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/decode/oracle_helpers.hpp"

namespace akview::test {
namespace {

void expect_ranges_match(const TensorView& v, std::mt19937& rng, const std::string& what) {
  std::vector<float> full(static_cast<size_t>(v.n_rows * v.n_cols));
  ASSERT_TRUE(decode_rows(v, 0, v.n_rows, full.data()).ok()) << what;
  for (int trial = 0; trial < 6; ++trial) {
    const int64_t a = static_cast<int64_t>(rng() % static_cast<uint32_t>(v.n_rows + 1));
    const int64_t b = a + static_cast<int64_t>(rng() % static_cast<uint32_t>(v.n_rows - a + 1));
    std::vector<float> part(static_cast<size_t>((b - a) * v.n_cols) + 1, 777.0f);
    ASSERT_TRUE(decode_rows(v, a, b, part.data()).ok());
    for (size_t i = 0; i + 1 < part.size(); ++i)
      ASSERT_TRUE(same_bits(part[i], full[static_cast<size_t>(a * v.n_cols) + i]))
          << what << " rows " << a << ".." << b;
    EXPECT_EQ(part.back(), 777.0f) << what << ": wrote past the range";   // guard element untouched
  }
}

TEST(DecodeRanges, SubRangesEqualFullDecodeSlices) {
  std::mt19937 rng(11);
  int checked = 0;
  for (const auto& file : manifest()["gguf"]["files"]) {
    if (!file.contains("tensors") || file["tensors"].empty()) continue;
    auto f = MappedFile::open(oracle_path(file["path"]));
    ASSERT_TRUE(f.ok());
    for (const auto& t : file["tensors"]) {
      auto type = type_from_name(lower(t["type"].get<std::string>()));
      if (!type || t["shape"].size() < 2) continue;
      expect_ranges_match(plain_view(*f, *type, t["abs_offset"], t["nbytes"], t["shape"]), rng, t["name"]);
      ++checked;
    }
  }
  // every non-composite type over random bytes, 7 rows of 2 blocks
  for (const auto& info : all_types()) {
    if (info.kind == TypeKind::composite) continue;
    std::vector<uint8_t> bytes(7 * 2 * info.block_bytes);
    for (auto& x : bytes) x = static_cast<uint8_t>(rng());
    TensorView v;
    v.type = info.id;
    v.n_rows = 7;
    v.n_cols = 2 * info.block_elems;
    v.row_bytes = 2 * info.block_bytes;
    v.data = bytes;
    expect_ranges_match(v, rng, std::string(info.name));
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

TEST(DecodeGroups, Q4_0ByHand) {
  // two blocks: d = 1, codes 0..15 then 15..0 -> values -8..7; second block d = 0.5, all codes 8
  std::vector<uint8_t> b(36, 0);
  b[0] = 0x00;
  b[1] = 0x3C;
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  b[18] = 0x00;
  b[19] = 0x38;
  for (int j = 0; j < 16; ++j) b[20 + j] = 0x88;
  TensorView v;
  v.type = TypeId::q4_0;
  v.n_rows = 1;
  v.n_cols = 64;
  v.row_bytes = 36;
  v.data = b;
  auto g = list_groups(v, 0, 1);
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->size(), 2u);
  const QuantGroup& a = (*g)[0];
  EXPECT_EQ(a.col, 0);
  EXPECT_EQ(a.n_cols, 32u);
  EXPECT_EQ(a.scale, 1.0f);
  EXPECT_EQ(a.bias, -8.0f);
  EXPECT_EQ(a.value_min, -8.0f);
  EXPECT_EQ(a.value_max, 7.0f);
  EXPECT_EQ(a.levels_used, 16u);
  EXPECT_EQ(a.levels_total, 16u);
  EXPECT_EQ(a.saturated, 4u);   // codes 0 and 15, twice each
  const QuantGroup& c = (*g)[1];
  EXPECT_EQ(c.col, 32);
  EXPECT_EQ(c.scale, 0.5f);
  EXPECT_EQ(c.levels_used, 1u);
  EXPECT_EQ(c.saturated, 0u);
  EXPECT_EQ(c.value_min, 0.0f);
  EXPECT_FALSE(list_groups(v, 0, 2).ok());
  TensorView f = v;
  f.type = TypeId::f32;
  f.n_cols = 9;
  f.row_bytes = 36;
  EXPECT_FALSE(list_groups(f, 0, 1).ok());
}

TEST(DecodeGroups, Q4_KSubBlocksAndMlxAffine) {
  std::vector<uint8_t> b(144, 0);
  b[0] = 0x00;
  b[1] = 0x3C;   // d = 1
  b[2] = 0x00;
  b[3] = 0x38;                                                             // dmin = 0.5
  b[4] = 3;                                                                // sub-block 0 scale 3
  b[8] = 2;                                                                // sub-block 0 min 2
  for (int l = 0; l < 32; ++l) b[16 + l] = static_cast<uint8_t>(l % 16);   // codes 0..15 twice (low nibbles)
  TensorView v;
  v.type = TypeId::q4_k;
  v.n_rows = 1;
  v.n_cols = 256;
  v.row_bytes = 144;
  v.data = b;
  auto g = list_groups(v, 0, 1);
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->size(), 8u);
  const QuantGroup& q = (*g)[0];
  EXPECT_TRUE(q.has_super);
  EXPECT_EQ(q.super_scale, 1.0f);
  EXPECT_EQ(q.super_min, 0.5f);
  EXPECT_EQ(q.sub_scale, 3);
  EXPECT_EQ(q.sub_min, 2);
  EXPECT_EQ(q.scale, 3.0f);
  EXPECT_EQ(q.bias, -1.0f);
  EXPECT_EQ(q.value_min, -1.0f);
  EXPECT_EQ(q.value_max, 44.0f);
  EXPECT_EQ(q.levels_used, 16u);
  EXPECT_EQ(q.saturated, 4u);

  // MLX affine 4-bit, 2 rows x 32, group 32: row 1 all code 15 with scale 2, bias -1
  std::vector<uint8_t> w(32, 0);
  for (int k = 16; k < 32; ++k) w[k] = 0xFF;
  for (int k = 0; k < 16; ++k) w[k] = static_cast<uint8_t>(((2 * k) % 16) | (((2 * k + 1) % 16) << 4));
  std::vector<uint8_t> s = {0x00, 0x3C, 0x00, 0x40};      // 1, 2
  std::vector<uint8_t> bias = {0x00, 0x00, 0x00, 0xBC};   // 0, -1
  TensorView m;
  m.type = TypeId::mlx_affine;
  m.n_rows = 2;
  m.n_cols = 32;
  m.bits = 4;
  m.group_size = 32;
  m.row_bytes = 16;
  m.data = w;
  m.scales = s;
  m.biases = bias;
  auto mg = list_groups(m, 1, 2);
  ASSERT_TRUE(mg.ok());
  ASSERT_EQ(mg->size(), 1u);
  EXPECT_EQ((*mg)[0].row, 1);
  EXPECT_EQ((*mg)[0].scale, 2.0f);
  EXPECT_EQ((*mg)[0].bias, -1.0f);
  EXPECT_EQ((*mg)[0].levels_used, 1u);
  EXPECT_EQ((*mg)[0].saturated, 32u);
  EXPECT_EQ((*mg)[0].value_max, 29.0f);
  auto m0 = list_groups(m, 0, 1);
  ASSERT_TRUE(m0.ok());
  EXPECT_EQ((*m0)[0].levels_used, 16u);
  EXPECT_EQ((*m0)[0].saturated, 4u);
}

TEST(DecodeGroups, EveryOracleTypeListsGroups) {
  for (const auto& file : manifest()["gguf"]["files"]) {
    if (!file.contains("tensors")) continue;
    auto f = MappedFile::open(oracle_path(file["path"]));
    ASSERT_TRUE(f.ok());
    for (const auto& t : file["tensors"]) {
      auto type = type_from_name(lower(t["type"].get<std::string>()));
      if (!type || !has_groups(*type)) continue;
      TensorView v = plain_view(*f, *type, t["abs_offset"], t["nbytes"], t["shape"]);
      auto g = list_groups(v, 0, std::min<int64_t>(v.n_rows, 3));
      ASSERT_TRUE(g.ok()) << t["name"];
      ASSERT_FALSE(g->empty());
      for (const auto& q : *g) {
        EXPECT_LE(q.value_min, q.value_max);
        if (q.levels_total) {
          EXPECT_LE(q.levels_used, q.levels_total) << t["type"];
        }
      }
    }
  }
}

TEST(DecodeStats, SmallTensorByHand) {
  const std::vector<float> x = {1, 2, 3, 4, 0, -8, NAN, INFINITY, -INFINITY, 0, 0.5f, -0.5f};
  StatsOptions o;
  o.histogram_bins = 4;
  o.top_k = 2;
  o.block_elems = 4;   // one row per block: exercises the merge
  std::vector<double> seen;
  o.progress = [&](double p) { seen.push_back(p); };
  auto s = compute_stats(f32_view(x, 3, 4), o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->count, 12u);
  EXPECT_EQ(s->finite, 9u);
  EXPECT_EQ(s->nan, 1u);
  EXPECT_EQ(s->pos_inf, 1u);
  EXPECT_EQ(s->neg_inf, 1u);
  EXPECT_EQ(s->zeros, 2u);
  EXPECT_EQ(s->min, -8.0);
  EXPECT_EQ(s->max, 4.0);
  EXPECT_DOUBLE_EQ(s->mean, 2.0 / 9.0);   // (1+2+3+4+0-8+0+0.5-0.5) / 9
  double var = 0;
  for (double v : {1.0, 2.0, 3.0, 4.0, 0.0, -8.0, 0.0, 0.5, -0.5}) var += (v - 2.0 / 9.0) * (v - 2.0 / 9.0);
  EXPECT_NEAR(s->std, std::sqrt(var / 9), 1e-12);
  ASSERT_EQ(s->top.size(), 2u);
  EXPECT_EQ(s->top[0].value, -8.0f);
  EXPECT_EQ(s->top[0].row, 1);
  EXPECT_EQ(s->top[0].col, 1);
  EXPECT_EQ(s->top[1].value, 4.0f);
  ASSERT_EQ(s->histogram.size(), 4u);   // [-8,-5) [-5,-2) [-2,1) [1,4]
  EXPECT_EQ(s->histogram, (std::vector<uint64_t>{1, 0, 4, 4}));
  uint64_t log_total = 0;
  for (auto c : s->log_abs_histogram) log_total += c;
  EXPECT_EQ(log_total, 7u);                                                   // finite nonzero
  EXPECT_EQ(s->log_abs_histogram[static_cast<size_t>(0 - kLogMinExp)], 1u);   // |x| in [1,2): 1
  EXPECT_EQ(s->rows_done, 3);
  EXPECT_FALSE(s->cancelled);
  ASSERT_FALSE(seen.empty());
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
}

TEST(DecodeStats, CancellationStopsEarly) {
  std::vector<float> x(1000 * 16, 1.0f);
  std::atomic<bool> cancel{false};
  StatsOptions o;
  o.block_elems = 16 * 10;   // 10 rows per block
  o.threads = 1;             // chunks in order on one thread (stats_fast_test.cpp cancels several)
  o.cancel = &cancel;
  int calls = 0;
  o.progress = [&](double) {
    if (++calls == 2) cancel = true;
  };
  auto s = compute_stats(f32_view(x, 1000, 16), o);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->cancelled);
  EXPECT_EQ(s->rows_done, 20);
  EXPECT_EQ(s->count, 320u);
  EXPECT_LT(calls, 5);
}

TEST(DecodeNpy, HeaderAndRoundTrip) {
  const std::vector<int64_t> shape = {2, 3, 4};
  const std::string h = npy_header_f32(shape);
  EXPECT_EQ(h.size() % 64, 0u);
  EXPECT_EQ(h.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_NE(h.find("'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }"), std::string::npos);
  EXPECT_EQ(h.back(), '\n');
  EXPECT_EQ(static_cast<size_t>(static_cast<uint8_t>(h[8]) | (static_cast<uint8_t>(h[9]) << 8)), h.size() - 10);
  const std::vector<int64_t> one = {5};
  EXPECT_NE(npy_header_f32(one).find("'shape': (5,)"), std::string::npos);

  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 3.5f;
  const akview::testing::TempDir dir;   // removed even when an assertion returns early
  const std::string path = dir.file("decode_test.npy");
  ASSERT_TRUE(write_npy(path, f32_view(x, 6, 4), shape).ok());
  std::ifstream in(path, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(all.size(), h.size() + 24 * 4);
  EXPECT_EQ(all.substr(0, h.size()), h);
  EXPECT_EQ(std::memcmp(all.data() + h.size(), x.data(), 96), 0);
  std::remove(path.c_str());
  DumpOptions d;
  d.row_begin = 5;
  d.row_end = 9;
  EXPECT_FALSE(write_raw_f32(path, f32_view(x, 6, 4), d).ok());
}

}   // namespace
}   // namespace akview::test
