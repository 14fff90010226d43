// compute_stats (vector sweeps, exponent counts, bins by a checked multiply, chunks on several
// threads) against a straightforward per-value loop over the fully decoded tensor: every type over
// random blocks (NaN and Inf from random scales and planted bits), blocks all equal, all-zero data,
// values on the histogram's bin edges, and every tensor of the oracle models (composite types too).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <set>

#include "core/decode/decode.hpp"
#include "core/decode/stats.hpp"
#include "core/formats/format.hpp"
#include "core/mapped_file.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/decode/oracle_helpers.hpp"

namespace akview::test {
namespace {

// What a plain loop over every decoded value gives.
struct Expected {
  uint64_t count = 0, finite = 0, zeros = 0, nan = 0, pos_inf = 0, neg_inf = 0;
  double min = 0, max = 0;
  long double mean = 0, std = 0, abs_mean = 0;
  std::vector<uint64_t> histogram, log_abs_histogram;
  std::vector<Outlier> top;
};

Expected per_value(const TensorView& v, int bins, int top_k) {
  std::vector<float> x(static_cast<size_t>(v.n_rows * v.n_cols));
  EXPECT_TRUE(decode_rows(v, 0, v.n_rows, x.data()).ok());
  Expected e;
  e.count = x.size();
  e.log_abs_histogram.assign(kLogBins, 0);
  float lo = INFINITY, hi = -INFINITY;
  long double sum = 0, abs_sum = 0;
  struct Item {
    float abs;
    size_t pos;
  };
  std::vector<Item> items;
  for (size_t i = 0; i < x.size(); ++i) {
    const float f = x[i];
    if (std::isnan(f)) {
      ++e.nan;
      continue;
    }
    if (std::isinf(f)) {
      ++(f > 0 ? e.pos_inf : e.neg_inf);
      continue;
    }
    ++e.finite;
    e.zeros += f == 0;
    lo = std::min(lo, f);
    hi = std::max(hi, f);
    sum += f;
    abs_sum += std::fabs(f);
    if (f != 0) {
      int ex = 0;
      std::frexp(std::fabs(f), &ex);
      ++e.log_abs_histogram[static_cast<size_t>(std::clamp(ex - 1 - kLogMinExp, 0, kLogBins - 1))];
    }
    items.push_back({std::fabs(f), i});
  }
  if (e.finite == 0) {
    e.histogram.assign(static_cast<size_t>(bins), 0);
    return e;
  }
  e.min = lo;
  e.max = hi;
  e.mean = sum / e.finite;
  e.abs_mean = abs_sum / e.finite;
  long double m2 = 0;
  for (float f : x)
    if (std::isfinite(f)) m2 += (f - e.mean) * (f - e.mean);
  e.std = std::sqrt(m2 / e.finite);
  e.histogram.assign(static_cast<size_t>(bins), 0);
  const double width = e.max - e.min;
  for (float f : x)
    if (std::isfinite(f)) {
      const int b = width > 0 ? static_cast<int>((f - e.min) / width * bins) : 0;
      ++e.histogram[static_cast<size_t>(std::clamp(b, 0, bins - 1))];
    }
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.abs > b.abs; });
  for (size_t k = 0; k < items.size() && k < static_cast<size_t>(top_k); ++k) {
    const size_t p = items[k].pos;
    e.top.push_back({static_cast<int64_t>(p / static_cast<size_t>(v.n_cols)),
                     static_cast<int64_t>(p % static_cast<size_t>(v.n_cols)), x[p]});
  }
  return e;
}

void expect_stats_match(const TensorView& v, const StatsOptions& o, const std::string& what) {
  auto got = compute_stats(v, o);
  ASSERT_TRUE(got.ok()) << what << ": " << got.error().to_string();
  const TensorStats& s = *got;
  const Expected e = per_value(v, o.histogram_bins, o.top_k);
  EXPECT_FALSE(s.cancelled) << what;
  EXPECT_EQ(s.rows_done, v.n_rows) << what;
  EXPECT_EQ(s.count, e.count) << what;
  EXPECT_EQ(s.finite, e.finite) << what;
  EXPECT_EQ(s.zeros, e.zeros) << what;
  EXPECT_EQ(s.nan, e.nan) << what;
  EXPECT_EQ(s.pos_inf, e.pos_inf) << what;
  EXPECT_EQ(s.neg_inf, e.neg_inf) << what;
  EXPECT_EQ(s.min, e.min) << what;
  EXPECT_EQ(s.max, e.max) << what;
  EXPECT_EQ(s.histogram, e.histogram) << what;
  EXPECT_EQ(s.log_abs_histogram, e.log_abs_histogram) << what;
  ASSERT_EQ(s.top.size(), e.top.size()) << what;
  for (size_t k = 0; k < e.top.size(); ++k) {
    EXPECT_EQ(s.top[k].row, e.top[k].row) << what << " top " << k;
    EXPECT_EQ(s.top[k].col, e.top[k].col) << what << " top " << k;
    EXPECT_TRUE(same_bits(s.top[k].value, e.top[k].value)) << what << " top " << k;
  }
  // the documented tolerances (core/decode/stats.hpp)
  const long double abs_mean = e.abs_mean;
  EXPECT_LE(std::fabs(s.mean - e.mean), 1e-10L * abs_mean) << what;
  EXPECT_LE(std::fabs(s.std - e.std), 1e-9L * e.std + 1e-12L * abs_mean) << what;
  EXPECT_LE(std::fabs(s.abs_mean - e.abs_mean), 1e-10L * abs_mean) << what;
}

StatsOptions small_chunks(int threads, size_t block_elems) {
  StatsOptions o;
  o.threads = threads;
  o.block_elems = block_elems;
  return o;
}

TensorView bytes_view(const TypeInfo& info, std::span<const uint8_t> bytes, int64_t rows, int64_t blocks_per_row) {
  TensorView v;
  v.type = info.id;
  v.n_rows = rows;
  v.n_cols = blocks_per_row * static_cast<int64_t>(info.block_elems);
  v.row_bytes = static_cast<uint64_t>(blocks_per_row) * info.block_bytes;
  v.data = bytes;
  return v;
}

// `n` blocks of `info`'s type, every byte random (a test then sets the fields it is about).
std::vector<uint8_t> random_blocks(const TypeInfo& info, int64_t n, std::mt19937& rng) {
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * info.block_bytes);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

// NaN, +Inf and -Inf planted as whole elements of the plain float types.
void plant_non_finite(const TypeInfo& info, std::vector<uint8_t>& bytes, std::mt19937& rng) {
  const uint32_t f32[] = {0x7fc00000u, 0x7f800000u, 0xff800000u};
  const uint16_t f16[] = {0x7e00, 0x7c00, 0xfc00}, bf16[] = {0x7fc0, 0x7f80, 0xff80};
  for (int k = 0; k < 6; ++k) {
    const size_t at = rng() % (bytes.size() / info.block_bytes) * info.block_bytes;
    if (info.id == TypeId::f32) std::memcpy(&bytes[at], &f32[k % 3], 4);
    if (info.id == TypeId::f16) std::memcpy(&bytes[at], &f16[k % 3], 2);
    if (info.id == TypeId::bf16) std::memcpy(&bytes[at], &bf16[k % 3], 2);
  }
}

TEST(StatsFast, EveryTypeOverRandomBlocksEqualsPerValueLoop) {
  std::mt19937 rng(25);
  int checked = 0;
  for (const auto& info : all_types()) {
    if (info.kind == TypeKind::composite || !can_decode(info.id)) continue;
    // 37 rows of 3 blocks: chunks of 2 rows on 3 threads, and the default chunking on all threads
    const int64_t rows = 37, per_row = 3;
    std::vector<uint8_t> bytes = random_blocks(info, rows * per_row, rng);
    plant_non_finite(info, bytes, rng);
    const TensorView v = bytes_view(info, bytes, rows, per_row);
    const std::string what(info.name);
    expect_stats_match(v, small_chunks(3, static_cast<size_t>(2 * v.n_cols)), what + " random, 3 threads");
    expect_stats_match(v, StatsOptions{}, what + " random");
    StatsOptions odd = small_chunks(2, 1);
    odd.histogram_bins = 7;
    odd.top_k = 40;
    expect_stats_match(v, odd, what + " random, 7 bins, top 40");
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

// The 16-level types (Q4_0, Q4_1, IQ4_NL, IQ4_XS, Q4_K) are summed per level and bin their linear
// histogram in the first pass over the bounds of their levels; that histogram stands when the values
// reach those bounds (every code in every sub-block) and a second pass bins it again when they do
// not (codes 1..14 only). Both equal the per-value loop; finite f16 scales, so the ranges are real.
TEST(StatsFast, LevelTypesWithAndWithoutTheirExtremeCodes) {
  struct Layout {
    TypeId type;
    size_t f16_fields, code_offset, code_bytes;
  };
  const Layout layouts[] = {{TypeId::q4_0, 1, 2, 16},
                            {TypeId::q4_1, 2, 4, 16},
                            {TypeId::iq4_nl, 1, 2, 16},
                            {TypeId::iq4_xs, 1, 8, 128},
                            {TypeId::q4_k, 2, 16, 128}};
  std::mt19937 rng(4);
  for (const Layout& t : layouts) {
    const TypeInfo& info = type_info(t.type);
    const int64_t rows = 23, per_row = 16;
    for (const bool extremes : {true, false}) {
      std::vector<uint8_t> bytes = random_blocks(info, rows * per_row, rng);
      for (size_t at = 0; at < bytes.size(); at += info.block_bytes) {
        for (size_t f = 0; f < t.f16_fields; ++f) bytes[at + 2 * f + 1] &= 0xbf;   // exponent below 0x1f: finite
        for (size_t j = 0; j < t.code_bytes; ++j) {
          // every code in both nibbles of each 16 bytes, or random codes in 1..14
          const uint8_t lo = extremes ? static_cast<uint8_t>(j % 16) : static_cast<uint8_t>(1 + rng() % 14);
          const uint8_t hi = extremes ? static_cast<uint8_t>(15 - j % 16) : static_cast<uint8_t>(1 + rng() % 14);
          bytes[at + t.code_offset + j] = static_cast<uint8_t>(lo | hi << 4);
        }
      }
      const TensorView v = bytes_view(info, bytes, rows, per_row);
      const std::string what = std::string(info.name) + (extremes ? " every code" : " codes 1..14");
      expect_stats_match(v, small_chunks(2, static_cast<size_t>(3 * v.n_cols)), what);
      StatsOptions odd = small_chunks(3, 1);
      odd.histogram_bins = 5;
      expect_stats_match(v, odd, what + ", 5 bins");
    }
  }
}

// The fast paths over scales of every kind: Q4_K's in-register pass (chunks whose every d and dmin is
// finite; the others take the generic level path, so one tensor mixes both), and the block types
// whose exact bounds are found first and whose pass 1 bins both histograms in one increment (Q6_K,
// Q8_0, Q5_K). Normal, subnormal, zero, the largest and negative f16 scales put levels and values
// in the zero column, log2 bin 0 (subnormal), the last log2 bin and on both signs of zero; one block
// in 16 has an Inf or NaN scale.
TEST(StatsFast, FastPathsOverEveryKindOfScale) {
  struct Layout {
    TypeId type;
    std::vector<size_t> f16_at;   // byte offsets of the block's f16 scales
  };
  const Layout layouts[] = {{TypeId::q4_k, {0, 2}}, {TypeId::q6_k, {208}}, {TypeId::q8_0, {0}}, {TypeId::q5_k, {0, 2}}};
  const uint16_t finite[] = {0x3c00, 0x2e66, 0x0001, 0x03ff, 0x0000, 0x8000, 0x7bff, 0xfbff, 0xb800, 0x1400};
  const uint16_t non_finite[] = {0x7c00, 0xfc00, 0x7e00};
  std::mt19937 rng(11);
  for (const Layout& t : layouts) {
    const TypeInfo& info = type_info(t.type);
    const int64_t rows = 48, per_row = 4;
    for (const bool with_non_finite : {false, true}) {
      std::vector<uint8_t> bytes = random_blocks(info, rows * per_row, rng);
      for (size_t at = 0; at < bytes.size(); at += info.block_bytes)
        for (size_t off : t.f16_at) {
          const uint16_t h = with_non_finite && rng() % 16 == 0 ? non_finite[rng() % 3] : finite[rng() % 10];
          std::memcpy(&bytes[at + off], &h, 2);
        }
      const TensorView v = bytes_view(info, bytes, rows, per_row);
      const std::string what = std::string(info.name) + (with_non_finite ? " some Inf/NaN scales" : " finite scales");
      expect_stats_match(v, small_chunks(2, static_cast<size_t>(2 * v.n_cols)), what + ", 2 threads");
      expect_stats_match(v, StatsOptions{}, what);
      StatsOptions odd = small_chunks(3, 1);
      odd.histogram_bins = 7;
      odd.top_k = 40;
      expect_stats_match(v, odd, what + ", 7 bins, top 40");
    }
  }
}

// The kernels that decode nothing read wider chunks than the decoding ones (a level form up to 16x
// block_elems, Q6_K on AVX-512 up to 4x) where the tensor still makes 64 chunks: 301 rows of 512
// values at block_elems 256 are chunks of 4 rows (Q4_K, Q4_0, IQ4_XS) or 2 rows (Q6_K), the last one
// short; finite scales, then one block in 16 with an Inf scale (the generic paths in the same tensor).
TEST(StatsFast, WideChunksOfTheBlockKernelsWithAShortLastChunk) {
  std::mt19937 rng(29);
  for (const TypeId type : {TypeId::q4_k, TypeId::q4_0, TypeId::iq4_xs, TypeId::q6_k}) {
    const TypeInfo& info = type_info(type);
    const int64_t rows = 301, per_row = static_cast<int64_t>(512 / info.block_elems);
    const size_t scale_at = type == TypeId::q6_k ? 208 : 0;
    for (const bool some_inf : {false, true}) {
      std::vector<uint8_t> bytes = random_blocks(info, rows * per_row, rng);
      for (size_t at = 0; at < bytes.size(); at += info.block_bytes) {
        bytes[at + scale_at + 1] &= 0xbf;   // every f16 exponent below all-ones: finite
        if (type == TypeId::q4_k) bytes[at + 3] &= 0xbf;
        if (some_inf && rng() % 16 == 0) bytes[at + scale_at + 1] |= 0x7c;
      }
      const TensorView v = bytes_view(info, bytes, rows, per_row);
      const std::string what = std::string(info.name) + (some_inf ? " some Inf scales" : " finite scales");
      expect_stats_match(v, small_chunks(2, 256), what + ", wide chunks");
      expect_stats_match(v, small_chunks(3, 256), what + ", wide chunks, 3 threads");
    }
  }
}

// The AVX-512 kernels make each step's increments a few steps later (a ring of pending steps) and
// the rest at the end of the chunk: chunks of 2, 4 and 6 steps of 16 values (Q8_0 and Q5_0 rows of
// one 32-value block, 1, 2 or 3 rows a chunk, the last one short) count every value once.
TEST(StatsFast, ChunksOfAFewIncrementStepsCountEveryValue) {
  std::mt19937 rng(31);
  for (const TypeId type : {TypeId::q8_0, TypeId::q5_0}) {
    const TypeInfo& info = type_info(type);
    ASSERT_EQ(info.block_elems, 32u);
    const int64_t rows = 7;
    std::vector<uint8_t> bytes = random_blocks(info, rows, rng);
    for (size_t at = 0; at < bytes.size(); at += info.block_bytes) bytes[at + 1] &= 0xbf;   // finite d
    const TensorView v = bytes_view(info, bytes, rows, 1);
    for (const size_t elems : {32, 64, 96})
      expect_stats_match(v, small_chunks(2, elems),
                         std::string(info.name) + ", " + std::to_string(elems / 16) + " steps");
  }
}

// Q6_K's exact bounds come first (its pass 1 bins the histogram over them, so there is no second
// pass); on AVX-512 a block is decoded for them only where its levels could widen the bounds so far.
// Scales of every size in random order, the largest in a late block, negative ones, repeated blocks
// (levels equal to the bounds so far) and blocks with an Inf or NaN d: the statistics equal the
// per-value loop's, and the progress never falls back (a second pass, 0.5 onwards, would follow 1.0,
// as it does whenever the bounds are not the values' min and max).
TEST(StatsFast, Q6kBoundsBeforeThePassAreTheValuesMinAndMax) {
  const TypeInfo& info = type_info(TypeId::q6_k);
  const uint16_t scales[] = {0x3c00, 0x2e66, 0x0001, 0x03ff, 0xb800, 0x1400, 0x4500, 0xc600, 0x3555};
  std::mt19937 rng(31);
  for (int round = 0; round < 6; ++round) {
    const int64_t rows = 40, per_row = 4;
    std::vector<uint8_t> bytes = random_blocks(info, rows * per_row, rng);
    const size_t n_blocks = bytes.size() / info.block_bytes;
    for (size_t k = 0; k < n_blocks; ++k) {
      uint8_t* b = &bytes[k * info.block_bytes];
      uint16_t d = scales[rng() % 9];
      if (round % 2 == 1 && rng() % 8 == 0) d = rng() % 2 ? 0x7c00 : 0x7e01;   // Inf or NaN
      if (k == n_blocks - 1 - static_cast<size_t>(round) * 7) d = 0x5400;      // the largest, late
      std::memcpy(b + 208, &d, 2);
      if (round >= 4 && k % 3 == 1) std::memcpy(b, b - info.block_bytes, info.block_bytes);   // repeated
    }
    const TensorView v = bytes_view(info, bytes, rows, per_row);
    for (const size_t block_elems : {size_t{1}, size_t{4 * 256}, size_t{1} << 16}) {
      StatsOptions o = small_chunks(2, block_elems);
      double last = 0;
      bool fell = false;
      o.progress = [&](double p) {
        fell = fell || p < last;
        last = p;
      };
      const std::string what = "q6_k round " + std::to_string(round) + ", chunks of " + std::to_string(block_elems);
      expect_stats_match(v, o, what);
      EXPECT_FALSE(fell) << what << ": a second pass";
    }
  }
  // By hand: row 0's values are 31 and -31 (codes 63, scales 1 and -1), row 1's all -32 (code 0,
  // scale 1): only its level -32 is below the bounds so far, so a level bound of -31 would skip it.
  std::vector<uint8_t> two(2 * info.block_bytes, 0);
  std::memset(two.data(), 0xff, 192);                              // ql and qh all ones: code 63
  for (int j = 0; j < 16; ++j) two[192 + j] = j == 5 ? 0xff : 1;   // sc: 1, and -1 in sub-block 5
  for (int j = 0; j < 16; ++j) two[info.block_bytes + 192 + j] = 1;
  const uint16_t one = 0x3c00;
  std::memcpy(&two[208], &one, 2);
  std::memcpy(&two[info.block_bytes + 208], &one, 2);
  StatsOptions o = small_chunks(1, 256);   // two chunks: a second pass would report 0.75 after 1.0
  double last = 0;
  bool fell = false;
  o.progress = [&](double p) {
    fell = fell || p < last;
    last = p;
  };
  expect_stats_match(bytes_view(info, two, 2, 1), o, "q6_k by hand");
  EXPECT_FALSE(fell) << "q6_k by hand: a second pass";
}

// Q4_K's bounds before pass 1 are the min and max of its values, not of its levels, so that pass 1's
// histogram stands and there is no second pass even where no sub-block holds codes 0 or 15. Codes
// 1..14 in every sub-block, f16 scales of every kind (negative, zero, -0, subnormal, the largest
// in a late block, some Inf or NaN), repeated blocks (levels equal to the bounds so far): the
// statistics equal the per-value loop's, and a cancel raised once pass 1 has reported 1.0 finds no
// second pass to stop.
TEST(StatsFast, Q4kBoundsBeforeThePassAreTheValuesMinAndMax) {
  const TypeInfo& info = type_info(TypeId::q4_k);
  const uint16_t scales[] = {0x3c00, 0x2e66, 0x0001, 0x03ff, 0x0000, 0x8000, 0xb800, 0x1400, 0x4500, 0xc600};
  std::mt19937 rng(37);
  for (int round = 0; round < 6; ++round) {
    const int64_t rows = 40, per_row = 4;
    std::vector<uint8_t> bytes = random_blocks(info, rows * per_row, rng);
    const size_t n_blocks = bytes.size() / info.block_bytes;
    for (size_t k = 0; k < n_blocks; ++k) {
      uint8_t* b = &bytes[k * info.block_bytes];
      for (int f = 0; f < 2; ++f) {
        uint16_t h = scales[rng() % 10];
        if (round % 2 == 1 && rng() % 8 == 0) h = rng() % 2 ? 0x7c00 : 0xfe01;   // Inf or NaN
        std::memcpy(b + 2 * f, &h, 2);
      }
      if (k == n_blocks - 1 - static_cast<size_t>(round) * 7) {   // the largest scales, late
        const uint16_t big = 0x5400;
        std::memcpy(b, &big, 2);
        std::memcpy(b + 2, &big, 2);
      }
      for (int j = 16; j < 144; ++j)
        b[j] = static_cast<uint8_t>((1 + rng() % 14) | (1 + rng() % 14) << 4);                // codes 1..14
      if (round >= 4 && k % 3 == 1) std::memcpy(b, b - info.block_bytes, info.block_bytes);   // repeated
    }
    const TensorView v = bytes_view(info, bytes, rows, per_row);
    for (const size_t block_elems : {size_t{1}, size_t{4 * 256}, size_t{1} << 16}) {
      StatsOptions o = small_chunks(2, block_elems);
      std::atomic<bool> cancel{false};
      o.cancel = &cancel;
      o.progress = [&](double p) {
        if (p >= 1.0) cancel = true;
      };
      const std::string what = "q4_k round " + std::to_string(round) + ", chunks of " + std::to_string(block_elems);
      expect_stats_match(v, o, what);   // not cancelled: nothing ran after pass 1
    }
  }
}

// Tensors of 1 MiB and more are read by the kernel's copy into each thread's buffer
// (core/kernel_copy.hpp): from a mapped file by pread, from the heap by process_vm_readv. The
// copy is what the level kernels scan and the decoders decode; the statistics are the same.
TEST(StatsFast, LargeTensorsReadThroughTheKernelsCopy) {
  testing::TempDir dir;
  std::mt19937 rng(21);
  for (const TypeId type : {TypeId::q4_k, TypeId::q6_k, TypeId::q4_0, TypeId::f32}) {
    const TypeInfo& info = type_info(type);
    const int64_t per_row = 4096 / static_cast<int64_t>(info.block_elems);
    const int64_t rows = static_cast<int64_t>((size_t{1} << 20) / (per_row * info.block_bytes)) + 3;
    std::vector<uint8_t> bytes = random_blocks(info, rows * per_row, rng);
    for (size_t at = 0; at + 1 < bytes.size(); at += 2)   // every f16 and f32 exponent below all-ones
      if (type == TypeId::f32 ? at % 4 == 2 : true) bytes[at + 1] &= 0xbf;
    const std::string path = dir.file(std::string(info.name) + ".bin");
    {
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    auto map = MappedFile::open(path);
    ASSERT_TRUE(map.ok());
    const std::string what(info.name);
    expect_stats_match(bytes_view(info, bytes, rows, per_row), small_chunks(2, 1 << 14), what + " on the heap");
    expect_stats_match(bytes_view(info, map->bytes(), rows, per_row), small_chunks(2, 1 << 14), what + " mapped");
  }
}

TEST(StatsFast, AllEqualBlocksAndAllZeroData) {
  std::mt19937 rng(7);
  for (const auto& info : all_types()) {
    if (info.kind == TypeKind::composite || !can_decode(info.id)) continue;
    const int64_t rows = 9, per_row = 2;
    std::vector<uint8_t> block(info.block_bytes);
    for (auto& b : block) b = static_cast<uint8_t>(rng());
    std::vector<uint8_t> same(static_cast<size_t>(rows * per_row) * info.block_bytes);
    for (size_t i = 0; i < same.size(); ++i) same[i] = block[i % info.block_bytes];
    const std::string what(info.name);
    expect_stats_match(bytes_view(info, same, rows, per_row), small_chunks(2, 1), what + " one block repeated");
    std::vector<uint8_t> zero(same.size(), 0);
    expect_stats_match(bytes_view(info, zero, rows, per_row), small_chunks(2, 1), what + " zero bytes");
  }
  // one value everywhere: max == min, every finite value in bin 0
  std::vector<float> x(4096 + 5, 0.1f);
  const TensorView v = f32_view(x, 1, static_cast<int64_t>(x.size()));
  auto s = compute_stats(v);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->histogram[0], x.size());
  EXPECT_EQ(s->std, 0.0);
  expect_stats_match(v, StatsOptions{}, "f32 all 0.1");
}

// Floats within a few ulps of every bin edge, where a multiply by bins/width and the division the
// bins are defined by can disagree; subnormals and both zeros for the log2 histogram.
TEST(StatsFast, ValuesOnBinEdgesAndSubnormals) {
  for (const auto& [lo, hi] :
       {std::pair{0.1f, 0.7f}, std::pair{-3.0f, 1e-3f}, std::pair{-1e-30f, 7.0f}, std::pair{1.0f, 1.0000005f},
        std::pair{0.0f, 0.7f}, std::pair{0.0f, 3.0f}, std::pair{-0.6f, 0.0f}, std::pair{0.0f, 0.1f},
        std::pair{-0.7f, 0.7f}, std::pair{-3.3f, 3.3f}, std::pair{-1e-3f, 1e-3f}}) {
    std::vector<float> x;
    for (float f : {lo, hi, 0.0f, -0.0f, 1e-40f, -3e-39f, 1e-45f})
      if (f >= lo && f <= hi) x.push_back(f);
    for (int bins : {64, 7, 100}) {
      for (int k = 1; k < bins; ++k) {
        const double edge = static_cast<double>(lo) + (static_cast<double>(hi) - lo) * k / bins;
        float f = static_cast<float>(edge);
        for (int u = 0; u < 4; ++u) f = std::nextafter(f, -INFINITY);
        for (int u = 0; u < 9; ++u, f = std::nextafter(f, INFINITY))
          if (f >= lo && f <= hi) x.push_back(f);
      }
    }
    const TensorView v = f32_view(x, static_cast<int64_t>(x.size()), 1);
    for (int bins : {64, 7, 100}) {
      StatsOptions o = small_chunks(2, 64);
      o.histogram_bins = bins;
      expect_stats_match(v, o,
                         "edges " + std::to_string(lo) + ".." + std::to_string(hi) + " bins " + std::to_string(bins));
    }
  }
}

// A range symmetric about zero puts 0 exactly on the middle edge: the quotient is exactly bins/2,
// and a multiply by bins/width lands one below it for some widths.
TEST(StatsFast, ZeroOnTheMiddleEdgeOfSymmetricRanges) {
  for (int i = 0; i < 300; ++i) {
    const float m = 0.001f * (1.0f + 0.37f * static_cast<float>(i));
    std::vector<float> x = {-m, 0.0f, m, 0.5f * m, -0.25f * m};
    const TensorView v = f32_view(x, 1, static_cast<int64_t>(x.size()));
    expect_stats_match(v, StatsOptions{}, "symmetric " + std::to_string(m));
    if (HasFailure()) return;
  }
}

// Q6_K's in-register pass (finite d) bins by a float multiply checked against a margin: its values
// d * sc * (q - 32) with scales of both signs put the range symmetric about zero and every value on
// a multiple of d, so they sit on bin edges (0 on the middle one) for many bin counts, and each d
// below gives another rounding of bins / width. Every code occurs in every sub-block.
TEST(StatsFast, Q6kValuesOnBinEdges) {
  const TypeInfo& info = type_info(TypeId::q6_k);
  const int64_t rows = 6, per_row = 2;
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * per_row) * info.block_bytes);
  for (int i = 0; i < 120; ++i) {
    const uint16_t d = static_cast<uint16_t>(0x2000 + 0x53 * i);   // f16 from 2^-7 up, finite
    for (size_t at = 0; at < bytes.size(); at += info.block_bytes) {
      uint8_t* b = &bytes[at];
      for (int e = 0; e < 256; ++e) {   // element e of half n: code (e + i) % 64, low nibble and high pair
        const int n = e / 128, l = e % 32, k = e % 128 / 32, code = (e + i) % 64;
        uint8_t& ql = b[64 * n + l + 32 * (k & 1)];
        ql = static_cast<uint8_t>(k < 2 ? (ql & 0xf0) | (code & 0xf) : (ql & 0x0f) | (code & 0xf) << 4);
        uint8_t& qh = b[128 + 32 * n + l];
        qh = static_cast<uint8_t>((qh & ~(3 << 2 * k)) | (code >> 4) << 2 * k);
      }
      for (int sub = 0; sub < 16; ++sub) b[192 + sub] = static_cast<uint8_t>(sub % 2 == 0 ? 1 + i % 3 : -(1 + i % 3));
      std::memcpy(b + 208, &d, 2);
    }
    const TensorView v = bytes_view(info, bytes, rows, per_row);
    for (int bins : {64, 7, 9, 63, 100}) {
      StatsOptions o = small_chunks(2, 256);
      o.histogram_bins = bins;
      expect_stats_match(v, o, "q6_K d " + std::to_string(d) + " bins " + std::to_string(bins));
    }
    if (HasFailure()) return;
  }
}

TEST(StatsFast, SameResultOnAnyThreadCount) {
  std::mt19937 rng(3);
  std::vector<uint8_t> bytes(64 * 8 * 144);   // q4_K: 64 rows of 8 blocks
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  for (size_t i = 0; i < bytes.size(); i += 144) bytes[i + 1] &= 0x3b;   // finite d and dmin: no NaN chunk
  for (size_t i = 0; i < bytes.size(); i += 144) bytes[i + 3] &= 0x3b;
  const TensorView v = bytes_view(type_info(TypeId::q4_k), bytes, 64, 8);
  auto one = compute_stats(v, small_chunks(1, 2048));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->nan, 0u);
  for (int threads : {2, 3, 8}) {
    auto s = compute_stats(v, small_chunks(threads, 2048));
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->mean, one->mean) << threads;   // bit for bit: chunk moments merge in chunk order
    EXPECT_EQ(s->std, one->std) << threads;
    EXPECT_EQ(s->abs_mean, one->abs_mean) << threads;
    EXPECT_EQ(s->histogram, one->histogram) << threads;
    ASSERT_EQ(s->top.size(), one->top.size());
    for (size_t k = 0; k < s->top.size(); ++k)
      EXPECT_EQ(s->top[k].row * 2048 + s->top[k].col, one->top[k].row * 2048 + one->top[k].col);
  }
  expect_stats_match(v, small_chunks(3, 2048), "q4_K finite");
}

TEST(StatsFast, CancelledOnSeveralThreadsCountsWholeChunks) {
  // 20,000 chunks: the other threads cannot finish them all before the caller's first progress call
  const int64_t rows = 200000;
  std::vector<float> x(static_cast<size_t>(rows) * 16, 1.0f);
  const TensorView v = f32_view(x, rows, 16);
  std::atomic<bool> cancel{false};
  StatsOptions o = small_chunks(3, 160);
  o.histogram_bins = 0;   // one pass: what is counted is what rows_done says
  o.cancel = &cancel;
  o.progress = [&](double) { cancel = true; };
  auto s = compute_stats(v, o);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->cancelled);
  EXPECT_LT(s->rows_done, rows);
  EXPECT_EQ(s->rows_done % 10, 0);
  EXPECT_EQ(s->count, static_cast<uint64_t>(s->rows_done) * 16);
  EXPECT_EQ(s->finite, s->count);
}

// Real quantized data: every decodable tensor of the oracle models (GGUF, MLX, Ollama).
TEST(StatsFast, OracleModelsEqualPerValueLoop) {
  std::vector<std::string> paths;
  for (const auto& file : manifest()["gguf"]["files"]) paths.push_back(oracle_path(file["path"]));
  for (const auto& model : manifest()["safetensors"]["models"])
    if (model.contains("files") && !model["files"].empty()) {
      const std::string p = oracle_path(model["files"][0]["path"]);
      paths.push_back(p.substr(0, p.rfind('/')));   // MLX: the model's folder
    }
  if (manifest()["gguf"]["ollama"].contains("path")) paths.push_back(oracle_path(manifest()["gguf"]["ollama"]["path"]));
  std::set<std::string> types;
  int tensors = 0;
  for (const auto& path : paths) {
    auto m = open_model(path);
    if (!m) continue;   // oracle files that are malformed on purpose
    for (const Tensor& t : m->tensors) {
      if (!can_decode(t.type) || (t.flags & (kTensorUnsupported | kTensorNonContiguous | kTensorCompanion))) continue;
      auto v = make_tensor_view(*m, t);
      if (!v) continue;
      StatsOptions o = small_chunks(3, static_cast<size_t>(std::max<int64_t>(1, v->n_cols)) * 3);
      expect_stats_match(*v, o, path + ": " + std::string(t.name));
      types.insert(std::string(type_info(t.type).name));
      ++tensors;
    }
  }
  EXPECT_GT(tensors, 50);
  EXPECT_GT(types.size(), 20u);
  EXPECT_TRUE(types.count("mlx.affine")) << "no MLX composite tensor reached";
}

}   // namespace
}   // namespace akview::test
