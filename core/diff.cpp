// Model diff through the name maps (core/names/name_map.hpp) and the reference decoders; value
// errors are computed on every thread (core/parallel_chunks.hpp).
#include "core/diff.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/decode/decode.hpp"
#include "core/decode/decode_table.hpp"   // the row decoders, called on the thread's own copies
#include "core/formats/pytorch.hpp"
#include "core/kernel_copy.hpp"
#include "core/mapped_file.hpp"
#include "core/names/name_map.hpp"
#include "core/parallel_chunks.hpp"
#include "core/tensor_view.hpp"

namespace akview {
namespace {

struct RowShape {
  int64_t rows = 1, cols = 1;
};
RowShape row_shape(const Model& m, const Tensor& t) {
  RowShape r;
  auto s = m.shape(t);
  if (s.empty()) return r;
  r.cols = s.back();
  for (size_t i = 0; i + 1 < s.size(); ++i) r.rows *= s[i];
  return r;
}

}   // namespace

Status decode_tensor_rows(const Model& model, uint32_t index, int64_t row_begin, int64_t row_end, float* out) {
  if (index >= model.tensors.size())
    return make_error(ErrorCode::not_found, model.path, kNoOffset, "tensor index out of range");
  const Tensor& t = model.tensors[index];
  if (t.flags & kTensorUnsupported)
    return make_error(ErrorCode::unsupported, model.path, t.offset,
                      fmt::format("tensor '{}' is marked unsupported", t.name));
  if (!(t.flags & kTensorNonContiguous)) {
    auto view = make_tensor_view(model, t);
    if (!view) return std::move(view).error();
    return decode_rows(*view, row_begin, row_end, out);
  }
  // A strided PyTorch view: gather its elements into row-major order, then decode that buffer.
  auto bytes = torch_tensor_bytes(model, index);
  if (!bytes) return std::move(bytes).error();
  RowShape rs = row_shape(model, t);
  TensorView view;
  view.type = t.type;
  view.n_rows = rs.rows;
  view.n_cols = rs.cols;
  view.data = *bytes;
  view.row_bytes = static_cast<uint64_t>(rs.cols) * type_info(t.type).block_bytes;
  return decode_rows(view, row_begin, row_end, out);
}

// The 8-double vectors below are internal to this file: GCC's note that returning them changes the
// ABI where the build has no AVX-512 does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace {

typedef float V8 __attribute__((vector_size(32)));   // GCC/Clang lower these to the target's SIMD
typedef double D8 __attribute__((vector_size(64)));
typedef uint64_t U8x64 __attribute__((vector_size(64)));

// One chunk's sums; merged in chunk order, so the result does not depend on the thread count.
struct ChunkSums {
  double sum_sq = 0, ref_sq = 0, a_sq = 0, dot = 0, max_abs = 0;
};

// 8 floats widened to doubles (exact): one vcvtps2pd on AVX-512, where GCC's generic form splits it.
inline D8 widen(const float* p) {
#ifdef __AVX512F__
  return static_cast<D8>(_mm512_maskz_cvtps_pd(0xFF, _mm256_loadu_ps(p)));
#else
  V8 v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, D8);
#endif
}

inline D8 abs8(D8 d) { return std::bit_cast<D8>(std::bit_cast<U8x64>(d) & 0x7FFFFFFFFFFFFFFFull); }

// The larger of a |difference| and the running maximum; a NaN difference leaves the maximum as it
// was (as std::max(m, NaN) does). vmaxpd is that in one 2-cycle step; the compare-and-blend GCC makes
// of the generic form was the loop's longest chain.
inline D8 max8(D8 ad, D8 m) {
#ifdef __AVX512F__
  return static_cast<D8>(_mm512_maskz_max_pd(0xFF, static_cast<__m512d>(ad), static_cast<__m512d>(m)));
#else
  return ad > m ? ad : m;
#endif
}

// Lane accumulators, so the additions of one step do not wait on the previous step's (each sum is a
// chain of dependent adds): with AVX2 and later the first set's 8 lanes as two 4-lane halves, else
// two sets of 8 (16 values a step); the sets and lanes merge in a fixed order, so the bits do not
// depend on where the chunk runs. Products of two floats are exact in
// double: only the additions round. A chunk may be fed in pieces (add, then finish): pieces of a
// multiple of 16 values keep every value in the lane it has in one pass over the chunk, so the
// sums are those of the whole chunk to the bit.
class ChunkLanes {
 public:
  // Adds n values, n a multiple of 16.
  void add(const float* x, const float* y, size_t n) {
#if defined(__AVX2__) && defined(__FMA__)
    // With AVX2 and later: 8 values a step in the first set's lanes (value k in lane k mod 8, which
    // pieces of a multiple of 16 values also keep), as 4-lane halves. The two sets' 20 halves are
    // more than AVX2's 16 vector registers: GCC spilled them every step (2.3 ns a value); on AVX-512
    // too the halves run faster than the two 8-lane sets (0.14 against 0.18 ns a value, Zen 4, one
    // thread, a chunk in L2).
    // The sums' halves in plain variables, copied in and out by memcpy: through std::bit_cast to a
    // struct of two halves GCC kept them in that struct's memory and spilled every sum each step.
    __m256d half[5][2];
    D8* const sums[5] = {&sq0_, &ref0_, &a0_, &dot0_, &max0_};
    for (int i = 0; i < 5; ++i) std::memcpy(half[i], sums[i], sizeof(D8));
    __m256d sq_l = half[0][0], sq_h = half[0][1], ref_l = half[1][0], ref_h = half[1][1], a_l = half[2][0],
            a_h = half[2][1], dot_l = half[3][0], dot_h = half[3][1], max_l = half[4][0], max_h = half[4][1];
    const __m256d sign = _mm256_set1_pd(-0.0);
    for (size_t k = 0; k + 8 <= n; k += 8) {
      const __m256d xl = _mm256_cvtps_pd(_mm_loadu_ps(x + k)), yl = _mm256_cvtps_pd(_mm_loadu_ps(y + k));
      const __m256d dl = _mm256_sub_pd(xl, yl);
      max_l = _mm256_max_pd(_mm256_andnot_pd(sign, dl), max_l);   // a NaN difference keeps the maximum
      sq_l = _mm256_fmadd_pd(dl, dl, sq_l);
      ref_l = _mm256_fmadd_pd(yl, yl, ref_l);
      a_l = _mm256_fmadd_pd(xl, xl, a_l);
      dot_l = _mm256_fmadd_pd(xl, yl, dot_l);
      const __m256d xh = _mm256_cvtps_pd(_mm_loadu_ps(x + k + 4)), yh = _mm256_cvtps_pd(_mm_loadu_ps(y + k + 4));
      const __m256d dh = _mm256_sub_pd(xh, yh);
      max_h = _mm256_max_pd(_mm256_andnot_pd(sign, dh), max_h);
      sq_h = _mm256_fmadd_pd(dh, dh, sq_h);
      ref_h = _mm256_fmadd_pd(yh, yh, ref_h);
      a_h = _mm256_fmadd_pd(xh, xh, a_h);
      dot_h = _mm256_fmadd_pd(xh, yh, dot_h);
    }
    const __m256d out[5][2] = {{sq_l, sq_h}, {ref_l, ref_h}, {a_l, a_h}, {dot_l, dot_h}, {max_l, max_h}};
    for (int i = 0; i < 5; ++i) std::memcpy(sums[i], out[i], sizeof(D8));
#else
    D8 sq0 = sq0_, ref0 = ref0_, a0 = a0_, dot0 = dot0_, max0 = max0_;
    D8 sq1 = sq1_, ref1 = ref1_, a1 = a1_, dot1 = dot1_, max1 = max1_;
    for (size_t k = 0; k + 16 <= n; k += 16) {
      const D8 x0 = widen(x + k), y0 = widen(y + k), d0 = x0 - y0, ad0 = abs8(d0);
      const D8 x1 = widen(x + k + 8), y1 = widen(y + k + 8), d1 = x1 - y1, ad1 = abs8(d1);
      max0 = max8(ad0, max0);
      max1 = max8(ad1, max1);
      sq0 += d0 * d0, sq1 += d1 * d1;
      ref0 += y0 * y0, ref1 += y1 * y1;
      a0 += x0 * x0, a1 += x1 * x1;
      dot0 += x0 * y0, dot1 += x1 * y1;
    }
    sq0_ = sq0, ref0_ = ref0, a0_ = a0, dot0_ = dot0, max0_ = max0;
    sq1_ = sq1, ref1_ = ref1, a1_ = a1, dot1_ = dot1, max1_ = max1;
#endif
  }

  // Adds the chunk's last n values (any count) and returns the sums of all it was given.
  ChunkSums finish(const float* x, const float* y, size_t n) {
    size_t k = n / 16 * 16;
    add(x, y, k);
    if (k + 8 <= n) {
      const D8 x0 = widen(x + k), y0 = widen(y + k), d0 = x0 - y0, ad0 = abs8(d0);
      max0_ = max8(ad0, max0_);
      sq0_ += d0 * d0, ref0_ += y0 * y0, a0_ += x0 * x0, dot0_ += x0 * y0;
      k += 8;
    }
    ChunkSums c;
    for (int j = 0; j < 8; ++j) {
      c.max_abs = std::max({c.max_abs, max0_[j], max1_[j]});
      c.sum_sq += sq0_[j] + sq1_[j];
      c.ref_sq += ref0_[j] + ref1_[j];
      c.a_sq += a0_[j] + a1_[j];
      c.dot += dot0_[j] + dot1_[j];
    }
    for (; k < n; ++k) {
      const double xd = x[k], yd = y[k], d = xd - yd;
      c.max_abs = std::max(c.max_abs, std::fabs(d));
      c.sum_sq += d * d;
      c.ref_sq += yd * yd;
      c.a_sq += xd * xd;
      c.dot += xd * yd;
    }
    return c;
  }

 private:
  D8 sq0_{}, ref0_{}, a0_{}, dot0_{}, max0_{}, sq1_{}, ref1_{}, a1_{}, dot1_{}, max1_{};
};

// The kernel-copy readers of one diff, one per mapped file (a KernelCopy finds its file in
// /proc/self/maps: once per file now, where it was twice per tensor pair). Bytes in no mapping of
// MappedFile::open share one reader: KernelCopy::read checks that an address lies in the file it
// opened and copies anything else through process_vm_readv, so any reader is right for them.
class Readers {
 public:
  const KernelCopy& at(const uint8_t* inside) {
    uintptr_t key = 0;
    if (auto where = locate_mapping(inside)) key = reinterpret_cast<uintptr_t>(inside) - where->offset;
    for (const auto& [k, reader] : readers_)
      if (k == key) return *reader;
    readers_.emplace_back(key, std::make_unique<KernelCopy>(inside));
    return *readers_.back().second;
  }

 private:
  std::vector<std::pair<uintptr_t, std::unique_ptr<KernelCopy>>> readers_;
};

// A side read as raw rows: a plain tensor (not composite, not strided) read by the default decoder.
// Its chunks are copied out of its file by the kernel (core/kernel_copy.hpp: pread into the thread's
// buffer, faster than a first touch of the mapping) and decoded there. Where the copy fails (a file
// cut short, a remote page not fetched yet) the chunk is decoded from the mapping as before, which
// says what failed.
struct RawSide {
  TensorView view;
  const KernelCopy* reader;
};
std::optional<RawSide> raw_side(const Model& m, uint32_t index, const DiffOptions& options, Readers& readers) {
  const Tensor& t = m.tensors[index];
  if (options.decode || (t.flags & (kTensorNonContiguous | kTensorUnsupported)) ||
      type_info(t.type).kind == TypeKind::composite)
    return std::nullopt;
  auto v = make_tensor_view(m, t);
  if (!v) return std::nullopt;
  return RawSide{*v, &readers.at(v->data.data())};
}

// Rows [r, r + n) of `side` copied into `out` (resized); false when the kernel could not copy them all.
bool copy_rows(const RawSide& side, int64_t r, int64_t n, std::vector<uint8_t>& out) {
  const uint64_t len = static_cast<uint64_t>(n) * side.view.row_bytes;
  out.resize(len);
  return side.reader->read(side.view.data.data() + static_cast<uint64_t>(r) * side.view.row_bytes, len, out.data());
}

// Rows [r, r + n) of a raw view decoded from the copy in `bytes`.
Status decode_copy(const TensorView& v, int64_t n, std::span<const uint8_t> bytes, float* out) {
  TensorView c = v;
  c.n_rows = n;
  c.data = bytes;
  c.source_id = 0;
  return decode_rows(c, 0, n, out);
}

// How both raw sides' copied chunks are decoded a few thousand values at a time and compared at
// once, while those values are still in L1 (a chunk decoded whole into two 256 KiB buffers was
// written to and read back from L2, and pushed the copied bytes out of it): a chunk's rows are cut
// into pieces of `cols` values (a divisor of the row that is whole blocks of both types), and
// `per_step` pieces (a multiple of 16 values, so the lanes see what one pass sees) are decoded per
// side per step by the type's row decoder, straight: the bytes are the thread's own copy and the
// piece view is checked once per chunk (validate_view).
struct Pieces {
  int64_t cols = 0, per_step = 0;
  decode::RowRangeDecoder decode_a = nullptr, decode_b = nullptr;
};
std::optional<Pieces> fused_pieces(const RawSide& a, const RawSide& b, int64_t cols) {
  constexpr int64_t kMaxPiece = 4096, kMaxStep = 4096;   // floats a side: 2 x 16 KiB of L1
  const TypeInfo &ta = type_info(a.view.type), &tb = type_info(b.view.type);
  Pieces p;
  p.decode_a = decode::decoder_row(a.view.type).decode;
  p.decode_b = decode::decoder_row(b.view.type).decode;
  if (!p.decode_a || !p.decode_b || ta.block_elems == 0 || tb.block_elems == 0) return std::nullopt;
  for (int64_t g = std::min(cols, kMaxPiece); g > 0 && p.cols == 0; --g)
    if (cols % g == 0 && g % ta.block_elems == 0 && g % tb.block_elems == 0) p.cols = g;
  if (p.cols == 0) return std::nullopt;
  p.per_step = 1;
  while ((p.per_step * p.cols) % 16 != 0) ++p.per_step;
  if (p.per_step * p.cols > kMaxStep) {
    if (p.per_step > 1) return std::nullopt;   // a piece of 16 values is wider than a step: no fusing
  } else {
    p.per_step *= std::max<int64_t>(1, kMaxStep / (p.per_step * p.cols));
  }
  return p;
}

// `bytes` (whole rows of `side`) seen as rows of `cols` values.
TensorView piece_view(const RawSide& side, std::span<const uint8_t> bytes, int64_t cols) {
  TensorView v = side.view;
  const TypeInfo& t = type_info(v.type);
  v.n_cols = cols;
  v.row_bytes = static_cast<uint64_t>(cols) / t.block_elems * t.block_bytes;
  v.n_rows = static_cast<int64_t>(bytes.size() / v.row_bytes);
  v.data = bytes;
  v.source_id = 0;
  return v;
}

// Each thread's decode and copy buffers (a few hundred KiB), kept between the tensors of a diff:
// made anew for each tensor, they were zero-filled and faulted in again every time (7 % of a whole-model diff).
struct Buffers {
  std::vector<float> va, vb;
  std::vector<uint8_t> ra, rb;
};
class BufferLease {
 public:
  explicit BufferLease(size_t n) {
    std::lock_guard lock(mutex());
    auto& free = pool();
    while (buffers.size() < n && !free.empty()) buffers.push_back(std::move(free.back())), free.pop_back();
    buffers.resize(n);
  }
  ~BufferLease() {
    std::lock_guard lock(mutex());
    auto& free = pool();
    for (auto& b : buffers)
      if (free.size() < 64) free.push_back(std::move(b));
  }
  std::vector<Buffers> buffers;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::vector<Buffers>& pool() {
    static std::vector<Buffers> free;
    return free;
  }
};

// The value error of rows [a_row0, a_row0 + rows) of `ia` against [b_row0, b_row0 + rows) of `ib`:
// chunks of whole rows decoded once per side into each thread's buffers (core/parallel_chunks.hpp)
// and compared in the same pass. Where both sides are raw rows of one type and a chunk's bytes are
// equal, it is decoded once and compared with itself: the same floats on both sides, so the same
// sums to the bit (lanes fed x and x).
Result<ValueError> compare_rows(const Model& a, uint32_t ia, int64_t a_row0, const Model& b, uint32_t ib,
                                int64_t b_row0, int64_t rows, int64_t cols, const DiffOptions& options,
                                Readers& readers) {
  const RowDecoder& decode = options.decode ? options.decode : RowDecoder(decode_tensor_rows);
  ValueError e;
  if (rows == 0 || cols == 0) return e;
  // A strided PyTorch view is gathered whole by every decode call: one chunk, not one gather a chunk.
  const bool gathered = ((a.tensors[ia].flags | b.tensors[ib].flags) & kTensorNonContiguous) != 0;
  const int64_t rows_per_chunk =
      gathered ? rows : std::max<int64_t>(1, static_cast<int64_t>(options.chunk_elems) / cols);
  const size_t n_chunks = static_cast<size_t>((rows + rows_per_chunk - 1) / rows_per_chunk);
  const int threads = static_cast<int>(
      std::min<size_t>(static_cast<size_t>(options.threads > 0 ? options.threads : machine_threads()), n_chunks));
  BufferLease lease(static_cast<size_t>(threads));
  std::vector<Buffers>& buffers = lease.buffers;
  const std::optional<RawSide> raw_a = raw_side(a, ia, options, readers), raw_b = raw_side(b, ib, options, readers);
  const bool same_layout =
      raw_a && raw_b && raw_a->view.type == raw_b->view.type && raw_a->view.row_bytes == raw_b->view.row_bytes;
  const std::optional<Pieces> pieces = raw_a && raw_b ? fused_pieces(*raw_a, *raw_b, cols) : std::nullopt;
  std::vector<ChunkSums> sums(n_chunks);
  std::mutex error_mutex;
  std::optional<Error> error;
  bool cancelled = false;
  // The raw sides are read a group of chunks at a time (about 1 MiB a side, one pread each: a read
  // per 64 Ki-value chunk cost more in calls than in copying); the chunks of a group are then
  // decoded and summed one by one, so the sums are those of the chunks whatever the grouping.
  const uint64_t chunk_raw_bytes = static_cast<uint64_t>(rows_per_chunk) *
                                   std::max(raw_a ? raw_a->view.row_bytes : 0, raw_b ? raw_b->view.row_bytes : 0);
  const size_t group =
      (raw_a || raw_b) && chunk_raw_bytes > 0
          ? std::max<size_t>(1, std::min<size_t>(static_cast<size_t>((uint64_t{1} << 20) / chunk_raw_bytes),
                                                 n_chunks / (4 * static_cast<size_t>(threads))))
          : 1;   // at least 4 groups a thread where the tensor has them, for balance
  // Groups are taken in order, so the tensor's last groups shrink (a group a thread of 1 chunk, of
  // 2, of 4 ... below `group`): a thread that finds no group left waits for at most a chunk or two
  // of the others' work, not a whole 1 MiB group, before the next tensor starts.
  std::vector<size_t> bounds{n_chunks};   // group starts, from the last
  size_t left = n_chunks;
  for (size_t size = 1; size < group && left > 0; size *= 2)
    for (int t = 0; t < threads && left > 0; ++t) bounds.push_back(left -= std::min(left, size));
  while (left > 0) bounds.push_back(left -= std::min(left, group));
  std::reverse(bounds.begin(), bounds.end());
  parallel_chunks(bounds.size() - 1, threads, [&](size_t g, int worker) {
    Buffers& buf = buffers[static_cast<size_t>(worker)];
    const size_t c0 = bounds[g], c1 = bounds[g + 1];
    const int64_t g_r0 = static_cast<int64_t>(c0) * rows_per_chunk,
                  g_r1 = std::min(rows, static_cast<int64_t>(c1) * rows_per_chunk);
    const bool copied_a = raw_a && copy_rows(*raw_a, a_row0 + g_r0, g_r1 - g_r0, buf.ra);
    const bool copied_b = raw_b && copy_rows(*raw_b, b_row0 + g_r0, g_r1 - g_r0, buf.rb);
    for (size_t chunk = c0; chunk < c1; ++chunk) {
      if (options.cancel && options.cancel->load()) {
        std::lock_guard lock(error_mutex);
        cancelled = true;
        return false;
      }
      const int64_t r = static_cast<int64_t>(chunk) * rows_per_chunk, end = std::min(rows, r + rows_per_chunk);
      const size_t n = static_cast<size_t>((end - r) * cols);
      auto slice = [&](const RawSide& side, const std::vector<uint8_t>& raw) {
        return std::span<const uint8_t>(raw.data() + static_cast<uint64_t>(r - g_r0) * side.view.row_bytes,
                                        static_cast<uint64_t>(end - r) * side.view.row_bytes);
      };
      const std::span<const uint8_t> sa = copied_a ? slice(*raw_a, buf.ra) : std::span<const uint8_t>();
      const std::span<const uint8_t> sb = copied_b ? slice(*raw_b, buf.rb) : std::span<const uint8_t>();
      const bool equal = same_layout && copied_a && copied_b && std::memcmp(sa.data(), sb.data(), sa.size()) == 0;
      Status st;
      if (pieces && copied_a && copied_b) {
        const TensorView pa = piece_view(*raw_a, sa, pieces->cols), pb = piece_view(*raw_b, sb, pieces->cols);
        st = validate_view(pa);
        if (st.ok()) st = validate_view(pb);
        if (st.ok()) {
          const size_t step = static_cast<size_t>(pieces->per_step * pieces->cols);
          buf.va.resize(std::max(buf.va.size(), step));
          buf.vb.resize(std::max(buf.vb.size(), step));
          float *x = buf.va.data(), *y = equal ? x : buf.vb.data();
          ChunkLanes lanes;
          for (int64_t p = 0; p < pa.n_rows; p += pieces->per_step) {
            const int64_t q = std::min(pa.n_rows, p + pieces->per_step);
            const size_t m = static_cast<size_t>((q - p) * pieces->cols);
            pieces->decode_a(pa, p, q, x);
            if (!equal) pieces->decode_b(pb, p, q, y);
            if (q == pa.n_rows) sums[chunk] = lanes.finish(x, y, m);
            else lanes.add(x, y, m);
          }
          continue;
        }
      } else {
        buf.va.resize(n);
        if (!equal) buf.vb.resize(n);
        st = copied_a ? decode_copy(raw_a->view, end - r, sa, buf.va.data())
                      : decode(a, ia, a_row0 + r, a_row0 + end, buf.va.data());
        if (st.ok() && !equal)
          st = copied_b ? decode_copy(raw_b->view, end - r, sb, buf.vb.data())
                        : decode(b, ib, b_row0 + r, b_row0 + end, buf.vb.data());
      }
      if (!st.ok()) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::move(st).error();
        return false;
      }
      sums[chunk] = ChunkLanes().finish(buf.va.data(), equal ? buf.va.data() : buf.vb.data(), n);
    }
    return true;
  });
  if (error) return std::move(*error);
  if (cancelled) return make_error(ErrorCode::io, a.path, kNoOffset, "cancelled");
  double sum_sq = 0, ref_sq = 0, a_sq = 0, dot = 0, max_abs = 0;
  for (const ChunkSums& c : sums) {
    max_abs = std::max(max_abs, c.max_abs);
    sum_sq += c.sum_sq;
    ref_sq += c.ref_sq;
    a_sq += c.a_sq;
    dot += c.dot;
  }
  e.elements = static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols);
  const double count = static_cast<double>(e.elements);
  e.max_abs = max_abs;
  e.rmse = std::sqrt(sum_sq / count);
  const double ref_rms = std::sqrt(ref_sq / count);
  e.rel_rmse = ref_rms > 0 ? e.rmse / ref_rms : 0;
  e.cosine = (a_sq > 0 && ref_sq > 0) ? dot / std::sqrt(a_sq * ref_sq) : (a_sq == ref_sq ? 1.0 : 0.0);
  return e;
}

// The shape a side shows in a pair: an expert's slice drops the stacked tensor's outermost dim.
std::vector<int64_t> pair_shape(const Model& m, uint32_t index, int64_t expert) {
  auto s = m.shape(m.tensors[index]);
  std::vector<int64_t> out(s.begin(), s.end());
  if (expert >= 0 && !out.empty()) out.erase(out.begin());
  return out;
}

Result<ValueError> compare_tensors(const Model& a, uint32_t ia, const Model& b, uint32_t ib, const DiffOptions& options,
                                   Readers& readers) {
  const RowShape sa = row_shape(a, a.tensors[ia]), sb = row_shape(b, b.tensors[ib]);
  if (sa.rows != sb.rows || sa.cols != sb.cols)
    return make_error(ErrorCode::bad_shape, a.path, kNoOffset, "the two tensors have different shapes");
  return compare_rows(a, ia, 0, b, ib, 0, sa.rows, sa.cols, options, readers);
}

Result<ValueError> compare_pair(const Model& a, const Model& b, const TensorDiff& d, const DiffOptions& options,
                                Readers& readers) {
  if (d.a == kNone || d.b == kNone) return make_error(ErrorCode::not_found, a.path, kNoOffset, "one side is missing");
  if (d.a_expert < 0 && d.b_expert < 0) return compare_tensors(a, d.a, b, d.b, options, readers);
  if (pair_shape(a, d.a, d.a_expert) != pair_shape(b, d.b, d.b_expert))
    return make_error(ErrorCode::bad_shape, a.path, kNoOffset,
                      "the expert's slice and the tensor have different shapes");
  const RowShape sa = row_shape(a, a.tensors[d.a]), sb = row_shape(b, b.tensors[d.b]);
  const int64_t rows = d.a_expert >= 0 ? sb.rows : sa.rows;
  const int64_t a0 = d.a_expert >= 0 ? d.a_expert * rows : 0, b0 = d.b_expert >= 0 ? d.b_expert * rows : 0;
  if (a0 + rows > sa.rows || b0 + rows > sb.rows)
    return make_error(ErrorCode::bad_shape, a.path, kNoOffset, "expert index beyond the stacked tensor");
  return compare_rows(a, d.a, a0, b, d.b, b0, rows, sa.cols, options, readers);
}

}   // namespace

Result<ValueError> compare_values(const Model& a, uint32_t ia, const Model& b, uint32_t ib,
                                  const DiffOptions& options) {
  Readers readers;
  return compare_tensors(a, ia, b, ib, options, readers);
}

Result<ValueError> compare_values(const Model& a, const Model& b, const TensorDiff& d, const DiffOptions& options) {
  Readers readers;
  return compare_pair(a, b, d, options, readers);
}

std::optional<ExpertKey> split_expert_key(std::string_view key) {
  constexpr std::string_view kExperts = ".experts.";
  const size_t at = key.find(kExperts);
  if (at == std::string_view::npos) return std::nullopt;
  const size_t begin = at + kExperts.size();
  size_t end = begin;
  while (end < key.size() && key[end] >= '0' && key[end] <= '9') ++end;
  if (end == begin || end >= key.size() || key[end] != '.' || end - begin > 9) return std::nullopt;
  ExpertKey k;
  k.expert = std::stoll(std::string(key.substr(begin, end - begin)));
  k.stacked = std::string(key.substr(0, begin)) + std::string(key.substr(end + 1));
  return k;
}

std::string expert_key(std::string_view stacked, int64_t expert) {
  constexpr std::string_view kExperts = ".experts.";
  const size_t at = stacked.find(kExperts);
  if (at == std::string_view::npos || split_expert_key(stacked)) return {};
  const size_t begin = at + kExperts.size();
  return std::string(stacked.substr(0, begin)) + std::to_string(expert) + "." + std::string(stacked.substr(begin));
}

namespace {

// A tensor's diff key: its canonical name, or its native name where no rule maps it.
struct DiffKey {
  bool mapped = false;
  std::string key;
  std::string_view note;
};
DiffKey diff_key(const Tensor& t, std::string_view arch) {
  if (auto c = map_tensor_name(t, arch)) return {true, std::move(c->name), c->note};
  return {false, std::string(t.name), {}};
}
uint64_t key_hash(const DiffKey& k) { return std::hash<std::string_view>{}(k.key) * 2 + k.mapped; }

}   // namespace

DiffReport diff_models(const Model& a, const Model& b, const DiffOptions& options, const DiffSink& sink) {
  DiffReport report;
  Readers readers;
  size_t pairs = 0, done = 0;   // for progress: the pairs whose values are compared
  if (options.values && options.progress) {
    DiffOptions structure;
    diff_models(a, b, structure, [&](const TensorDiff& d) { pairs += d.a != kNone && d.b != kNone; });
  }
  const std::string arch_a = name_map_arch(a), arch_b = name_map_arch(b);
  // B's keys as (hash, tensor), sorted: a few bytes a tensor instead of a map of strings, so pairing
  // a million tensors stays small. A hash hit is confirmed with B's key made again; the first B
  // tensor with a key wins.
  std::vector<std::pair<uint64_t, uint32_t>> b_keys;
  for (uint32_t i = 0; i < b.tensors.size(); ++i)
    if (!(b.tensors[i].flags & kTensorCompanion)) b_keys.emplace_back(key_hash(diff_key(b.tensors[i], arch_b)), i);
  std::sort(b_keys.begin(), b_keys.end());
  std::vector<bool> b_used(b.tensors.size(), false);

  // B's tensor with this key (the first one), or kNone.
  auto find_b = [&](const DiffKey& ka) -> uint32_t {
    const uint64_t h = key_hash(ka);
    for (auto it = std::lower_bound(b_keys.begin(), b_keys.end(), std::make_pair(h, uint32_t{0}));
         it != b_keys.end() && it->first == h; ++it) {
      DiffKey kb = diff_key(b.tensors[it->second], arch_b);
      if (kb.mapped == ka.mapped && kb.key == ka.key) return it->second;
    }
    return kNone;
  };

  // Shape, type and value comparison of one row, counted; nothing once cancelled (the rows still come).
  auto compare = [&](TensorDiff& d) {
    if (report.cancelled) return;
    if (d.a == kNone) return void(++report.only_b);
    if (d.b == kNone) return void(++report.only_a);
    d.shape_differs = pair_shape(a, d.a, d.a_expert) != pair_shape(b, d.b, d.b_expert);
    d.type_differs = a.tensors[d.a].type != b.tensors[d.b].type;
    report.shape_changes += d.shape_differs;
    report.type_changes += d.type_differs;
    if (!options.values) return;
    if (options.cancel && options.cancel->load()) {
      report.cancelled = true;
      return;
    }
    if (d.shape_differs) {
      d.value_problem = "shapes differ";
    } else {
      auto err = compare_pair(a, b, d, options, readers);
      if (err) {
        d.has_values = true;
        d.error = *err;
      } else {
        d.value_problem = err.error().to_string();
      }
    }
    ++done;
    if (options.progress && pairs) options.progress(static_cast<double>(done) / static_cast<double>(pairs));
  };
  auto emit = [&](TensorDiff& d) {
    if (d.b != kNone) b_used[d.b] = true;
    compare(d);
    sink(d);
  };

  for (uint32_t i = 0; i < a.tensors.size(); ++i) {
    if (a.tensors[i].flags & kTensorCompanion) continue;
    DiffKey ka = diff_key(a.tensors[i], arch_a);
    TensorDiff d;
    d.a = i;
    d.canonical = ka.mapped;
    d.note = ka.note;
    d.b = find_b(ka);
    if (d.b == kNone && ka.mapped) {
      // MoE: A's per-expert tensor against B's stacked one ...
      if (auto split = split_expert_key(ka.key)) {
        d.b = find_b(DiffKey{true, split->stacked, {}});
        if (d.b != kNone) d.b_expert = split->expert;
      } else if (a.tensors[i].rank >= 3 && !expert_key(ka.key, 0).empty()) {
        // ... or A's stacked tensor against B's per-expert ones: a row per expert.
        const int64_t experts = a.shape(a.tensors[i]).front();
        std::vector<std::pair<std::string, uint32_t>> per_expert;
        bool any = false;
        for (int64_t e = 0; e < experts && e < (int64_t{1} << 20); ++e) {
          std::string key = expert_key(ka.key, e);
          const uint32_t match = find_b(DiffKey{true, key, {}});
          any = any || match != kNone;
          per_expert.emplace_back(std::move(key), match);
        }
        if (any) {
          for (int64_t e = 0; e < static_cast<int64_t>(per_expert.size()); ++e) {
            TensorDiff x = d;
            x.key = std::move(per_expert[static_cast<size_t>(e)].first);
            x.b = per_expert[static_cast<size_t>(e)].second;
            x.a_expert = e;
            if (x.b != kNone && x.note.empty()) x.note = diff_key(b.tensors[x.b], arch_b).note;
            emit(x);
          }
          continue;
        }
      }
    }
    if (d.b != kNone && d.note.empty()) d.note = diff_key(b.tensors[d.b], arch_b).note;
    d.key = std::move(ka.key);
    emit(d);
  }
  for (uint32_t i = 0; i < b.tensors.size(); ++i) {
    if ((b.tensors[i].flags & kTensorCompanion) || b_used[i]) continue;
    DiffKey kb = diff_key(b.tensors[i], arch_b);
    TensorDiff d;
    d.b = i;
    d.canonical = kb.mapped;
    d.key = std::move(kb.key);
    compare(d);
    sink(d);
  }
  return report;
}

DiffReport diff_models(const Model& a, const Model& b, const DiffOptions& options) {
  std::vector<TensorDiff> rows;
  DiffReport report = diff_models(a, b, options, [&](const TensorDiff& d) { rows.push_back(d); });
  report.rows = std::move(rows);
  return report;
}

}   // namespace akview
