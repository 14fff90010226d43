// Plain dtypes in the step-through: one element (F4: a byte of two, F6: 3 bytes of four) is its own
// group; the step shows its bytes, its sign / exponent / mantissa fields where it is a float, and how
// it widens to float32. The value comes from decode_rows on that block, so it is the decoder's.
#include <array>

#include <fmt/format.h>

#include "core/decode/decode.hpp"
#include "core/decode/float_formats.hpp"
#include "core/explain/block_steps.hpp"
#include "core/fault_guard.hpp"

namespace akview::explain {
namespace {

struct PlainRow {
  TypeId type;
  uint8_t exp_bits, man_bits;   // 0, 0: not split into float fields
  std::string_view how;
};

using T = TypeId;
constexpr std::array kPlain = {
    PlainRow{T::f32, 8, 23, "IEEE binary32, little-endian: the value as stored"},
    PlainRow{T::f16, 5, 10, "IEEE binary16 (bias 15), widened exactly to float32"},
    PlainRow{T::bf16, 8, 7, "bfloat16: the top 16 bits of a float32 (bits << 16), exact"},
    PlainRow{T::f64, 11, 52, "IEEE binary64, rounded to the nearest float32"},
    PlainRow{T::i8, 0, 0, "two's complement int8 -> float32 (exact)"},
    PlainRow{T::i16, 0, 0, "two's complement int16 -> float32 (exact)"},
    PlainRow{T::i32, 0, 0, "two's complement int32 -> float32 (rounded to nearest beyond 2^24)"},
    PlainRow{T::i64, 0, 0, "two's complement int64 -> float32 (rounded to nearest beyond 2^24)"},
    PlainRow{T::u8, 0, 0, "uint8 -> float32 (exact)"},
    PlainRow{T::u16, 0, 0, "uint16 -> float32 (exact)"},
    PlainRow{T::u32, 0, 0, "uint32 -> float32 (rounded to nearest beyond 2^24)"},
    PlainRow{T::u64, 0, 0, "uint64 -> float32 (rounded to nearest beyond 2^24)"},
    PlainRow{T::boolean, 0, 0, "bool: any non-zero byte is 1"},
    PlainRow{T::f8_e5m2, 5, 2, "FP8 E5M2 (bias 15, IEEE-like with inf and NaN): the top byte of an f16"},
    PlainRow{T::f8_e4m3, 4, 3, "FP8 E4M3FN (bias 7, no inf; 0x7f / 0xff are NaN; max 448)"},
    PlainRow{T::f8_e8m0, 8, 0, "E8M0: a power of two 2^(e-127); 0xff is NaN"},
    PlainRow{T::f8_e4m3fnuz, 4, 3, "FP8 E4M3FNUZ (bias 8, 0x80 is the only NaN, no -0)"},
    PlainRow{T::f8_e5m2fnuz, 5, 2, "FP8 E5M2FNUZ (bias 16, 0x80 is the only NaN, no -0)"},
    PlainRow{T::f4, 0, 0, "two E2M1 values per byte (element 2k: low nibble, assumed): ±{0, .5, 1, 1.5, 2, 3, 4, 6}"},
    PlainRow{T::f6_e2m3, 0, 0,
             "four E2M3 values per 3 bytes, a little-endian bit stream (element k at bits 6k..6k+5, assumed)"},
    PlainRow{T::f6_e3m2, 0, 0,
             "four E3M2 values per 3 bytes, a little-endian bit stream (element k at bits 6k..6k+5, assumed)"},
    PlainRow{T::c64, 0, 0, "complex64: two float32, the real part is shown"},
    PlainRow{T::c128, 0, 0, "complex128: two float64, the real part (rounded to float32) is shown"},
};

const PlainRow* find_plain(TypeId t) {
  for (const auto& r : kPlain)
    if (r.type == t) return &r;
  return nullptr;
}

}   // namespace

Status explain_plain(const TensorView& v, const SpanOrigins& origins, GroupExplanation& e) {
  const TypeInfo& info = type_info(v.type);
  const uint32_t n = info.block_elems;
  const size_t block = static_cast<size_t>(e.col) / n;
  const size_t in_data = static_cast<size_t>(e.row) * v.row_bytes + block * info.block_bytes;
  e.group_col = static_cast<int64_t>(block * n);
  e.group_n = n;
  e.bytes.resize(info.block_bytes);
  e.bytes_offset = origins.data + in_data;
  AKV_TRY(copy_mapped(v.data.subspan(in_data, info.block_bytes), e.bytes.data()));
  // The decoder on a one-block view over the copied bytes: the value exactly as decode_rows gives it.
  TensorView one;
  one.type = v.type;
  one.n_rows = 1;
  one.n_cols = n;
  one.data = e.bytes;
  one.row_bytes = info.block_bytes;
  e.values.assign(n, 0.0f);
  AKV_TRY(decode_rows(one, 0, 1, e.values.data()));
  const PlainRow* row = find_plain(v.type);
  e.steps.push_back(
      {fmt::format("element bytes ({})", info.name),
       fmt::format("bytes {} @{:#x} (little-endian)", hex_bytes(e.bytes.data(), e.bytes.size()), e.bytes_offset),
       {}});
  if (row && row->exp_bits > 0 && info.block_bytes <= 8) {
    uint64_t raw = 0;
    for (size_t i = 0; i < info.block_bytes; ++i) raw |= static_cast<uint64_t>(e.bytes[i]) << (8 * i);
    const int total = 8 * static_cast<int>(info.block_bytes);
    const bool has_sign = row->exp_bits + row->man_bits < total;
    const uint64_t man = raw & ((uint64_t{1} << row->man_bits) - 1);
    const uint64_t exp = (raw >> row->man_bits) & ((uint64_t{1} << row->exp_bits) - 1);
    const uint64_t sign = has_sign ? (raw >> (total - 1)) & 1 : 0;
    e.steps.push_back({"fields",
                       fmt::format("0x{:0{}x}: sign {}, exponent {} ({} bits), mantissa 0x{:x} ({} bits)", raw,
                                   total / 4, sign, exp, row->exp_bits, man, row->man_bits),
                       {static_cast<double>(sign), static_cast<double>(exp), static_cast<double>(man)}});
  }
  const float x = e.values[static_cast<size_t>(e.col - e.group_col)];
  e.steps.push_back({"to float32", fmt::format("{}; column {}: {}", row ? row->how : info.name, e.col, num(x)), {x}});
  return {};
}

}   // namespace akview::explain
