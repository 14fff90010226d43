// compute_stats: the tensor is cut into chunks of whole rows that every thread copies (pread from the
// mapped file, core/kernel_copy.hpp) and decodes into its own L2-sized buffer
// (core/parallel_chunks.hpp). Pass 1 sweeps a chunk once with 8-lane vectors (min,
// max, max |x|, the sums of x - shift, its square and |x| in doubles, zeros, and a non-finite count),
// counts exponents for the still-cached chunk's log2 histogram, and looks for outliers
// only when the chunk's max |x| beats the thread's current K-th; a chunk holding NaN or Inf is
// scanned again value by value. Chunk moments are merged in chunk order (Chan's formula), so the
// result is the same for any thread count. Pass 2 bins each value by a multiply where that provably
// gives the bin the per-value division gives, and by the division where it might not. The 16-level
// types skip the decode: per 32-value sub-block, the count of each code (SIMD compares) weighs its
// 16 levels in every statistic, one increment a level feeds both histograms (a table of (linear bin,
// log2 bin) pairs folded per chunk), and the linear bins are over the levels' bounds, found first
// from the scales alone, so that pass 2 only runs where the values do not reach them. Q4_K's bounds
// are its values' exact min and max (level_bounds_q4k also reads the codes of the sub-blocks that
// could widen them), so it never has a pass 2, and it has its own AVX-512 pass 1 (scan_q4k_avx512:
// code counts from bit planes, everything in registers). The other block types find their exact
// bounds first (a decode and a min/max sweep) and their pass 1 feeds both histograms with one
// (linear bin, log2 bin) increment a value (bin_pairs); Q6_K on AVX-512 does both from the blocks,
// its values made in registers (q6k_bounds_avx512, which decodes only the blocks whose levels could
// widen the bounds so far, and scan_q6k_avx512).
#include "core/decode/stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/decode/decode.hpp"
#include "core/decode/kquant_scales.hpp"
#include "core/decode/level_forms.hpp"
#include "core/kernel_copy.hpp"
#include "core/parallel_chunks.hpp"

// The 16-lane vectors below are internal to this file: GCC's note that returning them changes the ABI
// where the build has no AVX-512 does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"
// GCC 12's AVX-512 intrinsics (shifts, min/max, conversions) start from _mm512_undefined_*, which its
// -O3 flow analysis reports as maybe uninitialised.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace akview {
namespace {

namespace levels = decode::levels;

typedef float V8 __attribute__((vector_size(32)));   // GCC/Clang lower these to the target's SIMD
typedef int32_t I8 __attribute__((vector_size(32)));
typedef double D8 __attribute__((vector_size(64)));

constexpr int32_t kExpBits = 0x7f800000;
constexpr int32_t kAbsBits = 0x7fffffff;

V8 load8(const float* p) {
  V8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

uint32_t bits_of(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

int log_bin(float a) {
  int e = 0;
  std::frexp(a, &e);   // a = m * 2^e, m in [0.5, 1): a in [2^(e-1), 2^e)
  return std::clamp(e - 1 - kLogMinExp, 0, kLogBins - 1);
}

// The log2 bin of a finite nonzero |x| with biased exponent e (1..254): frexp's e is biased - 126.
constexpr int exponent_bin(int biased) { return std::clamp(biased - 127 - kLogMinExp, 0, kLogBins - 1); }

bool cancelled(const StatsOptions& o) { return o.cancel != nullptr && o.cancel->load(std::memory_order_relaxed); }

// One value kept as an outlier candidate; `pos` is its row-major index in the tensor.
struct TopItem {
  float abs;
  uint64_t pos;
  float value;
};
// a ranks before b: larger |x|, then the earlier position.
bool ranks_before(const TopItem& a, const TopItem& b) { return a.abs > b.abs || (a.abs == b.abs && a.pos < b.pos); }

// Counters are kept in copies used in turn, so increments of one popular bin do not wait on each
// other's store.
constexpr size_t kCopies = 8;

// What one thread gathers over the chunks it takes.
struct Worker {
  std::vector<float> buf;
  std::vector<uint8_t> raw;   // the chunk's bytes, copied out of the mapping by the kernel
  float lo = INFINITY, hi = -INFINITY;
  uint64_t nan = 0, pos_inf = 0, neg_inf = 0, zeros = 0;
  std::array<uint64_t, kLogBins> log{};
  std::vector<TopItem> heap;          // std heap under ranks_before: front() is the worst kept
  std::vector<uint64_t> hist;         // kCopies copies of the linear histogram (pass 2)
  uint32_t exponents[kCopies][256];   // per-chunk biased-exponent counts
  std::vector<uint32_t> pairs;        // a level form's chunk: (linear bin, log2 bin) counts
  std::vector<uint32_t> fast_pairs;   // the same, kept over chunks by a fast kernel (fold_pairs)
  uint64_t fast_pairs_values = 0;     // values counted in fast_pairs since its last fold
};

// A chunk's share of the moments, merged in chunk order.
struct ChunkSummary {
  uint64_t values = 0, finite = 0;
  double mean = 0, m2 = 0, abs_sum = 0;
  float lo = INFINITY, hi = -INFINITY;   // over its finite values
  bool non_finite = false;
  bool done = false;
};

// The level kernels' last step: a chunk's moments from its sums of x - shift (sum, squares, |x|),
// and the worker's bounds widened by the chunk's.
void close_level_chunk(ChunkSummary& c, Worker& w, double shift, double sum, double sq, double abs_sum) {
  if (c.finite > 0) {
    const double count = static_cast<double>(c.finite);
    c.mean = shift + sum / count;
    c.m2 = std::max(0.0, sq - sum * sum / count);
    c.abs_sum = abs_sum;
  }
  w.lo = std::min(w.lo, c.lo);
  w.hi = std::max(w.hi, c.hi);
}

void offer(std::vector<TopItem>& heap, const TopItem& item, size_t k) {
  if (heap.size() < k) {
    heap.push_back(item);
    std::push_heap(heap.begin(), heap.end(), ranks_before);
  } else if (ranks_before(item, heap.front())) {
    std::pop_heap(heap.begin(), heap.end(), ranks_before);
    heap.back() = item;
    std::push_heap(heap.begin(), heap.end(), ranks_before);
  }
}

// Values p0, p0 + 1, ... (all finite) offered in turn: those that beat the K-th kept (within one thread
// positions only grow, so an |x| equal to the K-th kept never replaces it).
void offer_values(std::vector<TopItem>& heap, const float* xs, size_t n, uint64_t p0, size_t k) {
  for (size_t i = 0; i < n; ++i) {
    const float ax = std::fabs(xs[i]);
    if (heap.size() < k || ax > heap.front().abs) offer(heap, {ax, p0 + i, xs[i]}, k);
  }
}

// The vector sweep of pass 1. Its sums are of x - shift (a value near the chunk's mean), so the
// sum of squares gives the chunk's m2 without a second sweep: m2 = S2 - S1^2 / n loses nothing
// worth a bit when the shift is within a few std of the mean. Only used when non_finite == 0.
struct Sweep {
  float lo = INFINITY, hi = -INFINITY, abs_max = 0;
  double sum = 0, sum_sq = 0, abs_sum = 0;   // of x - shift, (x - shift)^2, |x|
  uint64_t zeros = 0, non_finite = 0;
};

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
// On AVX2 in 4-lane halves with the counts in scalars: the generic form's 8-lane doubles and counts
// are more than AVX2's 16 vector registers, and GCC spilled them every step (1.5 ns a value against
// 0.15 here and on AVX-512).
Sweep sweep(const float* x, size_t n, double shift) {
  __m256 lo = _mm256_set1_ps(INFINITY), hi = _mm256_set1_ps(-INFINITY), am = _mm256_setzero_ps();
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(kAbsBits)), inf = _mm256_set1_ps(INFINITY);
  const __m256d mu = _mm256_set1_pd(shift), sign = _mm256_set1_pd(-0.0);
  __m256d s_l = _mm256_setzero_pd(), s_h = s_l, sq_l = s_l, sq_h = s_l, a_l = s_l, a_h = s_l;
  uint64_t zeros = 0, non_finite = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i), av = _mm256_and_ps(v, abs_mask);
    non_finite += static_cast<uint64_t>(__builtin_popcount(_mm256_movemask_ps(_mm256_cmp_ps(av, inf, _CMP_NLT_UQ))));
    zeros += static_cast<uint64_t>(
        __builtin_popcount(_mm256_movemask_ps(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_EQ_OQ))));
    lo = _mm256_min_ps(v, lo);   // as the generic v < lo ? v : lo
    hi = _mm256_max_ps(v, hi);
    am = _mm256_max_ps(av, am);
    const __m256d x_l = _mm256_cvtps_pd(_mm256_castps256_ps128(v)), x_h = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    const __m256d d_l = _mm256_sub_pd(x_l, mu), d_h = _mm256_sub_pd(x_h, mu);
    s_l = _mm256_add_pd(s_l, d_l);
    s_h = _mm256_add_pd(s_h, d_h);
    sq_l = _mm256_fmadd_pd(d_l, d_l, sq_l);
    sq_h = _mm256_fmadd_pd(d_h, d_h, sq_h);
    a_l = _mm256_add_pd(a_l, _mm256_andnot_pd(sign, x_l));
    a_h = _mm256_add_pd(a_h, _mm256_andnot_pd(sign, x_h));
  }
  Sweep r;
  alignas(32) float lo8[8], hi8[8], am8[8];
  alignas(32) double s4[2][4], sq4[2][4], a4[2][4];
  _mm256_store_ps(lo8, lo);
  _mm256_store_ps(hi8, hi);
  _mm256_store_ps(am8, am);
  _mm256_store_pd(s4[0], s_l), _mm256_store_pd(s4[1], s_h);
  _mm256_store_pd(sq4[0], sq_l), _mm256_store_pd(sq4[1], sq_h);
  _mm256_store_pd(a4[0], a_l), _mm256_store_pd(a4[1], a_h);
  for (int k = 0; k < 8; ++k) {
    r.lo = std::min(r.lo, lo8[k]);
    r.hi = std::max(r.hi, hi8[k]);
    r.abs_max = std::max(r.abs_max, am8[k]);
    r.sum += s4[k / 4][k % 4];
    r.sum_sq += sq4[k / 4][k % 4];
    r.abs_sum += a4[k / 4][k % 4];
  }
  r.zeros = zeros;
  r.non_finite = non_finite;
#else
Sweep sweep(const float* x, size_t n, double shift) {
  V8 lo = V8{} + INFINITY, hi = V8{} - INFINITY, am = V8{};   // NOLINT
  const D8 mu = D8{} + shift;
  D8 s = D8{}, sq = D8{}, a = D8{};
  I8 zeros = I8{}, non_finite = I8{};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const V8 v = load8(x + i);
    const I8 b = (I8)v;   // NOLINT: a vector bit cast
    const I8 ab = b & kAbsBits;
    const V8 av = (V8)ab;   // NOLINT: a vector bit cast
    non_finite -= (b & kExpBits) == kExpBits;
    zeros -= v == 0.0f;
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    am = av > am ? av : am;
    const D8 d = __builtin_convertvector(v, D8) - mu;
    s += d;
    sq += d * d;
    a += __builtin_convertvector(av, D8);
  }
  Sweep r;
  for (int k = 0; k < 8; ++k) {
    r.lo = std::min(r.lo, lo[k]);
    r.hi = std::max(r.hi, hi[k]);
    r.abs_max = std::max(r.abs_max, am[k]);
    r.sum += s[k];
    r.sum_sq += sq[k];
    r.abs_sum += a[k];
    r.zeros += static_cast<uint32_t>(zeros[k]);
    r.non_finite += static_cast<uint32_t>(non_finite[k]);
  }
#endif
  for (; i < n; ++i) {
    const float v = x[i], av = std::fabs(v);
    const double d = v - shift;
    r.non_finite += !std::isfinite(v);
    r.zeros += v == 0;
    r.lo = v < r.lo ? v : r.lo;
    r.hi = v > r.hi ? v : r.hi;
    r.abs_max = av > r.abs_max ? av : r.abs_max;
    r.sum += d;
    r.sum_sq += d * d;
    r.abs_sum += av;
  }
  return r;
}

// The shift for a chunk: the mean of its first values (finite ones; 0 when there are none).
double chunk_shift(const float* x, size_t n) {
  double sum = 0;
  size_t k = 0;
  for (size_t i = 0; i < std::min<size_t>(n, 64); ++i)
    if (std::isfinite(x[i])) sum += x[i], ++k;
  return k > 0 ? sum / static_cast<double>(k) : 0;
}

// The log2 histogram of an all-finite chunk with `zeros` zeros: counts of biased exponents, folded.
void add_exponents(const float* x, size_t n, uint64_t zeros, Worker& w) {
  std::memset(w.exponents, 0, sizeof w.exponents);
  size_t i = 0;
  for (; i + kCopies <= n; i += kCopies)
    for (size_t k = 0; k < kCopies; ++k) ++w.exponents[k][(bits_of(x[i + k]) >> 23) & 0xff];
  for (; i < n; ++i) ++w.exponents[0][(bits_of(x[i]) >> 23) & 0xff];
  for (int e = 0; e < 255; ++e) {
    uint64_t c = 0;
    for (size_t k = 0; k < kCopies; ++k) c += w.exponents[k][e];
    // exponent 0: zeros and subnormals; a subnormal |x| < 2^-126 is below the first bin's range
    w.log[static_cast<size_t>(exponent_bin(e))] += e == 0 ? c - zeros : c;
  }
}

// Pass 1 over a chunk holding NaN or Inf: value by value.
void scan_careful(const float* x, size_t n, uint64_t pos0, size_t top_k, Worker& w, ChunkSummary& c) {
  double sum = 0, abs_sum = 0;
  uint64_t finite = 0;
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (std::isnan(v)) {
      ++w.nan;
      continue;
    }
    if (std::isinf(v)) {
      ++(v > 0 ? w.pos_inf : w.neg_inf);
      continue;
    }
    const float a = std::fabs(v);
    ++finite;
    sum += v;
    abs_sum += a;
    w.zeros += v == 0.0f;
    c.lo = v < c.lo ? v : c.lo;
    c.hi = v > c.hi ? v : c.hi;
    if (a != 0.0f) ++w.log[static_cast<size_t>(log_bin(a))];
    if (top_k > 0) offer(w.heap, {a, pos0 + i, v}, top_k);
  }
  c.non_finite = true;
  c.finite = finite;
  c.abs_sum = abs_sum;
  if (finite == 0) return;
  c.mean = sum / static_cast<double>(finite);
  for (size_t i = 0; i < n; ++i)
    if (std::isfinite(x[i])) c.m2 += (x[i] - c.mean) * (x[i] - c.mean);
}

// The linear histogram's bin of a finite x is the per-value formula exact(). A multiply by
// bins / width is within a few units in the last place of the formula's quotient, so where the
// products with a margin of 1e-14 either side truncate to the same integer, that integer is the bin;
// the rare x that close to a bin edge (or equal to the max) takes the formula itself.
struct Binning {
  double lo = 0, width = 0, scale = 0;
  int bins = 0;

  Binning(float min, float max, int n_bins) : lo(min), width(static_cast<double>(max) - min), bins(n_bins) {
    scale = width > 0 ? bins / width : 0;
  }
  int exact(float x) const {
    const int b = width > 0 ? static_cast<int>((x - lo) / width * bins) : 0;
    return std::clamp(b, 0, bins - 1);
  }
};

// Counts of (linear bin, log2 bin) pairs, as the 16-level types keep them: one increment a value feeds
// both histograms. Column kZeroColumn holds zeros (in the linear histogram, not the log2 one). Four
// copies, used in turn, so that neighbouring values with the same pair do not wait on each other's
// store.
constexpr int kPairCols = 64, kZeroColumn = 63;
static_assert(kLogBins <= kZeroColumn);
constexpr size_t kPairCopies = 4;   // copies of the table kept over chunks (pair_table)

// The AVX-512 kernels store each step's table indices as one vector and read them back lane by lane
// for the increments kPendingSteps - 1 steps later, from a ring of kPendingSteps: a lane's load
// waits while the vector's store is still queued. With the next step's turn (a ring of 2) those
// loads took a fifth of scan_q4k_avx512's samples, and a Q4_K tensor 15 % more user time, a Q6_K
// one 21 % more, than with 4 (8: no better; interleaved runs).
[[maybe_unused]] constexpr size_t kPendingSteps = 4;
// After `stored` steps, the first whose increments are still pending (made at the chunk's end).
[[maybe_unused]] constexpr size_t first_pending(size_t stored) {
  return stored >= kPendingSteps ? stored - kPendingSteps + 1 : 0;
}

// The pair table a worker keeps over its chunks (`bins` linear bins), folded when its counts could
// overflow and after the pass (fold_pairs).
uint32_t* pair_table(Worker& w, int bins, size_t values, bool binned);

// The pairs of an all-finite chunk, binned over `b`: its linear bins as histogram_chunk finds them
// (a checked multiply, else the formula), its log2 bins from the exponent (a subnormal to bin 0).
// The pair table's column of a finite x's bits: its log2 bin (a subnormal to bin 0), or kZeroColumn.
int32_t log_column(uint32_t bits) {
  const int32_t e = static_cast<int32_t>((bits >> 23) & 0xff) - (127 + kLogMinExp);
  return (bits & kAbsBits) == 0 ? kZeroColumn : std::clamp(e, 0, kLogBins - 1);
}

// The increments of one step of kLanes values: lane l's table index at[l] where bit l of `sure` says
// the multiply binned it, else the formula's bin (copy l mod 4); straight-line increments when every
// lane is sure.
template <int kLanes>
[[maybe_unused]] inline void add_sure_pairs(uint32_t* pairs, const int32_t* at, const float* xs, uint32_t sure,
                                            const Binning& b) {
  if (sure == (1u << kLanes) - 1) {
#pragma GCC unroll 16
    for (int l = 0; l < kLanes; ++l) ++pairs[at[l]];
    return;
  }
  const int32_t copy = b.bins * kPairCols;
  for (int l = 0; l < kLanes; ++l)
    ++pairs[sure >> l & 1 ? at[l] : (l & 3) * copy + b.exact(xs[l]) * kPairCols + log_column(bits_of(xs[l]))];
}

#if defined(__AVX2__) && defined(__FMA__)
// log_column of 8 finite |x| bit patterns.
inline __m256i log_columns_avx2(__m256i abits) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(abits, 23), _mm256_set1_epi32(127 + kLogMinExp));
  return _mm256_blendv_epi8(_mm256_min_epi32(_mm256_max_epi32(e, zero), _mm256_set1_epi32(kLogBins - 1)),
                            _mm256_set1_epi32(kZeroColumn), _mm256_cmpeq_epi32(abits, zero));
}

double hsum4(__m256d v) {
  alignas(32) double x[4];
  _mm256_store_pd(x, v);
  return (x[0] + x[1]) + (x[2] + x[3]);
}
float hmin8(__m256 v) {
  alignas(32) float x[8];
  _mm256_store_ps(x, v);
  float r = x[0];
  for (int k = 1; k < 8; ++k) r = x[k] < r ? x[k] : r;
  return r;
}
float hmax8(__m256 v) {
  alignas(32) float x[8];
  _mm256_store_ps(x, v);
  float r = x[0];
  for (int k = 1; k < 8; ++k) r = x[k] > r ? x[k] : r;
  return r;
}

// The AVX2 kernels' last step, as close_avx512_chunk's: the chunk's bounds and the worker's zeros
// from their lanes, its moments from the lanes' sums of x - shift (close_level_chunk). The caller
// sets c.values and c.finite.
void close_avx2_chunk(ChunkSummary& c, Worker& w, __m256 lo, __m256 hi, __m256i zeros, double shift, __m256d s,
                      __m256d sq, __m256d a) {
  alignas(32) int32_t z[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(z), zeros);
  for (int32_t k : z) w.zeros += static_cast<uint32_t>(k);
  c.lo = std::min(c.lo, hmin8(lo));
  c.hi = std::max(c.hi, hmax8(hi));
  close_level_chunk(c, w, shift, hsum4(s), hsum4(sq), hsum4(a));
}
#endif

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
// bin_pairs on AVX-512, 16 values a step: each value's table index in one vector (the linear bin by a
// float multiply: (x - lo) * (bins / width) in float is within 3 * 2^-24 of the real quotient and the
// formula's double quotient within 2^-50 of it, so where the float quotient times 1 -+ 1e-6
// truncates to one bin in range, that is the formula's bin; other lanes go to the formula),
// and the increments of each step made three steps later (kPendingSteps), when its stores have
// reached the cache.
void bin_pairs_avx512(const float* x, size_t n, const Binning& b, uint32_t* pairs) {
  const int32_t copy = b.bins * kPairCols;
  const __m512 lo = _mm512_set1_ps(static_cast<float>(b.lo)), scale = _mm512_set1_ps(static_cast<float>(b.scale));
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i lane_copy = _mm512_mullo_epi32(_mm512_and_si512(lane, _mm512_set1_epi32(3)), _mm512_set1_epi32(copy));
  const __m512i last = _mm512_set1_epi32(b.bins - 1), abs_bits = _mm512_set1_epi32(kAbsBits);
  const __m512i log_bias = _mm512_set1_epi32(127 + kLogMinExp);
  alignas(64) int32_t index[kPendingSteps][16];
  uint32_t sure_of[kPendingSteps] = {};   // the lanes of each step binned by the multiply
  auto add = [&](size_t step) {
    add_sure_pairs<16>(pairs, index[step % kPendingSteps], x + 16 * step, sure_of[step % kPendingSteps], b);
  };
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __m512 q = _mm512_min_ps(_mm512_mul_ps(_mm512_sub_ps(v, lo), scale), _mm512_set1_ps(1e9f));   // NaN: 1e9
    const __m512i below = _mm512_cvttps_epi32(_mm512_mul_ps(q, _mm512_set1_ps(1 - 1e-6f)));
    const __m512i above = _mm512_cvttps_epi32(_mm512_mul_ps(q, _mm512_set1_ps(1 + 1e-6f)));
    const __mmask16 sure = _mm512_cmpeq_epi32_mask(below, above) & _mm512_cmple_epu32_mask(above, last);
    const __m512i abits = _mm512_and_si512(_mm512_castps_si512(v), abs_bits);
    __m512i log_bin = _mm512_sub_epi32(_mm512_srli_epi32(abits, 23), log_bias);
    log_bin = _mm512_min_epi32(_mm512_max_epi32(log_bin, _mm512_setzero_si512()), _mm512_set1_epi32(kLogBins - 1));
    log_bin = _mm512_mask_mov_epi32(log_bin, _mm512_cmpeq_epi32_mask(abits, _mm512_setzero_si512()),
                                    _mm512_set1_epi32(kZeroColumn));
    const __m512i at = _mm512_add_epi32(_mm512_add_epi32(lane_copy, _mm512_slli_epi32(above, 6)), log_bin);
    const size_t step = i / 16;
    _mm512_store_si512(index[step % kPendingSteps], at);
    sure_of[step % kPendingSteps] = sure;
    asm volatile("" ::: "memory");                                  // the reads below stay scalar loads
    if (step + 1 >= kPendingSteps) add(step + 1 - kPendingSteps);   // the step kPendingSteps - 1 before this one
  }
  for (size_t old = first_pending(i / 16); old < i / 16; ++old) add(old);
  for (; i < n; ++i) ++pairs[(i & 3) * copy + b.exact(x[i]) * kPairCols + log_column(bits_of(x[i]))];
}
#endif

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
// bin_pairs_avx512 on AVX2, 8 values a step (the generic loop below, in doubles, took 1.8 ns a value
// there).
void bin_pairs_avx2(const float* x, size_t n, const Binning& b, uint32_t* pairs) {
  const int32_t copy = b.bins * kPairCols;
  const __m256 lo = _mm256_set1_ps(static_cast<float>(b.lo)), scale = _mm256_set1_ps(static_cast<float>(b.scale));
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i lane_copy = _mm256_mullo_epi32(_mm256_and_si256(lane, _mm256_set1_epi32(3)), _mm256_set1_epi32(copy));
  const __m256i last = _mm256_set1_epi32(b.bins - 1), abs_bits = _mm256_set1_epi32(kAbsBits);
  alignas(32) int32_t index[kPendingSteps][8];
  uint32_t sure_of[kPendingSteps] = {};   // the lanes of each step binned by the multiply
  auto add = [&](size_t step) {
    add_sure_pairs<8>(pairs, index[step % kPendingSteps], x + 8 * step, sure_of[step % kPendingSteps], b);
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 q = _mm256_min_ps(_mm256_mul_ps(_mm256_sub_ps(v, lo), scale), _mm256_set1_ps(1e9f));   // NaN: 1e9
    const __m256i below = _mm256_cvttps_epi32(_mm256_mul_ps(q, _mm256_set1_ps(1 - 1e-6f)));
    const __m256i above = _mm256_cvttps_epi32(_mm256_mul_ps(q, _mm256_set1_ps(1 + 1e-6f)));
    const uint32_t sure = static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(
        _mm256_and_si256(_mm256_cmpeq_epi32(below, above),
                         _mm256_cmpeq_epi32(_mm256_min_epu32(above, last), above)))));   // above <= last
    const __m256i abits = _mm256_and_si256(_mm256_castps_si256(v), abs_bits);
    const __m256i at =
        _mm256_add_epi32(_mm256_add_epi32(lane_copy, _mm256_slli_epi32(above, 6)), log_columns_avx2(abits));
    const size_t step = i / 8;
    _mm256_store_si256(reinterpret_cast<__m256i*>(index[step % kPendingSteps]), at);
    sure_of[step % kPendingSteps] = sure;
    asm volatile("" ::: "memory");                                  // the reads below stay scalar loads
    if (step + 1 >= kPendingSteps) add(step + 1 - kPendingSteps);   // the step kPendingSteps - 1 before this one
  }
  for (size_t old = first_pending(i / 8); old < i / 8; ++old) add(old);
  for (; i < n; ++i) ++pairs[(i & 3) * copy + b.exact(x[i]) * kPairCols + log_column(bits_of(x[i]))];
}
#endif

void bin_pairs(const float* x, size_t n, const Binning& b, Worker& w) {
  uint32_t* pairs = pair_table(w, b.bins, n, true);
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
  bin_pairs_avx512(x, n, b, pairs);
#elif defined(__AVX2__) && defined(__FMA__)
  bin_pairs_avx2(x, n, b, pairs);
#else
  const size_t copy = static_cast<size_t>(b.bins) * kPairCols;
  constexpr size_t kStep = 256;
  constexpr double kBelow = 1 - 1e-14, kAbove = 1 + 1e-14;
  const double lo = b.lo, scale = b.scale;
  const int last = b.bins - 1;
  int32_t lin[kStep], log2[kStep];
  for (size_t i0 = 0; i0 < n; i0 += kStep) {
    const size_t m = std::min(kStep, n - i0);
    const float* xs = x + i0;
    for (size_t j = 0; j < m; ++j) {   // vectorised: no branch, no table
      const double q = (xs[j] - lo) * scale;
      const int32_t below = static_cast<int32_t>(q * kBelow), above = static_cast<int32_t>(q * kAbove);
      lin[j] = below == above && above <= last ? above : -1;
      log2[j] = log_column(bits_of(xs[j]));
    }
    for (size_t j = 0; j < m; ++j) {
      const int k = lin[j] >= 0 ? lin[j] : b.exact(xs[j]);
      ++pairs[(j % kPairCopies) * copy + static_cast<size_t>(k) * kPairCols + static_cast<size_t>(log2[j])];
    }
  }
#endif
}

// The min and max of the finite values among n decoded ones.
void finite_bounds(const float* x, size_t n, float& lo_out, float& hi_out) {
  V8 lo = V8{} + INFINITY, hi = V8{} - INFINITY;   // NOLINT
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const V8 v = load8(x + i);
    const I8 finite = ((I8)v & kExpBits) != kExpBits;   // NOLINT: a vector bit cast
    lo = (finite & (v < lo)) ? v : lo;
    hi = (finite & (v > hi)) ? v : hi;
  }
  float l = INFINITY, h = -INFINITY;
  for (int k = 0; k < 8; ++k) {
    l = lo[k] < l ? lo[k] : l;
    h = hi[k] > h ? hi[k] : h;
  }
  for (; i < n; ++i)
    if (std::isfinite(x[i])) {
      l = x[i] < l ? x[i] : l;
      h = x[i] > h ? x[i] : h;
    }
  lo_out = std::min(lo_out, l);
  hi_out = std::max(hi_out, h);
}

void histogram_chunk(const float* x, size_t n, bool has_non_finite, const Binning& b, Worker& w);

// Pass 1 over a decoded chunk; with `binning` (the exact bounds, known before) its linear histogram
// too.
void scan_chunk(const float* x, size_t n, uint64_t pos0, size_t top_k, const Binning* binning, Worker& w,
                ChunkSummary& c) {
  c.values = n;
  const double shift = chunk_shift(x, n);
  const Sweep sw = sweep(x, n, shift);
  if (sw.non_finite > 0) {
    scan_careful(x, n, pos0, top_k, w, c);
    if (binning != nullptr) histogram_chunk(x, n, true, *binning, w);
  }
  if (!c.non_finite) {
    const double count = static_cast<double>(n);
    c.finite = n;
    c.mean = shift + sw.sum / count;
    c.m2 = std::max(0.0, sw.sum_sq - sw.sum * sw.sum / count);
    c.abs_sum = sw.abs_sum;
    c.lo = sw.lo;
    c.hi = sw.hi;
    w.zeros += sw.zeros;
    if (binning != nullptr) bin_pairs(x, n, *binning, w);
    else add_exponents(x, n, sw.zeros, w);
    if (top_k > 0 && (w.heap.size() < top_k || sw.abs_max > w.heap.front().abs))
      offer_values(w.heap, x, n, pos0, top_k);
  }
  w.lo = std::min(w.lo, c.lo);
  w.hi = std::max(w.hi, c.hi);
}

void histogram_chunk(const float* x, size_t n, bool has_non_finite, const Binning& b, Worker& w) {
  uint64_t* h = w.hist.data();
  const size_t stride = static_cast<size_t>(b.bins);
  if (has_non_finite) {
    for (size_t i = 0; i < n; ++i)
      if (std::isfinite(x[i])) ++h[static_cast<size_t>(b.exact(x[i]))];
    return;
  }
  constexpr size_t kStep = 256;
  constexpr double kBelow = 1 - 1e-14, kAbove = 1 + 1e-14;
  const double lo = b.lo, scale = b.scale;
  const int last = b.bins - 1;
  int32_t idx[kStep];
  for (size_t i0 = 0; i0 < n; i0 += kStep) {
    const size_t m = std::min(kStep, n - i0);
    const float* xs = x + i0;
    for (size_t j = 0; j < m; ++j) {   // vectorised: no branch, no table
      const double q = (xs[j] - lo) * scale;
      const int32_t below = static_cast<int32_t>(q * kBelow), above = static_cast<int32_t>(q * kAbove);
      idx[j] = below == above && above <= last ? above : -1;
    }
    for (size_t j = 0; j < m; ++j) {
      const int k = idx[j] >= 0 ? idx[j] : b.exact(xs[j]);
      ++h[(j % kCopies) * stride + static_cast<size_t>(k)];
    }
  }
}

// ---- Level forms (core/decode/level_forms.hpp): a sub-block's 32 values are 16 levels, so each
// level's count gives its share of every statistic; the float work is per level, not per value.

typedef float V16 __attribute__((vector_size(64)));
typedef int32_t I16 __attribute__((vector_size(64)));

// Horizontal reductions (GCC has no __builtin_reduce_*): AVX-512's where the build has it.
#if defined(__AVX512F__)
__m512i as_m512i(I16 v) { return reinterpret_cast<__m512i&>(v); }
bool any16(I16 v) { return _mm512_test_epi32_mask(as_m512i(v), as_m512i(v)) != 0; }
#else
template <class T, class V, int N, class F>
T fold(V v, T init, F f) {
  T r = init;
  for (int k = 0; k < N; ++k) r = f(r, static_cast<T>(v[k]));
  return r;
}
bool any16(I16 v) {
  return fold<int32_t, I16, 16>(v, 0, [](int32_t x, int32_t y) { return x | y; }) != 0;
}
#endif
// Per chunk or block, and not _mm512_reduce_*_p[sd]: GCC 12 warns inside those.
float min16(V16 v) {
  float r = INFINITY;
  for (int k = 0; k < 16; ++k) r = v[k] < r ? v[k] : r;
  return r;
}
float max16(V16 v) {
  float r = -INFINITY;
  for (int k = 0; k < 16; ++k) r = v[k] > r ? v[k] : r;
  return r;
}
int32_t sum16(I16 v) {
  int32_t r = 0;
  for (int k = 0; k < 16; ++k) r += v[k];
  return r;
}
double sum8(D8 v) {
  double r = 0;
  for (int k = 0; k < 8; ++k) r += v[k];
  return r;
}

I16 load16i(const int32_t* p);

// The count of each code 0..15 among 32 codes, code l's in lane l. With AVX-512: the codes' four bit
// planes as 32-bit masks, lane l ANDs each plane or its complement as l's bits say, and counts the
// bits left (vpopcntd); else one compare a code.
inline I16 count_codes32(const uint8_t* codes) {
#if defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VPOPCNTDQ__)
  const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes));
  I16 m = I16{} - 1;
  for (int k = 0; k < 4; ++k) {
    const uint32_t plane = _mm256_test_epi8_mask(c, _mm256_set1_epi8(static_cast<char>(1 << k)));
    const I16 lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const I16 want_clear = ((lane >> k) & 1) - 1;   // -1 where bit k of l is 0
    m &= (I16{} + static_cast<int32_t>(plane)) ^ want_clear;
  }
  __m512i planes;
  std::memcpy(&planes, &m, sizeof m);
  const __m512i counts = _mm512_popcnt_epi32(planes);
  std::memcpy(&m, &counts, sizeof m);
  return m;
#else
  alignas(64) int32_t counts[levels::kLevels];
#if defined(__AVX2__)
  const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes));
  for (int l = 0; l < levels::kLevels; ++l)
    counts[l] = __builtin_popcount(
        static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(c, _mm256_set1_epi8(static_cast<char>(l))))));
#else
  std::fill(counts, counts + levels::kLevels, 0);
  for (int i = 0; i < levels::kSubElems; ++i) ++counts[codes[i]];
#endif
  return load16i(counts);
#endif
}

V16 load16(const float* p) {
  V16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[maybe_unused]] I16 load16i_bits(const float* p) {
  I16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[maybe_unused]] I16 load16i(const int32_t* p) {
  I16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
typedef float F8 __attribute__((vector_size(32)));
D8 low8(V16 v) { return __builtin_convertvector(F8(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)), D8); }
D8 high8(V16 v) { return __builtin_convertvector(F8(__builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15)), D8); }
D8 low8(I16 v) { return __builtin_convertvector(I8(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)), D8); }
D8 high8(I16 v) { return __builtin_convertvector(I8(__builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15)), D8); }

// The linear bins of 16 levels, as histogram_chunk bins a value: the checked multiply, else the formula.
inline __attribute__((always_inline)) I16 bin_levels(V16 v, const Binning& b) {
  constexpr double kBelow = 1 - 1e-14, kAbove = 1 + 1e-14;
  const D8 lo = D8{} + b.lo, scale = D8{} + b.scale;
  const D8 q0 = (low8(v) - lo) * scale, q1 = (high8(v) - lo) * scale;
  const I8 below0 = __builtin_convertvector(q0 * kBelow, I8), above0 = __builtin_convertvector(q0 * kAbove, I8);
  const I8 below1 = __builtin_convertvector(q1 * kBelow, I8), above1 = __builtin_convertvector(q1 * kAbove, I8);
  const I16 below = __builtin_shufflevector(below0, below1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  I16 bin = __builtin_shufflevector(above0, above1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const I16 unsure = (below != bin) | (bin < 0) | (bin >= b.bins);
  if (any16(unsure))
    for (int k = 0; k < 16; ++k)
      if (unsure[k]) bin[k] = b.exact(v[k]);
  return bin;
}

// A level form's pairs (kPairCols) are counted per chunk; its four copies are used by level mod 4
// (8-12 % of the scan on one thread, interleaved A/B runs).

// A level form's block (its `n` values are levels lv[16 * sub-block + code]): the NaN and Inf among
// them counted, the chunk marked as holding them.
void count_non_finite_levels(const float* lv, const uint8_t* codes, size_t n, Worker& w, ChunkSummary& c) {
  for (size_t i = 0; i < n; ++i) {
    const float x = lv[levels::kLevels * (i / levels::kSubElems) + codes[i]];
    if (std::isnan(x)) ++w.nan;
    else if (std::isinf(x)) ++(x > 0 ? w.pos_inf : w.neg_inf);
  }
  c.non_finite = true;
}

// The same block's finite values offered as outliers, value i at position p0 + i.
void offer_levels(std::vector<TopItem>& heap, const float* lv, const uint8_t* codes, size_t n, uint64_t p0, size_t k) {
  for (size_t i = 0; i < n; ++i) {
    const float x = lv[levels::kLevels * (i / levels::kSubElems) + codes[i]], ax = std::fabs(x);
    if (std::isfinite(x) && (heap.size() < k || ax > heap.front().abs)) offer(heap, {ax, p0 + i, x}, k);
  }
}

// A chunk's pair table (w.pairs: four copies of `bins` rows) into the linear histogram (when binned)
// and, in pass 1 (kFull), the log2 histogram.
template <bool kFull>
void fold_chunk_pairs(Worker& w, int bins, bool binned) {
  const size_t copy = static_cast<size_t>(bins) * kPairCols;
  const uint32_t* pairs = w.pairs.data();
  for (int i = 0; i < bins; ++i) {
    const uint32_t* row = pairs + static_cast<size_t>(i) * kPairCols;
    uint64_t total = 0;
    for (int j = 0; j < kPairCols; ++j) {
      const uint32_t n = row[j] + row[copy + j] + row[2 * copy + j] + row[3 * copy + j];
      total += n;
      if (kFull && j < kLogBins) w.log[static_cast<size_t>(j)] += n;
    }
    if (binned) w.hist[static_cast<size_t>(i)] += total;
  }
}

// Pass 1 (kFull) or the linear histogram alone (pass 2) over a chunk of whole blocks of a level
// form. `binning`, when set, bins the histogram in the same pass.
template <class Form, bool kFull>
void scan_levels(const uint8_t* blocks, size_t n_blocks, uint64_t pos0, size_t top_k, const Binning* binning, Worker& w,
                 ChunkSummary& c) {
  constexpr int kSubs = Form::kSubs, kL = levels::kLevels;
  constexpr size_t kElems = size_t{kSubs} * levels::kSubElems;
  constexpr size_t kBytes = kTypeTable[static_cast<size_t>(Form::kType)].block_bytes;
  static_assert(kTypeTable[static_cast<size_t>(Form::kType)].block_elems == kElems);
  alignas(64) float lv[kSubs * kL];
  alignas(64) uint8_t codes[kElems];
  alignas(64) int32_t pair[kL], pair_cnt[kL];
  const int bins = binning != nullptr ? binning->bins : 1;
  w.pairs.assign(4 * static_cast<size_t>(bins) * kPairCols, 0);
  const size_t copy = static_cast<size_t>(bins) * kPairCols;
  uint32_t* pairs = w.pairs.data();
  const I16 exp_bits = I16{} + kExpBits, abs_bits = I16{} + kAbsBits;
  V16 lo = V16{} + INFINITY, hi = V16{} - INFINITY;
  I16 zeros = I16{};
  D8 s = D8{}, sq = D8{}, a = D8{};
  double shift = 0;
  I16 finite = I16{};
  for (size_t blk = 0; blk < n_blocks; ++blk) {
    const uint8_t* b = blocks + blk * kBytes;
    Form::levels(b, lv);
    Form::codes(b, codes);
    V16 block_abs_max = V16{};
    if (kFull) {   // NaN and Inf levels: counted here, value by value (rare), then left out below
      I16 non_finite = I16{};
      for (int sub = 0; sub < kSubs; ++sub) non_finite |= (load16i_bits(lv + kL * sub) & exp_bits) == exp_bits;
      if (any16(non_finite)) count_non_finite_levels(lv, codes, kElems, w, c);
    }
    for (int sub = 0; sub < kSubs; ++sub) {
      I16 n = count_codes32(codes + levels::kSubElems * sub);
      const V16 v0 = load16(lv + kL * sub);
      const I16 bits = (I16)v0;   // NOLINT: a vector bit cast
      const I16 non_finite = (bits & exp_bits) == exp_bits;
      n &= ~non_finite;
      const V16 v = (V16)(bits & ~non_finite);   // NOLINT: non-finite levels (never counted) read as 0
      const I16 is_zero = v == 0;
      // log2 bins: zeros to their own column, a subnormal level (exponent 0) to bin 0
      I16 log_bin = ((bits >> 23) & 0xff) - (127 + kLogMinExp);
      log_bin = log_bin < 0 ? 0 : log_bin;
      log_bin = log_bin > kLogBins - 1 ? kLogBins - 1 : log_bin;
      log_bin = is_zero ? kZeroColumn : log_bin;
      const I16 lin_bin = binning != nullptr ? bin_levels(v, *binning) : I16{};
      const I16 p = lin_bin * kPairCols + log_bin;
      std::memcpy(pair, &p, sizeof p);
      std::memcpy(pair_cnt, &n, sizeof n);
      for (int l = 0; l < kL; ++l) pairs[(l & 3) * copy + pair[l]] += static_cast<uint32_t>(pair_cnt[l]);
      if (!kFull) continue;
      const I16 present = n > 0;
      lo = (present & (v < lo)) ? v : lo;
      hi = (present & (v > hi)) ? v : hi;
      zeros += is_zero & n;
      const V16 av = (V16)(bits & abs_bits & ~non_finite);   // NOLINT: |level|
      block_abs_max = (present & (av > block_abs_max)) ? av : block_abs_max;
      const D8 n0 = low8(n), n1 = high8(n);
      if (blk == 0 && sub == 0) {   // the shift: the mean of the first sub-block's finite values
        const int total = sum16(n);
        shift = total > 0 ? sum8(n0 * low8(v) + n1 * high8(v)) / total : 0;
      }
      const D8 d0 = low8(v) - shift, d1 = high8(v) - shift;
      s += n0 * d0 + n1 * d1;
      sq += n0 * d0 * d0 + n1 * d1 * d1;
      a += n0 * low8(av) + n1 * high8(av);
      finite += n;
    }
    if (!kFull || top_k == 0) continue;
    const float block_max = max16(block_abs_max);
    if (w.heap.size() < top_k || block_max > w.heap.front().abs)
      offer_levels(w.heap, lv, codes, kElems, pos0 + blk * kElems, top_k);
  }
  fold_chunk_pairs<kFull>(w, bins, binning != nullptr);
  if (!kFull) return;
  c.values = n_blocks * kElems;
  c.finite = static_cast<uint64_t>(sum16(finite));
  c.lo = min16(lo);
  c.hi = max16(hi);
  w.zeros += static_cast<uint64_t>(sum16(zeros));
  close_level_chunk(c, w, shift, sum8(s), sum8(sq), sum8(a));
}

#if defined(__AVX2__) && defined(__FMA__)
#define AKVIEW_STATS_LEVELS_AVX2 1
// ---- scan_levels on AVX2 (and wherever AVX2 is, AVX-512 builds included: on a Zen 4 it is as fast
// as the generic kernel's 16-lane vectors, and GCC lowers those to scalar spills on AVX2 builds, 12 x
// slower there). A sub-block's 16 levels are two 8-lane halves: the count of each code from its four
// bit planes (vpmovmskb of the codes shifted, lane l ANDs each plane or its complement as l's bits
// say, a popcount by nibble table), the linear bin by a float multiply checked against a margin (as
// bin_levels_f32 below), the log2 bin from the exponent, and the double sums. Same results as
// scan_levels: the tables, bounds, counts and outliers identical, the sums within the documented
// tolerance.

// The number of set bits of each 32-bit lane.
inline __m256i popcount_epi32_avx2(__m256i v) {
  const __m256i table =
      _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i bytes = _mm256_add_epi8(_mm256_shuffle_epi8(table, _mm256_and_si256(v, low4)),
                                        _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low4)));
  return _mm256_madd_epi16(_mm256_maddubs_epi16(bytes, _mm256_set1_epi8(1)), _mm256_set1_epi16(1));
}

template <class Form, bool kFull>
void scan_levels_avx2(const uint8_t* blocks, size_t n_blocks, uint64_t pos0, size_t top_k, const Binning* binning,
                      Worker& w, ChunkSummary& c) {
  constexpr int kSubs = Form::kSubs, kL = levels::kLevels;
  constexpr size_t kElems = size_t{kSubs} * levels::kSubElems;
  constexpr size_t kBytes = kTypeTable[static_cast<size_t>(Form::kType)].block_bytes;
  static_assert(kTypeTable[static_cast<size_t>(Form::kType)].block_elems == kElems);
  alignas(32) float lv[kSubs * kL];
  alignas(32) uint8_t codes[kElems];
  alignas(32) int32_t pair[kPendingSteps][kL], cnt[kPendingSteps][kL];   // the last sub-blocks' pairs, counts
  size_t stored = 0;
  const int bins = binning != nullptr ? binning->bins : 1;
  const int32_t copy = bins * kPairCols;
  w.pairs.assign(4 * static_cast<size_t>(copy), 0);
  uint32_t* pairs = w.pairs.data();

  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), one = _mm256_set1_epi32(1);
  __m256i want_clear[3];   // -1 in lane l where bit k of l is 0 (bit 3 tells the two halves apart)
  for (int k = 0; k < 3; ++k) want_clear[k] = _mm256_sub_epi32(_mm256_and_si256(_mm256_srli_epi32(lane, k), one), one);
  const __m256i copy_offset = _mm256_mullo_epi32(_mm256_and_si256(lane, _mm256_set1_epi32(3)), _mm256_set1_epi32(copy));
  const __m256 bin_lo = _mm256_set1_ps(binning != nullptr ? static_cast<float>(binning->lo) : 0.0f);
  const __m256 bin_scale = _mm256_set1_ps(binning != nullptr ? static_cast<float>(binning->scale) : 0.0f);
  const __m256i bin_last = _mm256_set1_epi32(bins - 1);
  const __m256 margin = _mm256_set1_ps(std::max(1e-4f, 4e-7f * static_cast<float>(bins)));
  const __m256i abs_bits = _mm256_set1_epi32(kAbsBits), exp_bits = _mm256_set1_epi32(kExpBits);
  const __m256i zero = _mm256_setzero_si256();
  const __m256 minus_zero = _mm256_set1_ps(-0.0f);
  const __m256d minus_zero_d = _mm256_set1_pd(-0.0);

  __m256 lo = _mm256_set1_ps(INFINITY), hi = _mm256_set1_ps(-INFINITY);
  __m256i zeros = zero, finite = zero;
  __m256d s = _mm256_setzero_pd(), sq = _mm256_setzero_pd(), a = _mm256_setzero_pd();
  double shift = 0;
  for (size_t blk = 0; blk < n_blocks; ++blk) {
    const uint8_t* b = blocks + blk * kBytes;
    Form::levels(b, lv);
    Form::codes(b, codes);
    __m256 block_abs_max = _mm256_setzero_ps();
    __m256i block_non_finite = zero;   // NaN and Inf levels: left out below, then counted value by value
    for (int sub = 0; sub < kSubs; ++sub) {
      // bit k of the 32 codes (bytes 0..15) as plane k: each byte's bit k moved to its top bit
      const __m256i cv = _mm256_load_si256(reinterpret_cast<const __m256i*>(codes + levels::kSubElems * sub));
      auto plane = [&](int k) {
        return _mm256_set1_epi32(_mm256_movemask_epi8(_mm256_sll_epi16(cv, _mm_cvtsi32_si128(7 - k))));
      };
      const __m256i p3 = plane(3);
      const __m256i low3 = _mm256_and_si256(
          _mm256_and_si256(_mm256_xor_si256(plane(0), want_clear[0]), _mm256_xor_si256(plane(1), want_clear[1])),
          _mm256_xor_si256(plane(2), want_clear[2]));
      __m256i n[2] = {popcount_epi32_avx2(_mm256_andnot_si256(p3, low3)),
                      popcount_epi32_avx2(_mm256_and_si256(p3, low3))};
      __m256 v[2];
      __m256i at[2];
      for (int h = 0; h < 2; ++h) {
        const __m256i raw = _mm256_load_si256(reinterpret_cast<const __m256i*>(lv + kL * sub + 8 * h));
        const __m256i non_finite = _mm256_cmpeq_epi32(_mm256_and_si256(raw, exp_bits), exp_bits);
        block_non_finite = _mm256_or_si256(block_non_finite, non_finite);
        n[h] = _mm256_andnot_si256(non_finite, n[h]);
        const __m256i bits = _mm256_andnot_si256(non_finite, raw);   // non-finite levels (never counted) read as 0
        v[h] = _mm256_castsi256_ps(bits);
        const __m256i abits = _mm256_and_si256(bits, abs_bits);
        const __m256i is_zero = _mm256_cmpeq_epi32(abits, zero);
        const __m256i present = _mm256_cmpgt_epi32(n[h], zero);
        const __m256i log_bin = log_columns_avx2(abits);   // zeros to their own column, subnormals to bin 0
        __m256i lin_bin = zero;
        if (binning != nullptr) {   // the margin check of bin_levels_f32, the rounding by vroundps
          const __m256 q = _mm256_mul_ps(_mm256_sub_ps(v[h], bin_lo), bin_scale);
          lin_bin = _mm256_min_epu32(_mm256_cvttps_epi32(q), bin_last);   // below 0: huge as unsigned, to the last
          const __m256 off = _mm256_sub_ps(q, _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
          const int unsure = _mm256_movemask_ps(_mm256_and_ps(
              _mm256_castsi256_ps(present), _mm256_cmp_ps(_mm256_andnot_ps(minus_zero, off), margin, _CMP_LT_OQ)));
          if (__builtin_expect(unsure != 0, 0)) {
            alignas(32) float x[8];
            alignas(32) int32_t k[8];
            _mm256_store_ps(x, v[h]);
            _mm256_store_si256(reinterpret_cast<__m256i*>(k), lin_bin);
            for (int l = 0; l < 8; ++l)
              if (unsure >> l & 1) k[l] = binning->exact(x[l]);
            lin_bin = _mm256_load_si256(reinterpret_cast<const __m256i*>(k));
          }
        }
        at[h] = _mm256_add_epi32(_mm256_add_epi32(_mm256_slli_epi32(lin_bin, 6), log_bin), copy_offset);
        if (!kFull) continue;
        const __m256 shown = _mm256_castsi256_ps(present);
        lo = _mm256_blendv_ps(lo, _mm256_min_ps(lo, v[h]), shown);
        hi = _mm256_blendv_ps(hi, _mm256_max_ps(hi, v[h]), shown);
        zeros = _mm256_add_epi32(zeros, _mm256_and_si256(is_zero, n[h]));
        finite = _mm256_add_epi32(finite, n[h]);
        block_abs_max =
            _mm256_blendv_ps(block_abs_max, _mm256_max_ps(block_abs_max, _mm256_castsi256_ps(abits)), shown);
      }
      // The increments of the sub-block three before this one (kPendingSteps), as scan_q4k_avx512.
      const size_t slot = stored % kPendingSteps;
      for (int h = 0; h < 2; ++h) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(pair[slot] + 8 * h), at[h]);
        _mm256_store_si256(reinterpret_cast<__m256i*>(cnt[slot] + 8 * h), n[h]);
      }
      asm volatile("" ::: "memory");
      if (++stored >= kPendingSteps) {
        const size_t old = stored % kPendingSteps;
        for (int l = 0; l < kL; ++l) pairs[pair[old][l]] += static_cast<uint32_t>(cnt[old][l]);
      }
      if (!kFull) continue;
      __m256d nd[4], vd[4];
      for (int h = 0; h < 2; ++h) {
        nd[2 * h] = _mm256_cvtepi32_pd(_mm256_castsi256_si128(n[h]));
        nd[2 * h + 1] = _mm256_cvtepi32_pd(_mm256_extracti128_si256(n[h], 1));
        vd[2 * h] = _mm256_cvtps_pd(_mm256_castps256_ps128(v[h]));
        vd[2 * h + 1] = _mm256_cvtps_pd(_mm256_extractf128_ps(v[h], 1));
      }
      if (blk == 0 && sub == 0) {   // the shift: the mean of the first sub-block's finite values
        __m256d t = _mm256_setzero_pd();
        for (int k = 0; k < 4; ++k) t = _mm256_add_pd(t, _mm256_mul_pd(nd[k], vd[k]));
        const double total = hsum4(_mm256_add_pd(_mm256_add_pd(nd[0], nd[1]), _mm256_add_pd(nd[2], nd[3])));
        shift = total > 0 ? hsum4(t) / total : 0;
      }
      const __m256d sh = _mm256_set1_pd(shift);
      for (int k = 0; k < 4; ++k) {
        const __m256d d = _mm256_sub_pd(vd[k], sh), nd_k = _mm256_mul_pd(nd[k], d);
        s = _mm256_add_pd(s, nd_k);
        sq = _mm256_fmadd_pd(nd_k, d, sq);
        a = _mm256_fmadd_pd(nd[k], _mm256_andnot_pd(minus_zero_d, vd[k]), a);
      }
    }
    if (!kFull) continue;
    if (__builtin_expect(!_mm256_testz_si256(block_non_finite, block_non_finite), 0))   // rare
      count_non_finite_levels(lv, codes, levels::kSubElems * kSubs, w, c);
    if (top_k == 0) continue;
    const float block_max = hmax8(block_abs_max);
    if (w.heap.size() < top_k || block_max > w.heap.front().abs)
      offer_levels(w.heap, lv, codes, kElems, pos0 + blk * kElems, top_k);
  }
  for (size_t k = first_pending(stored); k < stored; ++k)
    for (int l = 0; l < kL; ++l) pairs[pair[k % kPendingSteps][l]] += static_cast<uint32_t>(cnt[k % kPendingSteps][l]);
  fold_chunk_pairs<kFull>(w, bins, binning != nullptr);
  if (!kFull) return;
  alignas(32) int32_t f[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(f), finite);
  c.values = n_blocks * kElems;
  for (int32_t k : f) c.finite += static_cast<uint32_t>(k);
  close_avx2_chunk(c, w, lo, hi, zeros, shift, s, sq, a);
}
#endif

// The min and max over every finite level of the blocks (a bound on the values before they are read).
template <class Form>
void level_bounds(const uint8_t* blocks, size_t n_blocks, float& lo_out, float& hi_out) {
  constexpr int kN = Form::kSubs * levels::kLevels;
  constexpr size_t kBytes = kTypeTable[static_cast<size_t>(Form::kType)].block_bytes;
  alignas(64) float lv[kN];
  const I16 exp_bits = I16{} + kExpBits;
  V16 lo = V16{} + INFINITY, hi = V16{} - INFINITY;
  for (size_t blk = 0; blk < n_blocks; ++blk) {
    Form::levels(blocks + blk * kBytes, lv);
    for (int sub = 0; sub < Form::kSubs; ++sub) {
      const V16 v = load16(lv + levels::kLevels * sub);
      const I16 finite = ((I16)v & exp_bits) != exp_bits;   // NOLINT: a vector bit cast
      lo = (finite & (v < lo)) ? v : lo;
      hi = (finite & (v > hi)) ? v : hi;
    }
  }
  lo_out = std::min(lo_out, min16(lo));
  hi_out = std::max(hi_out, max16(hi));
}

// The pair table a fast kernel kept over a worker's chunks, into its log2 histogram and (when the
// pass was binned) its linear histogram; emptied.
void fold_pairs(Worker& w, bool binned) {
  if (w.fast_pairs.empty()) return;
  const size_t copy = w.fast_pairs.size() / kPairCopies, bins = copy / kPairCols;
  const uint32_t* pairs = w.fast_pairs.data();
  for (size_t i = 0; i < bins; ++i) {
    const uint32_t* row = pairs + i * kPairCols;
    uint64_t total = 0;
    for (int j = 0; j < kPairCols; ++j) {
      uint64_t n = 0;
      for (size_t k = 0; k < kPairCopies; ++k) n += row[k * copy + static_cast<size_t>(j)];
      total += n;
      if (j < kLogBins) w.log[static_cast<size_t>(j)] += n;
    }
    if (binned) w.hist[i] += total;
  }
  std::fill(w.fast_pairs.begin(), w.fast_pairs.end(), 0);
  w.fast_pairs_values = 0;
}

uint32_t* pair_table(Worker& w, int bins, size_t values, bool binned) {
  const size_t size = kPairCopies * static_cast<size_t>(bins) * kPairCols;
  if (w.fast_pairs.size() != size) w.fast_pairs.assign(size, 0);
  if (w.fast_pairs_values + values > UINT32_MAX) fold_pairs(w, binned);   // no count overflows
  w.fast_pairs_values += values;
  return w.fast_pairs.data();
}

// Q6_K blocks whose every d is finite (so is every value: |d * sc * (q - 32)| <= 65504 * 128 * 32) are
// scanned from the blocks where the build has a kernel for them (AVX-512, AVX2).
[[maybe_unused]] constexpr size_t kQ6kBytes = kTypeTable[static_cast<size_t>(TypeId::q6_k)].block_bytes;

[[maybe_unused]] bool q6k_scales_finite(const uint8_t* blocks, size_t n_blocks) {
  uint32_t bad = 0;
  for (size_t blk = 0; blk < n_blocks; ++blk)
    bad |= static_cast<uint32_t>((fp::load_u16(blocks + blk * kQ6kBytes + 208) & 0x7c00) == 0x7c00);
  return bad == 0;
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__) && \
    defined(__AVX512VPOPCNTDQ__) && defined(__AVX512VBMI__) && defined(__GFNI__)
#define AKVIEW_STATS_Q4K_AVX512 1
double hsum8(__m512d v) {
  alignas(64) double x[8];
  _mm512_store_pd(x, v);
  return ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
}

// ---- Q4_K on AVX-512: pass 1 of a chunk whose blocks all have finite d and dmin (so every level is
// finite: |d * sc| <= 65504 * 63). Per 32-value sub-block, in registers: its 16 levels (the
// decoder's (d * sc) * q - dmin * m), the count of each code from the four bit planes of its nibbles
// (a block's 32 planes made at once by a bit transpose, gf2p8affineqb, and a byte gather), the
// linear bin of each level by a float multiply checked against a margin, its log2 bin from the
// exponent, and the double sums. The (linear bin, log2 bin) counts go to the worker's pair table,
// kept over its chunks and folded once (fold_pairs).

// The linear bins of 16 finite levels. q = (x - lo) * (bins / width) in float is within 3 * 2^-24 * q
// (< 1.8e-7 * bins) of the real quotient and the per-value formula (Binning::exact, in double) within
// 2^-50 * q of it, so where q is farther than `margin` (max(1e-4, 4e-7 * bins)) from every integer,
// both truncate to the same bin. The lanes nearer an integer (a level on an edge, the min and the
// max) use the formula; a lane that no value takes (present clear) keeps its truncation, clamped
// into the table.
inline __attribute__((always_inline)) __m512i bin_levels_f32(__m512 v, __mmask16 present, const Binning& b, __m512 lo,
                                                             __m512 scale, __m512i last, __m512 margin) {
  const __m512 q = _mm512_mul_ps(_mm512_sub_ps(v, lo), scale);
  __m512i bin = _mm512_min_epu32(_mm512_cvttps_epi32(q), last);   // below 0: huge as unsigned, to the last
  const __mmask16 unsure = _mm512_mask_cmp_ps_mask(present, _mm512_abs_ps(_mm512_reduce_ps(q, 0)), margin, _CMP_LT_OQ);
  if (__builtin_expect(unsure != 0, 0)) {
    alignas(64) float x[16];
    alignas(64) int32_t k[16];
    _mm512_store_ps(x, v);
    _mm512_store_si512(k, bin);
    for (int l = 0; l < 16; ++l)
      if (unsure >> l & 1) k[l] = b.exact(x[l]);
    bin = _mm512_load_si512(k);
  }
  return bin;
}

float hmax16(__m512 v) {
  __m256 m = _mm256_max_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

// A Q4_K block's eight sub-block scales d * sc (lanes 0-7) and mins dmin * m (lanes 8-15), the
// decoder's float products (its 6-bit fields unpacked by kquant_scales_mins8).
inline __m512 q4k_scales_mins(const uint8_t* b) {
  uint64_t sc, mn;
  decode::kquant_scales_mins8(b + 4, &sc, &mn);
  const __m128i fields = _mm_set_epi64x(static_cast<int64_t>(mn), static_cast<int64_t>(sc));
  const __m512 d = _mm512_insertf32x8(_mm512_set1_ps(fp::f16_to_f32(fp::load_u16(b))),
                                      _mm256_set1_ps(fp::f16_to_f32(fp::load_u16(b + 2))), 1);
  return _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(fields)));
}

// The AVX-512 kernels' last step over an all-finite chunk of `values` values: its bounds and zeros
// from their lanes, its moments from the lanes' sums of x - shift (close_level_chunk).
void close_avx512_chunk(ChunkSummary& c, Worker& w, uint64_t values, __m512 lo, __m512 hi, __m512i zeros, double shift,
                        __m512d s, __m512d sq, __m512d a) {
  alignas(64) float lo_l[16], hi_l[16];
  alignas(64) int32_t z[16];
  _mm512_store_ps(lo_l, lo);
  _mm512_store_ps(hi_l, hi);
  _mm512_store_si512(z, zeros);
  c.values = c.finite = values;
  for (int l = 0; l < 16; ++l) {
    c.lo = lo_l[l] < c.lo ? lo_l[l] : c.lo;
    c.hi = hi_l[l] > c.hi ? hi_l[l] : c.hi;
    w.zeros += static_cast<uint32_t>(z[l]);
  }
  close_level_chunk(c, w, shift, hsum8(s), hsum8(sq), hsum8(a));
}

bool q4k_scales_finite(const uint8_t* blocks, size_t n_blocks) {
  constexpr size_t kBytes = kTypeTable[static_cast<size_t>(TypeId::q4_k)].block_bytes;
  uint32_t bad = 0;
  for (size_t blk = 0; blk < n_blocks; ++blk) {
    const uint16_t d = fp::load_u16(blocks + blk * kBytes), dmin = fp::load_u16(blocks + blk * kBytes + 2);
    bad |= static_cast<uint32_t>((d & 0x7c00) == 0x7c00) | static_cast<uint32_t>((dmin & 0x7c00) == 0x7c00);
  }
  return bad == 0;
}

void scan_q4k_avx512(const uint8_t* blocks, size_t n_blocks, uint64_t pos0, size_t top_k, const Binning* binning,
                     Worker& w, ChunkSummary& c) {
  constexpr int kL = levels::kLevels;
  constexpr size_t kBytes = kTypeTable[static_cast<size_t>(TypeId::q4_k)].block_bytes;
  const int bins = binning != nullptr ? binning->bins : 1;
  const size_t copy = static_cast<size_t>(bins) * kPairCols;
  uint32_t* pairs = pair_table(w, bins, n_blocks * 256, binning != nullptr);

  const __m512 iota = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i want_clear[4];   // -1 in lane l where bit k of l is 0: that plane enters complemented
  for (int k = 0; k < 4; ++k)
    want_clear[k] =
        _mm512_sub_epi32(_mm512_and_si512(_mm512_srli_epi32(lane, k), _mm512_set1_epi32(1)), _mm512_set1_epi32(1));
  const __m512i copy_offset =
      _mm512_mullo_epi32(_mm512_and_si512(lane, _mm512_set1_epi32(3)), _mm512_set1_epi32(static_cast<int32_t>(copy)));
  const __m512 bin_lo = _mm512_set1_ps(binning != nullptr ? static_cast<float>(binning->lo) : 0.0f);
  const __m512 bin_scale = _mm512_set1_ps(binning != nullptr ? static_cast<float>(binning->scale) : 0.0f);
  const __m512i bin_last = _mm512_set1_epi32(bins - 1);
  const __m512 bin_margin = _mm512_set1_ps(std::max(1e-4f, 4e-7f * static_cast<float>(bins)));
  const __m512i abs_bits = _mm512_set1_epi32(kAbsBits);
  const __m512i log_bias = _mm512_set1_epi32(127 + kLogMinExp);
  // A block's bit planes: gf2p8affineqb with the codes as its matrix and byte j of each qword = 1 << j
  // gives, in byte k of each qword, bit k of that qword's 8 code bytes (in reverse order, the same
  // for every plane); vpermb then gathers plane k of sub-block j (4 bytes, one from each qword of its
  // 32 bytes) into dword 4 j + k. Sub-block 2 ch takes the low nibbles of bytes 32 ch..32 ch + 31,
  // 2 ch + 1 their high nibbles (planes 4-7).
  const __m512i bit_select = _mm512_set1_epi64(0x8040201008040201ll);
  alignas(64) uint8_t gather[64];
  for (int sub = 0; sub < 4; ++sub)   // the 4 sub-blocks of one 64-byte half of the codes
    for (int k = 0; k < 4; ++k)
      for (int q = 0; q < 4; ++q)
        gather[4 * (4 * sub + k) + q] = static_cast<uint8_t>(8 * (4 * (sub / 2) + q) + 4 * (sub % 2) + k);
  const __m512i plane_order = _mm512_load_si512(gather);

  __m512 lo = _mm512_set1_ps(INFINITY), hi = _mm512_set1_ps(-INFINITY);
  __m512i zeros = _mm512_setzero_si512();
  __m512d s = _mm512_setzero_pd(), sq = _mm512_setzero_pd(), a = _mm512_setzero_pd();
  double shift = 0;
  alignas(64) int32_t pair[kPendingSteps][kL], cnt[kPendingSteps][kL];   // the last sub-blocks' pairs, counts
  size_t stored = 0;                                                     // sub-blocks whose pairs were stored
  alignas(64) float lvs[8 * kL];
  // A block's scales and planes are made one block ahead, so that their stores have reached the
  // cache when the sub-blocks read them back lane by lane: djmj holds d * sc (lanes 0-7), then
  // dmin * m; planes dword 4 j + k is plane k of sub-block j.
  alignas(64) float djmj_of[2][16];
  alignas(64) uint32_t planes_of[2][32];
  auto prepare = [&](size_t blk) {
    const uint8_t* b = blocks + blk * kBytes;
    _mm512_store_ps(djmj_of[blk & 1], q4k_scales_mins(b));
    for (int h = 0; h < 2; ++h)
      _mm512_store_si512(planes_of[blk & 1] + 16 * h,
                         _mm512_permutexvar_epi8(plane_order, _mm512_gf2p8affine_epi64_epi8(
                                                                  bit_select, _mm512_loadu_si512(b + 16 + 64 * h), 0)));
  };
  if (n_blocks > 0) prepare(0);
  for (size_t blk = 0; blk < n_blocks; ++blk) {
    const uint8_t* b = blocks + blk * kBytes;
    if (blk + 1 < n_blocks) prepare(blk + 1);
    const float* dj = djmj_of[blk & 1];
    const float* mj = dj + 8;
    const uint32_t* planes = planes_of[blk & 1];
    __m512 block_abs_max = _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      __m512i m = _mm512_set1_epi32(-1);
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k)
        m = _mm512_ternarylogic_epi32(m, _mm512_set1_epi32(static_cast<int32_t>(planes[4 * j + k])), want_clear[k],
                                      0x60);
      const __m512i n = _mm512_popcnt_epi32(m);
      const __mmask16 present = _mm512_test_epi32_mask(n, n);
      const __m512 v = _mm512_fmsub_ps(iota, _mm512_set1_ps(dj[j]), _mm512_set1_ps(mj[j]));   // q * D exact
      const __m512i bits = _mm512_castps_si512(v);
      const __m512i abits = _mm512_and_si512(bits, abs_bits);
      const __mmask16 is_zero = _mm512_cmpeq_epi32_mask(abits, _mm512_setzero_si512());
      __m512i log_bin = _mm512_sub_epi32(_mm512_srli_epi32(abits, 23), log_bias);
      log_bin = _mm512_min_epi32(_mm512_max_epi32(log_bin, _mm512_setzero_si512()), _mm512_set1_epi32(kLogBins - 1));
      log_bin = _mm512_mask_mov_epi32(log_bin, is_zero, _mm512_set1_epi32(kZeroColumn));
      const __m512i lin_bin = binning != nullptr
                                  ? bin_levels_f32(v, present, *binning, bin_lo, bin_scale, bin_last, bin_margin)
                                  : _mm512_setzero_si512();
      const __m512i p = _mm512_add_epi32(_mm512_add_epi32(_mm512_slli_epi32(lin_bin, 6), log_bin), copy_offset);
      // The increments of the sub-block three before this one (kPendingSteps): its stores have
      // reached the cache by now (reading lanes of a store still in the store queue waits on it).
      // The barrier keeps the reads scalar loads: without it GCC extracts each lane with two
      // shuffles instead.
      const size_t slot = stored % kPendingSteps;
      _mm512_store_si512(pair[slot], p);
      _mm512_store_si512(cnt[slot], n);
      asm volatile("" ::: "memory");
      if (++stored >= kPendingSteps) {
        const size_t old = stored % kPendingSteps;   // the sub-block kPendingSteps - 1 before this one
        for (int l = 0; l < kL; ++l) pairs[pair[old][l]] += static_cast<uint32_t>(cnt[old][l]);
      }

      lo = _mm512_mask_min_ps(lo, present, lo, v);
      hi = _mm512_mask_max_ps(hi, present, hi, v);
      zeros = _mm512_mask_add_epi32(zeros, is_zero, zeros, n);
      const __m512 av = _mm512_castsi512_ps(abits);
      block_abs_max = _mm512_mask_max_ps(block_abs_max, present, block_abs_max, av);
      if (top_k > 0) _mm512_store_ps(lvs + kL * j, v);
      const __m512d n0 = _mm512_cvtepi32_pd(_mm512_castsi512_si256(n));
      const __m512d n1 = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(n, 1));
      const __m512d v0 = _mm512_cvtps_pd(_mm512_castps512_ps256(v)), v1 = _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1));
      if (blk == 0 && j == 0)   // the shift: the mean of the first sub-block's values
        shift = hsum8(_mm512_add_pd(_mm512_mul_pd(n0, v0), _mm512_mul_pd(n1, v1))) / 32.0;
      const __m512d sh = _mm512_set1_pd(shift);
      const __m512d d0 = _mm512_sub_pd(v0, sh), d1 = _mm512_sub_pd(v1, sh);
      const __m512d nd0 = _mm512_mul_pd(n0, d0), nd1 = _mm512_mul_pd(n1, d1);
      s = _mm512_add_pd(s, _mm512_add_pd(nd0, nd1));
      sq = _mm512_fmadd_pd(nd0, d0, _mm512_fmadd_pd(nd1, d1, sq));
      a = _mm512_fmadd_pd(n0, _mm512_abs_pd(v0), _mm512_fmadd_pd(n1, _mm512_abs_pd(v1), a));   // |x|: no conversion
    }
    if (top_k == 0) continue;
    const float block_max = hmax16(block_abs_max);
    if (w.heap.size() < top_k || block_max > w.heap.front().abs) {
      const uint64_t p0 = pos0 + blk * 256;
      const uint8_t* q = b + 16;
      for (int k = 0; k < 4; ++k)
        for (int l = 0; l < 64; ++l) {
          const int code = l < 32 ? q[32 * k + l] & 0xF : q[32 * k + l - 32] >> 4;
          const float x = lvs[kL * (2 * k + l / 32) + code], ax = std::fabs(x);
          if (w.heap.size() < top_k || ax > w.heap.front().abs) offer(w.heap, {ax, p0 + 64 * k + l, x}, top_k);
        }
    }
  }
  for (size_t k = first_pending(stored); k < stored; ++k)
    for (int l = 0; l < kL; ++l) pairs[pair[k % kPendingSteps][l]] += static_cast<uint32_t>(cnt[k % kPendingSteps][l]);
  close_avx512_chunk(c, w, n_blocks * 256, lo, hi, zeros, shift, s, sq, a);
}

// ---- Q6_K on AVX-512: a block's 256 values (d * sc) * (q - 32) made in registers 16 at a time (one
// sub-block: one scale) from its codes and never stored as a chunk, for chunks whose every d is
// finite (so is every value: |d * sc * (q - 32)| <= 65504 * 128 * 32). Pass 1 bins both histograms
// with one (linear bin, log2 bin) increment a value as bin_pairs does, and the exact bounds come
// from the same decode with a min and a max (q6k_bounds_avx512).
#define AKVIEW_STATS_Q6K_AVX512 1

// A block's 256 codes less 32 into `codes`, in element order, and its 16 sub-block scales d * sc
// (the decoder's float product) into `dj`. Element l + 32k of half n (l < 32, k < 4) takes the low
// (k < 2) or high nibble of ql[64n + l + 32 (k & 1)] and bit pair k of qh[32n + l]: in one 64-byte
// vector, ql's nibbles with qh and qh >> 2 side by side give elements 0-63 (low nibbles) and 64-127.
inline void q6k_unpack(const uint8_t* b, int8_t* codes, float* dj) {
  const __m512i low4 = _mm512_set1_epi8(0x0f), pair = _mm512_set1_epi8(0x30), k32 = _mm512_set1_epi8(32);
  for (int n = 0; n < 2; ++n) {
    const __m512i ql = _mm512_loadu_si512(b + 64 * n);
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * n));
    const __m512i qh = _mm512_inserti64x4(_mm512_castsi256_si512(h), _mm256_srli_epi16(h, 2), 1);
    const __m512i lo = _mm512_or_si512(_mm512_and_si512(ql, low4), _mm512_and_si512(_mm512_slli_epi16(qh, 4), pair));
    const __m512i hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4), _mm512_and_si512(qh, pair));
    _mm512_store_si512(codes + 128 * n, _mm512_sub_epi8(lo, k32));
    _mm512_store_si512(codes + 128 * n + 64, _mm512_sub_epi8(hi, k32));
  }
  const __m512 sc =
      _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 192))));
  _mm512_store_ps(dj, _mm512_mul_ps(_mm512_set1_ps(fp::f16_to_f32(fp::load_u16(b + 208))), sc));
}

inline __m512 q6k_values(const int8_t* codes, const float* dj, int sub) {
  const __m512i q = _mm512_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(codes + 16 * sub)));
  return _mm512_mul_ps(_mm512_set1_ps(dj[sub]), _mm512_cvtepi32_ps(q));
}

// The min and max of the finite values of the blocks, widening lo_out and hi_out: a block whose d is
// Inf or NaN has none (Inf * 0 is NaN). A block is decoded only where the bounds of its levels can
// widen the bounds so far: its values (d * sc) * q, q in [-32, 31], lie between (d * sc) * -32 and
// (d * sc) * 31 as floats (rounding is monotone), so where those lie within the bounds so far, so
// do its values. After the first blocks of a tensor that leaves the few blocks with the largest
// scales.
void q6k_bounds_avx512(const uint8_t* blocks, size_t n_blocks, float& lo_out, float& hi_out) {
  alignas(64) int8_t codes[256];
  alignas(64) float dj[16];
  __m512 lo = _mm512_set1_ps(lo_out), hi = _mm512_set1_ps(hi_out);   // the bounds so far, in every lane
  for (size_t blk = 0; blk < n_blocks; ++blk) {
    const uint8_t* b = blocks + blk * kQ6kBytes;
    const uint16_t d16 = fp::load_u16(b + 208);
    if ((d16 & 0x7c00) == 0x7c00) continue;   // Inf * sc and NaN * sc: no finite value
    const __m512 scales = _mm512_mul_ps(
        _mm512_set1_ps(fp::f16_to_f32(d16)),
        _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 192)))));
    const __m512 first = _mm512_mul_ps(scales, _mm512_set1_ps(-32.0f)),
                 last = _mm512_mul_ps(scales, _mm512_set1_ps(31.0f));
    if ((_mm512_cmp_ps_mask(_mm512_min_ps(first, last), lo, _CMP_LT_OQ) |
         _mm512_cmp_ps_mask(_mm512_max_ps(first, last), hi, _CMP_GT_OQ)) == 0)
      continue;
    q6k_unpack(b, codes, dj);
    __m512 block_lo = lo, block_hi = hi;
#pragma GCC unroll 16
    for (int sub = 0; sub < 16; ++sub) {
      const __m512 v = q6k_values(codes, dj, sub);
      block_lo = _mm512_min_ps(v, block_lo);
      block_hi = _mm512_max_ps(v, block_hi);
    }
    lo = _mm512_set1_ps(-hmax16(_mm512_sub_ps(_mm512_setzero_ps(), block_lo)));
    hi = _mm512_set1_ps(hmax16(block_hi));
  }
  lo_out = _mm512_cvtss_f32(lo);
  hi_out = _mm512_cvtss_f32(hi);
}

// Pass 1 over a chunk of Q6_K blocks with finite d, binned over `b` (the exact bounds).
void scan_q6k_avx512(const uint8_t* blocks, size_t n_blocks, uint64_t pos0, size_t top_k, const Binning& b, Worker& w,
                     ChunkSummary& c) {
  uint32_t* pairs = pair_table(w, b.bins, n_blocks * 256, true);
  const int32_t copy = b.bins * kPairCols;
  const __m512 bin_lo = _mm512_set1_ps(static_cast<float>(b.lo)), scale = _mm512_set1_ps(static_cast<float>(b.scale));
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i lane_copy = _mm512_mullo_epi32(_mm512_and_si512(lane, _mm512_set1_epi32(3)), _mm512_set1_epi32(copy));
  const __m512i last = _mm512_set1_epi32(b.bins - 1), abs_bits = _mm512_set1_epi32(kAbsBits);
  const __m512i log_bias = _mm512_set1_epi32(127 + kLogMinExp);
  alignas(64) int8_t codes[256];
  alignas(64) float dj[16], xs[256];
  alignas(64) int32_t index[kPendingSteps][16];
  alignas(64) float step[kPendingSteps][16];   // the values of the steps whose increments are pending
  __mmask16 sure_of[kPendingSteps] = {};       // the lanes of each step binned by the multiply
  size_t stored = 0;                           // steps whose indices were stored
  auto add = [&](const int32_t* at, const float* x, __mmask16 sure) { add_sure_pairs<16>(pairs, at, x, sure, b); };
  __m512 lo = _mm512_set1_ps(INFINITY), hi = _mm512_set1_ps(-INFINITY);
  __m512i zeros = _mm512_setzero_si512();
  __m512d s = _mm512_setzero_pd(), sq = _mm512_setzero_pd(), a = _mm512_setzero_pd();
  double shift = 0;
  for (size_t blk = 0; blk < n_blocks; ++blk) {
    q6k_unpack(blocks + blk * kQ6kBytes, codes, dj);
    __m512 block_abs_max = _mm512_setzero_ps();
#pragma GCC unroll 2
    for (int sub = 0; sub < 16; ++sub) {
      const __m512 v = q6k_values(codes, dj, sub);
      const __m512 q = _mm512_mul_ps(_mm512_sub_ps(v, bin_lo), scale);
      const __m512i below = _mm512_cvttps_epi32(_mm512_mul_ps(q, _mm512_set1_ps(1 - 1e-6f)));
      const __m512i above = _mm512_cvttps_epi32(_mm512_mul_ps(q, _mm512_set1_ps(1 + 1e-6f)));
      const __mmask16 sure = _mm512_cmpeq_epi32_mask(below, above) & _mm512_cmple_epu32_mask(above, last);
      const __m512i abits = _mm512_and_si512(_mm512_castps_si512(v), abs_bits);
      const __mmask16 is_zero = _mm512_cmpeq_epi32_mask(abits, _mm512_setzero_si512());
      __m512i log_bin = _mm512_sub_epi32(_mm512_srli_epi32(abits, 23), log_bias);
      log_bin = _mm512_min_epi32(_mm512_max_epi32(log_bin, _mm512_setzero_si512()), _mm512_set1_epi32(kLogBins - 1));
      log_bin = _mm512_mask_mov_epi32(log_bin, is_zero, _mm512_set1_epi32(kZeroColumn));
      const __m512i at = _mm512_add_epi32(_mm512_add_epi32(lane_copy, _mm512_slli_epi32(above, 6)), log_bin);
      // The increments of the step three before this one (kPendingSteps), whose stores have reached
      // the cache by now.
      const size_t slot = stored % kPendingSteps;
      _mm512_store_si512(index[slot], at);
      _mm512_store_ps(step[slot], v);
      sure_of[slot] = sure;
      asm volatile("" ::: "memory");   // the reads below stay scalar loads
      if (++stored >= kPendingSteps) {
        const size_t old = stored % kPendingSteps;
        add(index[old], step[old], sure_of[old]);
      }

      lo = _mm512_min_ps(v, lo);   // an equal value (-0 after +0) keeps the first, as sweep does
      hi = _mm512_max_ps(v, hi);
      zeros = _mm512_mask_sub_epi32(zeros, is_zero, zeros, _mm512_set1_epi32(-1));
      const __m512 av = _mm512_castsi512_ps(abits);
      block_abs_max = _mm512_max_ps(block_abs_max, av);
      if (top_k > 0) _mm512_store_ps(xs + 16 * sub, v);
      const __m512d v0 = _mm512_cvtps_pd(_mm512_castps512_ps256(v)), v1 = _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1));
      if (blk == 0 && sub == 0) shift = hsum8(_mm512_add_pd(v0, v1)) / 16.0;   // the first sub-block's mean
      const __m512d sh = _mm512_set1_pd(shift);
      const __m512d d0 = _mm512_sub_pd(v0, sh), d1 = _mm512_sub_pd(v1, sh);
      s = _mm512_add_pd(s, _mm512_add_pd(d0, d1));
      sq = _mm512_fmadd_pd(d0, d0, _mm512_fmadd_pd(d1, d1, sq));
      a = _mm512_add_pd(a, _mm512_add_pd(_mm512_abs_pd(v0), _mm512_abs_pd(v1)));
    }
    if (top_k == 0) continue;
    const float block_max = hmax16(block_abs_max);
    if (w.heap.size() < top_k || block_max > w.heap.front().abs) offer_values(w.heap, xs, 256, pos0 + blk * 256, top_k);
  }
  for (size_t k = first_pending(stored); k < stored; ++k)
    add(index[k % kPendingSteps], step[k % kPendingSteps], sure_of[k % kPendingSteps]);
  close_avx512_chunk(c, w, n_blocks * 256, lo, hi, zeros, shift, s, sq, a);
}
#endif

#if !defined(AKVIEW_STATS_Q6K_AVX512) && defined(__AVX2__) && defined(__FMA__)
// ---- Q6_K on AVX2: scan_q6k_avx512 and q6k_bounds_avx512 8 values a step (on AVX2 the values were
// decoded into the chunk buffer, swept, and binned by bin_pairs: 1.6 ns a value with the bounds).
#define AKVIEW_STATS_Q6K_AVX2 1

// A block's 256 codes less 32 into `codes`, in element order, and its 16 scales d * sc into `dj`, as
// q6k_unpack: element l + 32k of half n takes the low (k < 2) or high nibble of ql[64n + l + 32 (k & 1)]
// and bit pair k of qh[32n + l].
inline void q6k_unpack_avx2(const uint8_t* b, int8_t* codes, float* dj) {
  const __m256i low4 = _mm256_set1_epi8(0x0f), pair = _mm256_set1_epi8(0x30), k32 = _mm256_set1_epi8(32);
  for (int n = 0; n < 2; ++n) {
    const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 64 * n));
    const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 64 * n + 32));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * n));
    const __m256i q[4] = {
        _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), pair)),
        _mm256_or_si256(_mm256_and_si256(ql1, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), pair)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4), _mm256_and_si256(qh, pair)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                        _mm256_and_si256(_mm256_srli_epi16(qh, 2), pair))};
    for (int k = 0; k < 4; ++k)
      _mm256_store_si256(reinterpret_cast<__m256i*>(codes + 128 * n + 32 * k), _mm256_sub_epi8(q[k], k32));
  }
  const __m256 d = _mm256_set1_ps(fp::f16_to_f32(fp::load_u16(b + 208)));
  for (int h = 0; h < 2; ++h) {
    const __m128i sc = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 192 + 8 * h));
    _mm256_store_ps(dj + 8 * h, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sc))));
  }
}

// Values 8 * step .. 8 * step + 7 of a block: (d * sc) * (q - 32), one scale for each 16.
inline __m256 q6k_values_avx2(const int8_t* codes, const float* dj, int step) {
  const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + 8 * step)));
  return _mm256_mul_ps(_mm256_set1_ps(dj[step / 2]), _mm256_cvtepi32_ps(q));
}

// q6k_bounds_avx512 on AVX2: a block is decoded only where its levels could widen the bounds so far.
void q6k_bounds_avx2(const uint8_t* blocks, size_t n_blocks, float& lo_out, float& hi_out) {
  alignas(32) int8_t codes[256];
  alignas(32) float dj[16];
  float lo = lo_out, hi = hi_out;
  for (size_t blk = 0; blk < n_blocks; ++blk) {
    const uint8_t* b = blocks + blk * kQ6kBytes;
    const uint16_t d16 = fp::load_u16(b + 208);
    if ((d16 & 0x7c00) == 0x7c00) continue;   // Inf * sc and NaN * sc: no finite value
    const __m256 d = _mm256_set1_ps(fp::f16_to_f32(d16)), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    int wider = 0;
    for (int h = 0; h < 2; ++h) {
      const __m256 scales = _mm256_mul_ps(
          d,
          _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 192 + 8 * h)))));
      const __m256 first = _mm256_mul_ps(scales, _mm256_set1_ps(-32.0f)),
                   last = _mm256_mul_ps(scales, _mm256_set1_ps(31.0f));
      wider |= _mm256_movemask_ps(_mm256_or_ps(_mm256_cmp_ps(_mm256_min_ps(first, last), vlo, _CMP_LT_OQ),
                                               _mm256_cmp_ps(_mm256_max_ps(first, last), vhi, _CMP_GT_OQ)));
    }
    if (wider == 0) continue;
    q6k_unpack_avx2(b, codes, dj);
    __m256 block_lo = vlo, block_hi = vhi;
    for (int step = 0; step < 32; ++step) {
      const __m256 v = q6k_values_avx2(codes, dj, step);
      block_lo = _mm256_min_ps(v, block_lo);
      block_hi = _mm256_max_ps(v, block_hi);
    }
    lo = hmin8(block_lo);
    hi = hmax8(block_hi);
  }
  lo_out = lo;
  hi_out = hi;
}

// scan_q6k_avx512 on AVX2: pass 1 over a chunk of Q6_K blocks with finite d, binned over `b`.
void scan_q6k_avx2(const uint8_t* blocks, size_t n_blocks, uint64_t pos0, size_t top_k, const Binning& b, Worker& w,
                   ChunkSummary& c) {
  uint32_t* pairs = pair_table(w, b.bins, n_blocks * 256, true);
  const int32_t copy = b.bins * kPairCols;
  const __m256 bin_lo = _mm256_set1_ps(static_cast<float>(b.lo)), scale = _mm256_set1_ps(static_cast<float>(b.scale));
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i lane_copy = _mm256_mullo_epi32(_mm256_and_si256(lane, _mm256_set1_epi32(3)), _mm256_set1_epi32(copy));
  const __m256i last = _mm256_set1_epi32(b.bins - 1), abs_bits = _mm256_set1_epi32(kAbsBits);
  const __m256i zero = _mm256_setzero_si256();
  const __m256d minus_zero = _mm256_set1_pd(-0.0);
  alignas(32) int8_t codes[256];
  alignas(32) float dj[16], xs[256];
  alignas(32) int32_t index[kPendingSteps][8];
  alignas(32) float values[kPendingSteps][8];   // the values of the steps whose increments are pending
  int sure_of[kPendingSteps] = {};              // the lanes of each step binned by the multiply
  size_t stored = 0;                            // steps whose indices were stored
  auto add = [&](const int32_t* at, const float* x, int sure) { add_sure_pairs<8>(pairs, at, x, sure, b); };
  __m256 lo = _mm256_set1_ps(INFINITY), hi = _mm256_set1_ps(-INFINITY);
  __m256i zeros = zero;
  __m256d s = _mm256_setzero_pd(), sq = s, a = s;
  double shift = 0;
  for (size_t blk = 0; blk < n_blocks; ++blk) {
    q6k_unpack_avx2(blocks + blk * kQ6kBytes, codes, dj);
    __m256 block_abs_max = _mm256_setzero_ps();
    for (int step = 0; step < 32; ++step) {
      const __m256 v = q6k_values_avx2(codes, dj, step);
      const __m256 q = _mm256_mul_ps(_mm256_sub_ps(v, bin_lo), scale);
      const __m256i below = _mm256_cvttps_epi32(_mm256_mul_ps(q, _mm256_set1_ps(1 - 1e-6f)));
      const __m256i above = _mm256_cvttps_epi32(_mm256_mul_ps(q, _mm256_set1_ps(1 + 1e-6f)));
      const int sure = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_and_si256(
          _mm256_cmpeq_epi32(below, above), _mm256_cmpeq_epi32(_mm256_min_epu32(above, last), above))));
      const __m256i abits = _mm256_and_si256(_mm256_castps_si256(v), abs_bits);
      const __m256i is_zero = _mm256_cmpeq_epi32(abits, zero);
      const __m256i at =
          _mm256_add_epi32(_mm256_add_epi32(lane_copy, _mm256_slli_epi32(above, 6)), log_columns_avx2(abits));
      // The increments of the step three before this one (kPendingSteps), as scan_q6k_avx512.
      const size_t slot = stored % kPendingSteps;
      _mm256_store_si256(reinterpret_cast<__m256i*>(index[slot]), at);
      _mm256_store_ps(values[slot], v);
      sure_of[slot] = sure;
      asm volatile("" ::: "memory");   // the reads below stay scalar loads
      if (++stored >= kPendingSteps) {
        const size_t old = stored % kPendingSteps;
        add(index[old], values[old], sure_of[old]);
      }

      lo = _mm256_min_ps(v, lo);   // an equal value (-0 after +0) keeps the first, as sweep does
      hi = _mm256_max_ps(v, hi);
      zeros = _mm256_sub_epi32(zeros, is_zero);
      block_abs_max = _mm256_max_ps(block_abs_max, _mm256_castsi256_ps(abits));
      if (top_k > 0) _mm256_store_ps(xs + 8 * step, v);
      const __m256d v0 = _mm256_cvtps_pd(_mm256_castps256_ps128(v)), v1 = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
      if (blk == 0 && step == 0) shift = hsum4(_mm256_add_pd(v0, v1)) / 8.0;   // the first step's mean
      const __m256d sh = _mm256_set1_pd(shift);
      const __m256d d0 = _mm256_sub_pd(v0, sh), d1 = _mm256_sub_pd(v1, sh);
      s = _mm256_add_pd(s, _mm256_add_pd(d0, d1));
      sq = _mm256_fmadd_pd(d0, d0, _mm256_fmadd_pd(d1, d1, sq));
      a = _mm256_add_pd(a, _mm256_add_pd(_mm256_andnot_pd(minus_zero, v0), _mm256_andnot_pd(minus_zero, v1)));
    }
    if (top_k == 0) continue;
    const float block_max = hmax8(block_abs_max);
    if (w.heap.size() < top_k || block_max > w.heap.front().abs) offer_values(w.heap, xs, 256, pos0 + blk * 256, top_k);
  }
  for (size_t k = first_pending(stored); k < stored; ++k)
    add(index[k % kPendingSteps], values[k % kPendingSteps], sure_of[k % kPendingSteps]);
  c.values = c.finite = n_blocks * 256;
  close_avx2_chunk(c, w, lo, hi, zeros, shift, s, sq, a);
}
#endif

// The Q6_K block kernels this build has.
#if defined(AKVIEW_STATS_Q6K_AVX512)
#define AKVIEW_STATS_Q6K_BLOCKS 1
constexpr auto q6k_bounds_blocks = q6k_bounds_avx512;
constexpr auto scan_q6k_blocks = scan_q6k_avx512;
#elif defined(AKVIEW_STATS_Q6K_AVX2)
#define AKVIEW_STATS_Q6K_BLOCKS 1
constexpr auto q6k_bounds_blocks = q6k_bounds_avx2;
constexpr auto scan_q6k_blocks = scan_q6k_avx2;
#endif

// Q4_K's bounds are the min and max of its finite values, so that pass 1 bins the histogram over its
// final range and there is never a second pass. (d * sc) * q - dmin * m is monotone in q where d and
// dmin are finite (rounding keeps the order), so a sub-block's values lie between its levels of codes
// 0 and 15, and its own extremes are the levels of the smallest and the largest code it holds. The
// codes are read only for the sub-blocks whose levels 0 and 15 reach beyond the bounds so far; after
// the first blocks of a tensor that leaves the few with the largest scales. A block with a non-finite
// d or dmin is decoded (value_bounds_q4k).
void value_bounds_q4k(const uint8_t* b, float& lo_out, float& hi_out) {
  alignas(64) float lv[8 * levels::kLevels];
  alignas(64) uint8_t codes[256];
  levels::Q4K::levels(b, lv);
  levels::Q4K::codes(b, codes);
  for (int i = 0; i < 256; ++i) {
    const float x = lv[levels::kLevels * (i / levels::kSubElems) + codes[i]];
    if (!std::isfinite(x)) continue;
    lo_out = x < lo_out ? x : lo_out;
    hi_out = x > hi_out ? x : hi_out;
  }
}

// The smallest and largest code of sub-block j of a Q4_K block (its 32 nibbles).
void q4k_code_range(const uint8_t* b, int j, int& first, int& last) {
  const uint8_t* q = b + 16 + 32 * (j / 2);
  const int shift = 4 * (j % 2);
  int lo = 15, hi = 0;
  for (int l = 0; l < 32; ++l) {
    const int c = (q[l] >> shift) & 0xF;
    lo = c < lo ? c : lo;
    hi = c > hi ? c : hi;
  }
  first = lo;
  last = hi;
}

void level_bounds_q4k(const uint8_t* blocks, size_t n_blocks, float& lo_out, float& hi_out) {
  constexpr size_t kBytes = kTypeTable[static_cast<size_t>(TypeId::q4_k)].block_bytes;
  float lo = lo_out, hi = hi_out;
  for (size_t blk = 0; blk < n_blocks; ++blk) {
    const uint8_t* b = blocks + blk * kBytes;
    const uint16_t d16 = fp::load_u16(b), dmin16 = fp::load_u16(b + 2);
    if ((d16 & 0x7c00) == 0x7c00 || (dmin16 & 0x7c00) == 0x7c00) {
      value_bounds_q4k(b, lo, hi);
      continue;
    }
#if defined(AKVIEW_STATS_Q4K_AVX512)
    const __m512 scales_mins = q4k_scales_mins(b);
    V8 dj, mj;
    std::memcpy(&dj, &scales_mins, sizeof dj);
    std::memcpy(&mj, reinterpret_cast<const char*>(&scales_mins) + sizeof dj, sizeof mj);
#else
    V8 sc, mn;
    for (int j = 0; j < 8; ++j) {
      uint8_t s8, m8;
      decode::kquant_scale_min(j, b + 4, &s8, &m8);
      sc[j] = s8;
      mn[j] = m8;
    }
    const V8 dj = fp::f16_to_f32(d16) * sc, mj = fp::f16_to_f32(dmin16) * mn;
#endif
    const V8 first = dj * 0.0f - mj, last = dj * 15.0f - mj;
    const V8 l = first < last ? first : last, h = first < last ? last : first;
    const I8 wider = (l < lo) | (h > hi);
    int any = 0;
    for (int j = 0; j < 8; ++j) any |= wider[j];
    if (any == 0) continue;
    for (int j = 0; j < 8; ++j) {
      if (wider[j] == 0) continue;
      int c0 = 0, c1 = 0;
      q4k_code_range(b, j, c0, c1);
      // the decoder's float operations (level_forms.hpp: Q4K::levels) on the two codes
      const float x0 = dj[j] * static_cast<float>(c0) - mj[j], x1 = dj[j] * static_cast<float>(c1) - mj[j];
      lo = std::min(lo, std::min(x0, x1));
      hi = std::max(hi, std::max(x0, x1));
    }
  }
  lo_out = lo;
  hi_out = hi;
}

struct LevelScan {
  TypeId type;
  void (*full)(const uint8_t*, size_t, uint64_t, size_t, const Binning*, Worker&, ChunkSummary&);
  void (*histogram)(const uint8_t*, size_t, uint64_t, size_t, const Binning*, Worker&, ChunkSummary&);
  void (*bounds)(const uint8_t*, size_t, float&, float&);
};

// A level form's pass 1 and pass 2: on AVX2 (or later) scan_levels_avx2, else the generic kernel.
template <class Form, bool kFull>
constexpr auto kScanLevels =
#if defined(AKVIEW_STATS_LEVELS_AVX2)
    scan_levels_avx2<Form, kFull>;
#else
    scan_levels<Form, kFull>;
#endif

template <class Form>
constexpr LevelScan level_scan(void (*bounds)(const uint8_t*, size_t, float&, float&) = level_bounds<Form>) {
  return {Form::kType, kScanLevels<Form, true>, kScanLevels<Form, false>, bounds};
}

constexpr LevelScan kLevelScans[] = {level_scan<levels::Q40>(), level_scan<levels::Q41>(), level_scan<levels::Iq4Nl>(),
                                     level_scan<levels::Iq4Xs>(), level_scan<levels::Q4K>(level_bounds_q4k)};

const LevelScan* level_scan_of(TypeId t) {
  for (const LevelScan& s : kLevelScans)
    if (s.type == t) return &s;
  return nullptr;
}

}   // namespace

Result<TensorStats> compute_stats(const TensorView& v, const StatsOptions& opt) {
  AKV_TRY(validate_view(v));
  TensorStats s;
  s.log_abs_histogram.assign(kLogBins, 0);
  const bool two_pass = opt.histogram_bins > 0;
  const size_t n_cols = static_cast<size_t>(v.n_cols);
  if (v.n_rows == 0 || n_cols == 0) {
    s.rows_done = v.n_rows;
    if (two_pass) s.histogram.assign(static_cast<size_t>(opt.histogram_bins), 0);
    if (opt.progress) opt.progress(1.0);
    return s;
  }
  // A level form reads its blocks in place: rows of whole blocks, nothing between them.
  const TypeInfo& info = type_info(v.type);
  const LevelScan* levels_scan = level_scan_of(v.type);
  if (levels_scan != nullptr && (info.block_elems == 0 || n_cols % info.block_elems != 0 ||
                                 v.row_bytes != n_cols / info.block_elems * info.block_bytes))
    levels_scan = nullptr;
  // Q6_K rows of whole blocks are read as blocks by the block kernels (scan_q6k_avx512, scan_q6k_avx2).
  [[maybe_unused]] const bool q6k_blocks = v.type == TypeId::q6_k && n_cols % info.block_elems == 0 &&
                                           v.row_bytes == n_cols / info.block_elems * info.block_bytes;
  // The kernels that decode nothing into the chunk buffer read larger chunks: fewer reads (each a
  // system call, 0.1-0.2 s of system time over an 8 B model's 4.9 GB at the default size) over the same
  // bytes. A level form takes 4x the default and up to 16x (576 KiB of Q4_K, which a core's L2 still
  // holds while it is scanned), Q6_K on AVX-512 or AVX2 up to 4x, as long as the tensor still makes 64 chunks
  // (for the threads of large machines; the chunks depend on the shape alone, never on the threads).
  constexpr size_t kMinChunks = 64;
  size_t chunk_elems = opt.block_elems;
  size_t widest = levels_scan != nullptr ? 16 : 1;
#if defined(AKVIEW_STATS_Q6K_BLOCKS)
  if (q6k_blocks) widest = 4;
#endif
  if (widest > 1)
    chunk_elems = std::max(levels_scan != nullptr ? 4 * chunk_elems : chunk_elems,
                           std::min(widest * chunk_elems, static_cast<size_t>(v.n_rows) * n_cols / kMinChunks));
  const int64_t rows_per_chunk = std::max<int64_t>(1, static_cast<int64_t>(chunk_elems / n_cols));
  const size_t n_chunks = static_cast<size_t>((v.n_rows + rows_per_chunk - 1) / rows_per_chunk);
  const int n_threads = static_cast<int>(
      std::min<size_t>(static_cast<size_t>(opt.threads > 0 ? opt.threads : machine_threads()), n_chunks));
  const size_t top_k = static_cast<size_t>(std::max(0, opt.top_k));
  const double pass_weight = two_pass && levels_scan == nullptr && info.kind != TypeKind::block_quant ? 0.5 : 1.0;

  std::vector<std::unique_ptr<Worker>> workers;
  for (int w = 0; w < n_threads; ++w) workers.push_back(std::make_unique<Worker>());
  std::vector<ChunkSummary> chunks(n_chunks);
  std::mutex error_mutex;
  std::optional<Error> error;
  std::atomic<bool> was_cancelled{false};

  auto rows_of = [&](size_t chunk) {
    const int64_t r0 = static_cast<int64_t>(chunk) * rows_per_chunk;
    return std::make_pair(r0, std::min(v.n_rows, r0 + rows_per_chunk));
  };
  // Decodes a chunk into its worker's buffer; false (and the error kept) when decoding fails.
  // A plain (not composite) view is decoded from the kernel's copy of the chunk's rows
  // (core/kernel_copy.hpp), else, or where the copy fails, from the mapping.
  // Below kCopyFrom bytes a tensor is read in place: finding the mapped file (a read of
  // /proc/self/maps) would cost more than the faults of its few pages.
  constexpr uint64_t kCopyFrom = uint64_t{1} << 20;
  std::optional<KernelCopy> reader;
  if (static_cast<uint64_t>(v.n_rows) * v.row_bytes >= kCopyFrom) reader.emplace(v.data.data());
  const bool copy_rows = reader.has_value() && info.kind != TypeKind::composite;
  auto decode_chunk = [&](size_t chunk, Worker& w) -> const float* {
    const auto [r0, r1] = rows_of(chunk);
    w.buf.resize(static_cast<size_t>(std::min(rows_per_chunk, v.n_rows)) * n_cols);
    const size_t offset = static_cast<size_t>(r0) * v.row_bytes, len = static_cast<size_t>(r1 - r0) * v.row_bytes;
    Status st;
    if (w.raw.size() < len) w.raw.resize(len);
    if (copy_rows && reader->read(v.data.data() + offset, len, w.raw.data())) {
      TensorView c = v;
      c.n_rows = r1 - r0;
      c.data = std::span<const uint8_t>(w.raw.data(), len);
      c.source_id = 0;
      st = decode_rows(c, 0, r1 - r0, w.buf.data());
    } else {
      st = decode_rows(v, r0, r1, w.buf.data());
    }
    if (st.ok()) return w.buf.data();
    std::lock_guard lock(error_mutex);
    if (!error) error = std::move(st).error();
    return nullptr;
  };
  auto stop_for_cancel = [&] {
    if (!cancelled(opt)) return false;
    was_cancelled = true;
    return true;
  };

  // The blocks of a chunk of a level form: the kernel's copy, or in place where the copy fails.
  auto chunk_blocks = [&](size_t chunk, Worker& w) {
    const auto [r0, r1] = rows_of(chunk);
    const uint8_t* p = v.data.data() + static_cast<size_t>(r0) * v.row_bytes;
    const size_t len = static_cast<size_t>(r1 - r0) * v.row_bytes;
    if (w.raw.size() < len) w.raw.resize(len);
    if (reader && reader->read(p, len, w.raw.data())) p = w.raw.data();
    return std::make_pair(p, static_cast<size_t>(r1 - r0) * (n_cols / info.block_elems));
  };

  // A level form's histogram range is known before its values are read: the bounds of its levels.
  // Pass 1 then bins every value over [bound_lo, bound_hi]; when those are the min and max the
  // values reach (a quantizer's extreme sub-blocks use their extreme codes), that is the histogram
  // and there is no second pass.
  // The other block-quantized types find the min and max of their decoded values first (a decode
  // and a min/max sweep, lighter than pass 1): pass 1 then bins the histogram in the same increment as
  // the log2 histogram (bin_pairs), and there is no second pass. Plain floats keep the two passes.
  const bool exact_bounds = levels_scan == nullptr && two_pass && info.kind == TypeKind::block_quant;
  std::optional<Binning> early;
  float bound_lo = INFINITY, bound_hi = -INFINITY;
  if (levels_scan != nullptr && two_pass) {
    std::vector<std::pair<float, float>> bounds(static_cast<size_t>(n_threads), {INFINITY, -INFINITY});
    parallel_chunks(n_chunks, n_threads, [&](size_t chunk, int worker) {
      if (stop_for_cancel()) return false;
      const auto [blocks, n_blocks] = chunk_blocks(chunk, *workers[static_cast<size_t>(worker)]);
      auto& [lo, hi] = bounds[static_cast<size_t>(worker)];
      levels_scan->bounds(blocks, n_blocks, lo, hi);
      return true;
    });
    for (const auto& [lo, hi] : bounds) bound_lo = std::min(bound_lo, lo), bound_hi = std::max(bound_hi, hi);
  } else if (exact_bounds) {
    std::vector<std::pair<float, float>> bounds(static_cast<size_t>(n_threads), {INFINITY, -INFINITY});
    parallel_chunks(n_chunks, n_threads, [&](size_t chunk, int worker) {
      if (stop_for_cancel()) return false;
      Worker& w = *workers[static_cast<size_t>(worker)];
#if defined(AKVIEW_STATS_Q6K_BLOCKS)
      if (q6k_blocks) {
        const auto [blocks, n_blocks] = chunk_blocks(chunk, w);
        auto& [lo, hi] = bounds[static_cast<size_t>(worker)];
        q6k_bounds_blocks(blocks, n_blocks, lo, hi);
        return true;
      }
#endif
      const float* x = decode_chunk(chunk, w);
      if (x == nullptr) return false;
      const auto [r0, r1] = rows_of(chunk);
      auto& [lo, hi] = bounds[static_cast<size_t>(worker)];
      finite_bounds(x, static_cast<size_t>(r1 - r0) * n_cols, lo, hi);
      return true;
    });
    if (error) return std::move(*error);
    for (const auto& [lo, hi] : bounds) bound_lo = std::min(bound_lo, lo), bound_hi = std::max(bound_hi, hi);
  }
  if (levels_scan != nullptr || exact_bounds) {
    if (bound_lo <= bound_hi) {
      early.emplace(bound_lo, bound_hi, opt.histogram_bins);
      for (auto& w : workers) w->hist.assign(kCopies * static_cast<size_t>(opt.histogram_bins), 0);
    }
  }

  parallel_chunks(
      n_chunks, n_threads,
      [&](size_t chunk, int worker) {
        if (stop_for_cancel()) return false;
        Worker& w = *workers[static_cast<size_t>(worker)];
        if (levels_scan != nullptr) {
          const auto [blocks, n_blocks] = chunk_blocks(chunk, w);
#if defined(AKVIEW_STATS_Q4K_AVX512)
          if (v.type == TypeId::q4_k && q4k_scales_finite(blocks, n_blocks)) {
            scan_q4k_avx512(blocks, n_blocks, static_cast<uint64_t>(rows_of(chunk).first) * n_cols, top_k,
                            early ? &*early : nullptr, w, chunks[chunk]);
            chunks[chunk].done = true;
            return true;
          }
#endif
          levels_scan->full(blocks, n_blocks, static_cast<uint64_t>(rows_of(chunk).first) * n_cols, top_k,
                            early ? &*early : nullptr, w, chunks[chunk]);
          chunks[chunk].done = true;
          return true;
        }
#if defined(AKVIEW_STATS_Q6K_BLOCKS)
        if (q6k_blocks && early) {
          const auto [blocks, n_blocks] = chunk_blocks(chunk, w);
          if (q6k_scales_finite(blocks, n_blocks)) {
            scan_q6k_blocks(blocks, n_blocks, static_cast<uint64_t>(rows_of(chunk).first) * n_cols, top_k, *early, w,
                            chunks[chunk]);
            chunks[chunk].done = true;
            return true;
          }
        }
#endif
        const float* x = decode_chunk(chunk, w);
        if (x == nullptr) return false;
        const auto [r0, r1] = rows_of(chunk);
        scan_chunk(x, static_cast<size_t>(r1 - r0) * n_cols, static_cast<uint64_t>(r0) * n_cols, top_k,
                   early ? &*early : nullptr, w, chunks[chunk]);
        chunks[chunk].done = true;
        return true;
      },
      [&](size_t finished) {
        if (opt.progress) opt.progress(pass_weight * static_cast<double>(finished) / static_cast<double>(n_chunks));
      });
  if (error) return std::move(*error);
  for (auto& w : workers) fold_pairs(*w, early.has_value());

  // Merge: moments in chunk order, the rest per thread.
  double mean = 0, m2 = 0, abs_sum = 0;
  for (size_t c = 0; c < n_chunks; ++c) {
    const ChunkSummary& k = chunks[c];
    if (!k.done) continue;
    s.count += k.values;
    s.rows_done += rows_of(c).second - rows_of(c).first;
    if (k.finite == 0) continue;
    const double na = static_cast<double>(s.finite), nb = static_cast<double>(k.finite), nt = na + nb;
    const double delta = k.mean - mean;
    mean += delta * nb / nt;
    m2 += k.m2 + delta * delta * na * nb / nt;
    abs_sum += k.abs_sum;
    s.finite += k.finite;
  }
  float lo = INFINITY, hi = -INFINITY;
  std::vector<TopItem> top;
  for (const auto& w : workers) {
    lo = std::min(lo, w->lo);
    hi = std::max(hi, w->hi);
    s.nan += w->nan;
    s.pos_inf += w->pos_inf;
    s.neg_inf += w->neg_inf;
    s.zeros += w->zeros;
    for (int b = 0; b < kLogBins; ++b) s.log_abs_histogram[static_cast<size_t>(b)] += w->log[static_cast<size_t>(b)];
    top.insert(top.end(), w->heap.begin(), w->heap.end());
  }
  if (s.finite > 0) {
    s.min = lo;
    s.max = hi;
    s.mean = mean;
    s.std = std::sqrt(m2 / static_cast<double>(s.finite));
    s.abs_mean = abs_sum / static_cast<double>(s.finite);
  }
  std::sort(top.begin(), top.end(), ranks_before);
  if (top.size() > top_k) top.resize(top_k);
  for (const TopItem& t : top)
    s.top.push_back({static_cast<int64_t>(t.pos / n_cols), static_cast<int64_t>(t.pos % n_cols), t.value});
  if (was_cancelled) s.cancelled = true;
  if (s.cancelled || !two_pass) {
    if (!s.cancelled && opt.progress) opt.progress(1.0);
    return s;
  }

  // Pass 2: the linear histogram over [min, max].
  const size_t bins = static_cast<size_t>(opt.histogram_bins);
  s.histogram.assign(bins, 0);
  s.hist_lo = s.min;
  s.hist_hi = s.max;
  const bool binned_early = early && s.finite > 0 && lo == bound_lo && hi == bound_hi;
  if (binned_early)
    for (const auto& w : workers)
      for (size_t i = 0; i < kCopies * bins; ++i) s.histogram[i % bins] += w->hist[i];
  if (s.finite > 0 && !binned_early) {
    const Binning binning(lo, hi, opt.histogram_bins);
    for (auto& w : workers) w->hist.assign(kCopies * bins, 0);
    std::vector<uint8_t> binned(n_chunks, 0);
    parallel_chunks(
        n_chunks, n_threads,
        [&](size_t chunk, int worker) {
          if (stop_for_cancel()) return false;
          Worker& w = *workers[static_cast<size_t>(worker)];
          const ChunkSummary& k = chunks[chunk];
          binned[chunk] = 1;
          if (k.finite == 0) return true;
          const int b_lo = binning.exact(k.lo);
          if (b_lo == binning.exact(k.hi)) {   // the whole chunk lies in one bin
            w.hist[static_cast<size_t>(b_lo)] += k.finite;
            return true;
          }
          if (levels_scan != nullptr) {
            const auto [blocks, n_blocks] = chunk_blocks(chunk, w);
            levels_scan->histogram(blocks, n_blocks, 0, 0, &binning, w, chunks[chunk]);
            return true;
          }
          const float* x = decode_chunk(chunk, w);
          if (x == nullptr) return false;
          histogram_chunk(x, k.values, k.non_finite, binning, w);
          return true;
        },
        [&](size_t finished) {   // a level form's pass 1 went to 1.0: its rare second pass is not shown
          if (opt.progress && levels_scan == nullptr)
            opt.progress(0.5 + 0.5 * static_cast<double>(finished) / static_cast<double>(n_chunks));
        });
    if (error) return std::move(*error);
    for (const auto& w : workers)
      for (size_t i = 0; i < kCopies * bins; ++i) s.histogram[i % bins] += w->hist[i];
    if (was_cancelled) {
      s.cancelled = true;
      s.rows_done = 0;
      for (size_t c = 0; c < n_chunks; ++c)
        if (binned[c]) s.rows_done += rows_of(c).second - rows_of(c).first;
      return s;
    }
  }
  if (opt.progress) opt.progress(1.0);
  return s;
}

}   // namespace akview
