// compute_stats: the tensor is cut into chunks of whole rows that every thread decodes into its own
// L2-sized buffer (core/parallel_chunks.hpp). Pass 1 sweeps a chunk once with 8-lane vectors (min,
// max, max |x|, the sums of x - shift, its square and |x| in doubles, zeros, and a non-finite count),
// counts exponents for the still-cached chunk's log2 histogram, and looks for outliers
// only when the chunk's max |x| beats the thread's current K-th; a chunk holding NaN or Inf is
// scanned again value by value. Chunk moments are merged in chunk order (Chan's formula), so the
// result is the same for any thread count. Pass 2 bins each value by a multiply where that provably
// gives the bin the per-value division gives, and by the division where it might not.
#include "core/decode/stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include "core/decode/decode.hpp"
#include "core/parallel_chunks.hpp"

namespace akview {
namespace {

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
  float lo = INFINITY, hi = -INFINITY;
  uint64_t nan = 0, pos_inf = 0, neg_inf = 0, zeros = 0;
  std::array<uint64_t, kLogBins> log{};
  std::vector<TopItem> heap;          // std heap under ranks_before: front() is the worst kept
  std::vector<uint64_t> hist;         // kCopies copies of the linear histogram (pass 2)
  uint32_t exponents[kCopies][256];   // per-chunk biased-exponent counts
};

// A chunk's share of the moments, merged in chunk order.
struct ChunkSummary {
  uint64_t values = 0, finite = 0;
  double mean = 0, m2 = 0, abs_sum = 0;
  float lo = INFINITY, hi = -INFINITY;   // over its finite values
  bool non_finite = false;
  bool done = false;
};

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

// The vector sweep of pass 1. Its sums are of x - shift (a value near the chunk's mean), so the
// sum of squares gives the chunk's m2 without a second sweep: m2 = S2 - S1^2 / n loses nothing
// worth a bit when the shift is within a few std of the mean. Only used when non_finite == 0.
struct Sweep {
  float lo = INFINITY, hi = -INFINITY, abs_max = 0;
  double sum = 0, sum_sq = 0, abs_sum = 0;   // of x - shift, (x - shift)^2, |x|
  uint64_t zeros = 0, non_finite = 0;
};

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

void scan_chunk(const float* x, size_t n, uint64_t pos0, size_t top_k, Worker& w, ChunkSummary& c) {
  c.values = n;
  const double shift = chunk_shift(x, n);
  const Sweep sw = sweep(x, n, shift);
  if (sw.non_finite > 0) scan_careful(x, n, pos0, top_k, w, c);
  if (!c.non_finite) {
    const double count = static_cast<double>(n);
    c.finite = n;
    c.mean = shift + sw.sum / count;
    c.m2 = std::max(0.0, sw.sum_sq - sw.sum * sw.sum / count);
    c.abs_sum = sw.abs_sum;
    c.lo = sw.lo;
    c.hi = sw.hi;
    w.zeros += sw.zeros;
    add_exponents(x, n, sw.zeros, w);
    // Within one thread positions only grow, so an |x| equal to the K-th kept never replaces it.
    if (top_k > 0 && (w.heap.size() < top_k || sw.abs_max > w.heap.front().abs))
      for (size_t i = 0; i < n; ++i) {
        const float a = std::fabs(x[i]);
        if (w.heap.size() < top_k || a > w.heap.front().abs) offer(w.heap, {a, pos0 + i, x[i]}, top_k);
      }
  }
  w.lo = std::min(w.lo, c.lo);
  w.hi = std::max(w.hi, c.hi);
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
  const int64_t rows_per_chunk = std::max<int64_t>(1, static_cast<int64_t>(opt.block_elems / n_cols));
  const size_t n_chunks = static_cast<size_t>((v.n_rows + rows_per_chunk - 1) / rows_per_chunk);
  const int n_threads = static_cast<int>(
      std::min<size_t>(static_cast<size_t>(opt.threads > 0 ? opt.threads : machine_threads()), n_chunks));
  const size_t top_k = static_cast<size_t>(std::max(0, opt.top_k));
  const double pass_weight = two_pass ? 0.5 : 1.0;

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
  auto decode_chunk = [&](size_t chunk, Worker& w) -> const float* {
    const auto [r0, r1] = rows_of(chunk);
    w.buf.resize(static_cast<size_t>(std::min(rows_per_chunk, v.n_rows)) * n_cols);
    Status st = decode_rows(v, r0, r1, w.buf.data());
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

  parallel_chunks(
      n_chunks, n_threads,
      [&](size_t chunk, int worker) {
        if (stop_for_cancel()) return false;
        Worker& w = *workers[static_cast<size_t>(worker)];
        const float* x = decode_chunk(chunk, w);
        if (x == nullptr) return false;
        const auto [r0, r1] = rows_of(chunk);
        scan_chunk(x, static_cast<size_t>(r1 - r0) * n_cols, static_cast<uint64_t>(r0) * n_cols, top_k, w,
                   chunks[chunk]);
        chunks[chunk].done = true;
        return true;
      },
      [&](size_t finished) {
        if (opt.progress) opt.progress(pass_weight * static_cast<double>(finished) / static_cast<double>(n_chunks));
      });
  if (error) return std::move(*error);

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
  if (s.finite > 0) {
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
          const float* x = decode_chunk(chunk, w);
          if (x == nullptr) return false;
          histogram_chunk(x, k.values, k.non_finite, binning, w);
          return true;
        },
        [&](size_t finished) {
          if (opt.progress) opt.progress(0.5 + 0.5 * static_cast<double>(finished) / static_cast<double>(n_chunks));
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
