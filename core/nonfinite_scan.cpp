// The NaN/Inf scan of every tensor's values (core/nonfinite_scan.hpp): a table of what each type's
// values are made of (float elements by their bits, one byte codes through a table of their decoded
// values, the float fields of a quantized block), chunks copied by the kernel and scanned on every
// thread, suspect blocks decoded by the reference decoders and their values counted.
#include "core/nonfinite_scan.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "core/decode/decode.hpp"
#include "core/fault_guard.hpp"
#include "core/formats/pytorch.hpp"
#include "core/kernel_copy.hpp"
#include "core/parallel_chunks.hpp"
#include "core/tensor_view.hpp"

namespace akview {
namespace {

// A float field of a quantized block that its values are products of.
enum class Field : uint8_t {
  f16,         // IEEE half: NaN/Inf iff its exponent is all ones; finite ones cannot overflow a product
  f32,         // suspect from 2^100 up (or NaN/Inf): scale * code may overflow float32
  e8m0_half,   // ggml's MXFP4 exponent 2^(e-128): suspect from 2^100 up (e = 255 decodes to 2^127)
  iq1m_d,      // IQ1_M's f16 scale, spread over the top nibbles of its four u16 sub-scale words at +48
};
struct ScaleField {
  uint16_t offset = 0;
  Field field = Field::f16;
};
// The float fields each block type's decoder reads (FORMATS.md §2.7; q8_1's stored sum s is not
// read by decoding). NVFP4's UE4M3 scales are at most 448 and have no NaN/Inf: never suspect.
struct BlockRow {
  TypeId type;
  std::array<ScaleField, 2> fields;
  uint8_t n_fields;
};
using T = TypeId;
constexpr ScaleField H(uint16_t at) { return {at, Field::f16}; }
constexpr std::array kBlockRows = {
    BlockRow{T::q4_0, {H(0)}, 1},
    BlockRow{T::q4_1, {H(0), H(2)}, 2},
    BlockRow{T::q5_0, {H(0)}, 1},
    BlockRow{T::q5_1, {H(0), H(2)}, 2},
    BlockRow{T::q8_0, {H(0)}, 1},
    BlockRow{T::q8_1, {H(0)}, 1},
    BlockRow{T::q2_k, {H(80), H(82)}, 2},
    BlockRow{T::q3_k, {H(108)}, 1},
    BlockRow{T::q4_k, {H(0), H(2)}, 2},
    BlockRow{T::q5_k, {H(0), H(2)}, 2},
    BlockRow{T::q6_k, {H(208)}, 1},
    BlockRow{T::q8_k, {{{0, Field::f32}}}, 1},
    BlockRow{T::iq2_xxs, {H(0)}, 1},
    BlockRow{T::iq2_xs, {H(0)}, 1},
    BlockRow{T::iq3_xxs, {H(0)}, 1},
    BlockRow{T::iq1_s, {H(0)}, 1},
    BlockRow{T::iq4_nl, {H(0)}, 1},
    BlockRow{T::iq3_s, {H(0)}, 1},
    BlockRow{T::iq2_s, {H(0)}, 1},
    BlockRow{T::iq4_xs, {H(0)}, 1},
    BlockRow{T::iq1_m, {{{48, Field::iq1m_d}}}, 1},
    BlockRow{T::tq1_0, {H(52)}, 1},
    BlockRow{T::tq2_0, {H(64)}, 1},
    BlockRow{T::mxfp4, {{{0, Field::e8m0_half}}}, 1},
    BlockRow{T::q1_0, {H(0)}, 1},
    BlockRow{T::q2_0, {H(0)}, 1},
};

const BlockRow* block_row(TypeId type) {
  for (const BlockRow& r : kBlockRows)
    if (r.type == type) return &r;
  return nullptr;
}

inline uint16_t load16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

constexpr uint32_t kSuspectExp = 127 + 100;   // float32 biased exponent from which a scale is decoded

bool suspect_field(const uint8_t* block, ScaleField f) {
  const uint8_t* p = block + f.offset;
  switch (f.field) {
    case Field::f16: return (load16(p) & 0x7C00) == 0x7C00;
    case Field::f32: return ((load32(p) >> 23) & 0xFF) >= kSuspectExp;
    case Field::e8m0_half: return p[0] >= kSuspectExp + 1;   // 2^(e-128)
    case Field::iq1m_d: {
      const uint16_t d = static_cast<uint16_t>((load16(p) >> 12) | ((load16(p + 2) >> 8) & 0x00F0) |
                                               ((load16(p + 4) >> 4) & 0x0F00) | (load16(p + 6) & 0xF000));
      return (d & 0x7C00) == 0x7C00;
    }
  }
  return true;
}

// How a type's values are scanned.
enum class Scan : uint8_t { none, f16, bf16, f32, f64, byte_table, blocks };

// One byte codes (FP8 and E8M0 elements): which decode to NaN (1) or Inf (2), by decoding all 256.
struct ByteTable {
  std::array<uint8_t, 256> cls{};
  bool any = false;
};
ByteTable make_byte_table(TypeId type) {
  ByteTable t;
  std::array<uint8_t, 256> codes;
  for (int i = 0; i < 256; ++i) codes[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
  TensorView v;
  v.type = type;
  v.n_rows = 1;
  v.n_cols = 256;
  v.row_bytes = 256;
  v.data = codes;
  std::array<float, 256> out{};
  if (!decode_rows(v, 0, 1, out.data()).ok()) return t;
  for (size_t i = 0; i < 256; ++i) {
    t.cls[i] = std::isnan(out[i]) ? 1 : std::isinf(out[i]) ? 2 : 0;
    t.any = t.any || t.cls[i] != 0;
  }
  return t;
}
const ByteTable& byte_table(TypeId type) {
  static const auto tables = [] {
    std::array<ByteTable, static_cast<size_t>(TypeId::count_)> all{};
    for (TypeId t : {T::f8_e4m3, T::f8_e5m2, T::f8_e8m0, T::f8_e4m3fnuz, T::f8_e5m2fnuz})
      all[static_cast<size_t>(t)] = make_byte_table(t);
    return all;
  }();
  return tables[static_cast<size_t>(type)];
}

Scan scan_kind(TypeId type) {
  switch (type) {
    case T::f16: return Scan::f16;
    case T::bf16: return Scan::bf16;
    case T::f32:
    case T::c64: return Scan::f32;
    case T::f64:
    case T::c128: return Scan::f64;
    default: break;
  }
  if (!can_decode(type)) return Scan::none;
  if (block_row(type)) return Scan::blocks;
  if (type_info(type).block_bytes == 1 && type_info(type).block_elems == 1 && byte_table(type).any)
    return Scan::byte_table;
  return Scan::none;
}

typedef uint16_t U16x32 __attribute__((vector_size(64)));
typedef uint32_t U32x16 __attribute__((vector_size(64)));
typedef uint64_t U64x8 __attribute__((vector_size(64)));

// Whether any element of W bits has its exponent (mask) all ones: one vector OR a step.
template <typename Word, typename Vec>
bool any_exponent_ones(const uint8_t* p, size_t n_words, Word mask) {
  constexpr size_t kLanes = sizeof(Vec) / sizeof(Word);
  Vec acc{};
  size_t i = 0;
  for (; i + kLanes <= n_words; i += kLanes) {
    Vec v;
    std::memcpy(&v, p + i * sizeof(Word), sizeof v);
    acc |= (Vec)((v & mask) == mask);
  }
  for (size_t k = 0; k < kLanes; ++k)
    if (acc[k]) return true;
  for (; i < n_words; ++i) {
    Word w;
    std::memcpy(&w, p + i * sizeof(Word), sizeof w);
    if ((w & mask) == mask) return true;
  }
  return false;
}

// The exact count of elements whose exponent is all ones: NaN when the mantissa is non-zero.
template <typename Word>
void count_words(const uint8_t* p, size_t n_words, Word exp_mask, Word man_mask, NonFiniteCount& c) {
  for (size_t i = 0; i < n_words; ++i) {
    Word w;
    std::memcpy(&w, p + i * sizeof(Word), sizeof w);
    if ((w & exp_mask) != exp_mask) continue;
    (w & man_mask ? c.nan : c.inf) += 1;
    ++c.blocks;
    c.first = std::min<uint64_t>(c.first, i * sizeof(Word));
  }
}

template <typename Word, typename Vec>
void scan_words(std::span<const uint8_t> b, Word exp_mask, Word man_mask, NonFiniteCount& c) {
  const size_t n = b.size() / sizeof(Word);
  if (any_exponent_ones<Word, Vec>(b.data(), n, exp_mask)) count_words<Word>(b.data(), n, exp_mask, man_mask, c);
}

// A suspect block decoded by the reference decoder and its values counted.
void count_decoded_block(TypeId type, const uint8_t* block, uint64_t at, NonFiniteCount& c) {
  const TypeInfo& info = type_info(type);
  TensorView v;
  v.type = type;
  v.n_rows = 1;
  v.n_cols = info.block_elems;
  v.row_bytes = info.block_bytes;
  v.data = {block, info.block_bytes};
  float out[256];
  if (info.block_elems > 256 || !decode_rows(v, 0, 1, out).ok()) return;
  uint64_t nan = 0, inf = 0;
  for (uint32_t k = 0; k < info.block_elems; ++k) nan += std::isnan(out[k]), inf += std::isinf(out[k]);
  if (nan + inf == 0) return;
  c.nan += nan, c.inf += inf, ++c.blocks;
  c.first = std::min(c.first, at);
}

void scan_blocks(TypeId type, const BlockRow& row, std::span<const uint8_t> b, NonFiniteCount& c) {
  const size_t bb = type_info(type).block_bytes, n = b.size() / bb;
  const uint8_t* p = b.data();
  if (row.n_fields == 1 && row.fields[0].field == Field::f16) {   // the common case, one f16 a block
    const size_t at = row.fields[0].offset;
    for (size_t i = 0; i < n; ++i)
      if ((load16(p + i * bb + at) & 0x7C00) == 0x7C00) count_decoded_block(type, p + i * bb, i * bb, c);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    bool suspect = false;
    for (uint8_t f = 0; f < row.n_fields; ++f) suspect = suspect || suspect_field(p + i * bb, row.fields[f]);
    if (suspect) count_decoded_block(type, p + i * bb, i * bb, c);
  }
}

}   // namespace

bool type_can_be_nonfinite(TypeId type) {
  return static_cast<size_t>(type) < static_cast<size_t>(TypeId::count_) && scan_kind(type) != Scan::none;
}

NonFiniteCount count_nonfinite(TypeId type, std::span<const uint8_t> b) {
  NonFiniteCount c;
  switch (scan_kind(type)) {
    case Scan::none: break;
    case Scan::f16: scan_words<uint16_t, U16x32>(b, 0x7C00, 0x03FF, c); break;
    case Scan::bf16: scan_words<uint16_t, U16x32>(b, 0x7F80, 0x007F, c); break;
    case Scan::f32: scan_words<uint32_t, U32x16>(b, 0x7F800000u, 0x007FFFFFu, c); break;
    case Scan::f64: scan_words<uint64_t, U64x8>(b, 0x7FF0000000000000ull, 0x000FFFFFFFFFFFFFull, c); break;
    case Scan::byte_table: {
      const ByteTable& t = byte_table(type);
      for (size_t i = 0; i < b.size(); ++i) {
        const uint8_t k = t.cls[b[i]];
        if (!k) continue;
        (k == 1 ? c.nan : c.inf) += 1;
        ++c.blocks;
        c.first = std::min<uint64_t>(c.first, i);
      }
      break;
    }
    case Scan::blocks: scan_blocks(type, *block_row(type), b, c); break;
  }
  return c;
}

namespace {

// One unit of work: a byte range of a plain tensor's data, or a whole composite / strided tensor.
struct Unit {
  uint32_t tensor = 0;
  uint64_t begin = 0, len = 0;
  bool whole = false;
};

struct UnitResult {
  NonFiniteCount count;    // first: from the tensor's data start (composite: see scan_composite)
  uint32_t file = kNone;   // composite: the file of the first suspect scale (its absolute offset in count.first)
  std::optional<Error> error;
};

// Counts of `type` over `src` (bytes of the mapping `reader` reads), through the kernel's copy into
// `buf`, else read in place under the fault guard (which reports a file cut short).
Status count_range(TypeId type, std::span<const uint8_t> src, const KernelCopy& reader, std::vector<uint8_t>& buf,
                   NonFiniteCount& c) {
  buf.resize(src.size());
  if (reader.read(src.data(), src.size(), buf.data())) {
    c = count_nonfinite(type, buf);
    return {};
  }
  if (Status s = check_mapped_range(src); !s.ok()) return s;
  return guard_reads([&] { c = count_nonfinite(type, src); });
}

// Composite tensors: values are code * scale (+ bias) (* global scale), so only rows with a scale,
// bias or global scale that is NaN/Inf or large are decoded. U8 scales (E8M0, E4M3) are suspect at
// 0x7F/0xFF patterns or from 0xE4 up, a superset of the codes that decode to NaN/Inf or overflow.
struct ElementTest {
  size_t bytes = 0;
  bool (*suspect)(const uint8_t*) = nullptr;
};
ElementTest element_test(TypeId t) {
  switch (t) {
    case T::f16: return {2, [](const uint8_t* p) { return (load16(p) & 0x7C00) == 0x7C00; }};
    case T::bf16: return {2, [](const uint8_t* p) { return ((load16(p) >> 7) & 0xFF) >= kSuspectExp; }};
    case T::f32: return {4, [](const uint8_t* p) { return ((load32(p) >> 23) & 0xFF) >= kSuspectExp; }};
    default: return {1, [](const uint8_t* p) { return (p[0] & 0x7F) == 0x7F || p[0] >= 0xE4; }};
  }
}

Status scan_composite(const Model& model, const Tensor& t, const TensorView& v, UnitResult& r) {
  const Status mapped = check_view_mapped(v);
  if (!mapped.ok()) return mapped;
  const QuantInfo& q = model.quants[t.quant];
  const int64_t groups_per_row = v.group_size ? v.n_cols / v.group_size : 0;
  // Rows to decode, each with the first suspect scale or bias that put it there (its offset and file).
  struct SuspectRow {
    int64_t row;
    uint64_t at;
    uint32_t file;
  };
  std::vector<SuspectRow> rows;
  std::optional<SuspectRow> global;   // a suspect global scale: every row is decoded
  auto scan_companion = [&](std::span<const uint8_t> bytes, TypeId type, uint32_t companion, bool per_row) {
    const ElementTest test = element_test(type);
    const size_t n = bytes.size() / test.bytes;
    const uint64_t base = companion != kNone ? model.tensors[companion].offset : kNoOffset;
    const uint32_t file = companion != kNone ? model.tensors[companion].file : t.file;
    return guard_reads([&] {
      for (size_t i = 0; i < n; ++i) {
        if (!test.suspect(bytes.data() + i * test.bytes)) continue;
        const uint64_t at = base == kNoOffset ? kNoOffset : base + i * test.bytes;
        if (!per_row || groups_per_row == 0) {
          if (!global) global = SuspectRow{0, at, file};
        } else if (const int64_t row = static_cast<int64_t>(i) / groups_per_row;
                   rows.empty() || rows.back().row != row) {
          rows.push_back({row, at, file});
        }
      }
    });
  };
  if (Status s = scan_companion(v.scales, v.scales_type, q.scales, true); !s.ok()) return s;
  if (Status s = scan_companion(v.biases, v.biases_type, q.biases, true); !s.ok()) return s;
  if (Status s = scan_companion(v.global_scale, T::f32, q.global_scale, false); !s.ok()) return s;
  if (rows.empty() && !global) return {};
  // One entry a row, its first suspect: a scale before a bias (scales were scanned first).
  std::stable_sort(rows.begin(), rows.end(), [](const SuspectRow& a, const SuspectRow& b) { return a.row < b.row; });
  rows.erase(
      std::unique(rows.begin(), rows.end(), [](const SuspectRow& a, const SuspectRow& b) { return a.row == b.row; }),
      rows.end());
  std::vector<float> out(static_cast<size_t>(v.n_cols));
  // Decodes one row and counts it; the problem's offset is that of the first row found non-finite.
  auto count_row = [&](int64_t row, const SuspectRow& why) -> Status {
    if (Status s = decode_rows(v, row, row + 1, out.data()); !s.ok()) return s;
    uint64_t nan = 0, inf = 0;
    for (float x : out) nan += std::isnan(x), inf += std::isinf(x);
    if (nan + inf == 0) return {};
    if (!r.count.any()) r.count.first = why.at, r.file = why.file;
    r.count.nan += nan, r.count.inf += inf, ++r.count.blocks;
    return {};
  };
  if (global) {
    size_t next = 0;   // a row's own suspect scale, where it has one, names it better than the global scale
    for (int64_t row = 0; row < v.n_rows; ++row) {
      while (next < rows.size() && rows[next].row < row) ++next;
      const SuspectRow& why = next < rows.size() && rows[next].row == row ? rows[next] : *global;
      if (Status s = count_row(row, why); !s.ok()) return s;
    }
  } else {
    for (const SuspectRow& sr : rows)
      if (Status s = count_row(sr.row, sr); !s.ok()) return s;
  }
  return {};
}

std::string count_text(const NonFiniteCount& c) {
  if (c.nan && c.inf) return fmt::format("{} NaN and {} Inf values", c.nan, c.inf);
  return c.nan ? fmt::format("{} NaN value{}", c.nan, c.nan == 1 ? "" : "s")
               : fmt::format("{} Inf value{}", c.inf, c.inf == 1 ? "" : "s");
}

}   // namespace

std::vector<ValueProblem> scan_nonfinite(const Model& model, const NonFiniteScanOptions& options) {
  std::vector<ValueProblem> problems;
  std::vector<Unit> units;
  std::vector<std::optional<TensorView>> views(model.tensors.size());
  for (uint32_t i = 0; i < model.tensors.size(); ++i) {
    const Tensor& t = model.tensors[i];
    if (t.flags & (kTensorCompanion | kTensorUnsupported)) continue;
    const TypeInfo& info = type_info(t.type);
    const bool composite = info.kind == TypeKind::composite;
    if (!composite && !type_can_be_nonfinite(t.type)) continue;
    if (t.flags & kTensorNonContiguous) {
      units.push_back({i, 0, t.nbytes, true});
      continue;
    }
    auto v = make_tensor_view(model, t);
    if (!v) {
      Error e = std::move(v).error();
      problems.push_back(ValueProblem{
          i, e.file, e.offset, fmt::format("tensor '{}': values not scanned: {}", t.name, e.message), {}, e.code});
      continue;
    }
    views[i] = *v;
    if (composite) {
      if (can_decode(t.type)) units.push_back({i, 0, v->data.size(), true});
      continue;
    }
    const uint64_t step = std::max<uint64_t>(1, options.chunk_bytes / info.block_bytes) * info.block_bytes;
    const uint64_t size = v->data.size() / info.block_bytes * info.block_bytes;
    for (uint64_t at = 0; at < size; at += step) units.push_back({i, at, std::min(step, size - at), false});
  }
  uint64_t total = 0;
  for (const Unit& u : units) total += u.len;
  // One kernel copy for each file that has plain ranges to scan (each finds its file in /proc/self/maps).
  std::vector<std::unique_ptr<const KernelCopy>> readers(model.files.size());
  for (const Unit& u : units) {
    const Tensor& t = model.tensors[u.tensor];
    if (!u.whole && !(t.flags & kTensorNonContiguous) && !readers[t.file])
      readers[t.file] = std::make_unique<const KernelCopy>(model.files[t.file].map.data());
  }
  std::vector<UnitResult> results(units.size());
  const int threads = options.threads > 0 ? options.threads : machine_threads();
  std::vector<std::vector<uint8_t>> buffers(static_cast<size_t>(threads));
  std::vector<uint64_t> done_bytes(units.size() + 1, 0);
  for (size_t k = 0; k < units.size(); ++k) done_bytes[k + 1] = done_bytes[k] + units[k].len;
  parallel_chunks(
      units.size(), threads,
      [&](size_t k, int worker) {
        if (options.cancel && options.cancel->load()) return false;
        const Unit& u = units[k];
        const Tensor& t = model.tensors[u.tensor];
        UnitResult& r = results[k];
        Status st;
        if (t.flags & kTensorNonContiguous) {
          auto bytes = torch_tensor_bytes(model, u.tensor);
          if (bytes) r.count = count_nonfinite(t.type, *bytes);
          else st = std::move(bytes).error();
        } else if (u.whole) {
          st = scan_composite(model, t, *views[u.tensor], r);
        } else {
          const auto src = views[u.tensor]->data.subspan(u.begin, u.len);
          st = count_range(t.type, src, *readers[t.file], buffers[static_cast<size_t>(worker)], r.count);
          if (r.count.any()) r.count.first += u.begin;
        }
        if (!st.ok()) r.error = std::move(st).error();
        return true;
      },
      [&](size_t finished) {
        if (options.progress && total) options.progress(static_cast<double>(done_bytes[finished]) / total);
      });
  // Merged per tensor, in the model's order.
  for (size_t k = 0; k < units.size();) {
    const uint32_t ti = units[k].tensor;
    const Tensor& t = model.tensors[ti];
    NonFiniteCount c;
    uint32_t file = t.file;
    std::optional<Error> error;
    for (; k < units.size() && units[k].tensor == ti; ++k) {
      const UnitResult& r = results[k];
      if (r.error && !error) error = r.error;
      c.nan += r.count.nan, c.inf += r.count.inf, c.blocks += r.count.blocks;
      if (r.count.any() && c.first == ~uint64_t{0}) c.first = r.count.first, file = r.file == kNone ? t.file : r.file;
    }
    const std::string& path = model.files[t.file].path;
    if (error) {
      problems.push_back(ValueProblem{ti, error->file.empty() ? path : error->file, error->offset,
                                      fmt::format("tensor '{}': values not scanned: {}", t.name, error->message), c,
                                      error->code});
      continue;
    }
    if (!c.any()) continue;
    const TypeInfo& info = type_info(t.type);
    std::string what;
    if (info.kind == TypeKind::composite)
      what = fmt::format("{} in {} rows: a scale or bias is NaN, Inf or overflows (the first such is here)",
                         count_text(c), c.blocks);
    else if (t.flags & kTensorNonContiguous)
      what = fmt::format("{} (a strided view: here is its first element's storage)", count_text(c));
    else if (info.kind == TypeKind::block_quant)
      what =
          fmt::format("{} in {} of {} blocks: a block's scale is NaN, Inf or overflows (the first such block is here)",
                      count_text(c), c.blocks, t.nbytes / info.block_bytes);
    else
      what = fmt::format("{} of {} (the first is here)", count_text(c), t.nbytes / info.block_bytes * info.block_elems);
    const uint64_t at = info.kind == TypeKind::composite   ? c.first
                        : (t.flags & kTensorNonContiguous) ? t.offset
                                                           : t.offset + c.first;
    problems.push_back(ValueProblem{ti, model.files[file].path, at,
                                    fmt::format("tensor '{}' ({}): {}", t.name, info.name, what), c, std::nullopt});
  }
  if (options.cancel && options.cancel->load()) problems.clear();
  return problems;
}

}   // namespace akview
