// GGUF metadata values (FORMATS.md §2.3, §2.4): one table row per gguf_type, a reader for one
// value, and the on-demand array decoder.
//
//   scalar   : the value, little-endian, fixed width (BOOL is one byte)
//   STRING   : u64 length | bytes (UTF-8, no NUL)
//   ARRAY    : u32 element type | u64 count | count elements back to back, each encoded as above
//              without its own type code (an element that is an ARRAY carries type + count again)
#include "core/formats/gguf_meta.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "core/checked.hpp"
#include "core/formats/gguf.hpp"

namespace akview {
namespace {

using M = MetaType;
// Indexed by gguf_type code; a static_assert below keeps the rows in order.
constexpr std::array<GgufValueType, kGgufValueTypeCount> kValueTypes = {{
    {M::u8, 1, 1, false, false},
    {M::i8, 1, 1, true, false},
    {M::u16, 2, 2, false, false},
    {M::i16, 2, 2, true, false},
    {M::u32, 4, 4, false, false},
    {M::i32, 4, 4, true, false},
    {M::f32, 4, 4, false, true},
    {M::boolean, 1, 1, false, false},
    {M::string, 0, 8, false, false},   // u64 length
    {M::array, 0, 12, false, false},   // u32 type + u64 count
    {M::u64, 8, 8, false, false},
    {M::i64, 8, 8, true, false},
    {M::f64, 8, 8, false, true},
}};

constexpr bool value_rows_in_order() {
  for (size_t i = 0; i < kValueTypes.size(); ++i)
    if (static_cast<size_t>(kValueTypes[i].type) != i) return false;
  return true;
}
static_assert(value_rows_in_order(), "kValueTypes rows must follow the gguf_type codes");

// gguf.cpp caps strings at 1 GiB (GGUF_MAX_STRING_LENGTH); a longer one is hostile, not a model.
constexpr uint64_t kMaxStringBytes = uint64_t{1} << 30;

void add_note(const GgufValueContext& ctx, const ByteReader& r, uint64_t offset, ErrorCode code, std::string message,
              bool fails_check) {
  if (!ctx.notes) return;
  ctx.notes->push_back(Note{code, std::string(r.file()), offset, std::move(message), fails_check});
}

Status read_string(ByteReader& r, const GgufValueContext& ctx, std::string_view& out, bool check_utf8) {
  const uint64_t at = r.file_offset();
  const uint64_t len = r.u64("string length");
  if (!r.ok()) return r.error();
  if (len > r.remaining() || len > kMaxStringBytes)
    return make_error(
        ErrorCode::count_too_large, r.file(), at,
        fmt::format("{}: string length {} exceeds the {} bytes that remain", ctx.what, len, r.remaining()));
  out = r.chars(len, "string");
  if (check_utf8 && !is_valid_utf8(out))
    add_note(ctx, r, at, ErrorCode::bad_utf8, fmt::format("{}: string is not valid UTF-8", ctx.what), true);
  return {};
}

Status read_scalar(ByteReader& r, const GgufValueType& t, const GgufValueContext& ctx, MetaValue& out) {
  const uint64_t at = r.file_offset();
  auto raw = r.bytes(t.fixed_bytes, "metadata value");
  if (!r.ok()) return r.error();
  uint64_t bits = 0;
  std::memcpy(&bits, raw.data(), t.fixed_bytes);   // little-endian host: low bytes first
  if (t.is_float) {
    if (t.fixed_bytes == 4) {
      float f;
      uint32_t b32 = static_cast<uint32_t>(bits);
      std::memcpy(&f, &b32, 4);
      out.num.f = f;
    } else {
      std::memcpy(&out.num.f, &bits, 8);
    }
  } else if (t.is_signed) {
    const unsigned shift = 64 - 8 * t.fixed_bytes;   // sign-extend from the value's width
    out.num.i = static_cast<int64_t>(bits << shift) >> shift;
  } else if (t.type == MetaType::boolean) {
    // The spec allows only 0 and 1; ggml reads any non-zero byte as true, and so do we.
    if (bits > 1)
      add_note(ctx, r, at, ErrorCode::schema, fmt::format("{}: BOOL byte is {}, not 0 or 1", ctx.what, bits), true);
    out.num.u = bits != 0;
  } else {
    out.num.u = bits;
  }
  return {};
}

Status read_array(ByteReader& r, int depth, const GgufValueContext& ctx, MetaValue& out) {
  const uint64_t at = r.file_offset();
  const uint32_t elem_code = r.u32("array element type");
  const uint64_t count = r.u64("array length");
  if (!r.ok()) return r.error();
  const GgufValueType* elem = gguf_value_type(elem_code);
  if (!elem)
    return make_error(ErrorCode::unknown_type, r.file(), at,
                      fmt::format("{}: array element type {} is not a GGUF value type (0-12)", ctx.what, elem_code));
  if (elem->type == MetaType::array && depth + 1 >= kGgufMaxArrayDepth)
    return make_error(
        ErrorCode::unsupported, r.file(), at,
        fmt::format("{}: arrays nested more than {} deep are not supported", ctx.what, kGgufMaxArrayDepth));
  // Every element needs at least min_bytes: a count that cannot fit is refused before any walk.
  auto need = checked_mul(count, elem->min_bytes);
  if (!need || *need > r.remaining())
    return make_error(
        ErrorCode::count_too_large, r.file(), at + 4,
        fmt::format("{}: array of {} {} elements needs {} bytes but only {} remain", ctx.what, count,
                    meta_type_name(elem->type),
                    need ? fmt::format("at least {}", *need) : std::string("more than 2^64"), r.remaining()));
  out.type = MetaType::array;
  out.elem_type = elem->type;
  out.count = count;
  out.depth = 0;
  out.elems_offset = r.file_offset();
  if (elem->fixed_bytes) {
    if (elem->type == MetaType::boolean && ctx.notes) {
      auto bytes = r.bytes(count, "array");
      for (uint64_t i = 0; i < bytes.size(); ++i)
        if (bytes[i] > 1) {
          add_note(ctx, r, out.elems_offset + i, ErrorCode::schema,
                   fmt::format("{}: BOOL element {} is {}, not 0 or 1", ctx.what, i, bytes[i]), true);
          break;
        }
    } else {
      r.skip(*need, "array");
    }
  } else if (elem->type == MetaType::string) {
    // Walk to the end without materialising anything (tokenizer arrays hold 250k strings).
    bool bad_utf8_seen = false;
    for (uint64_t i = 0; i < count; ++i) {
      std::string_view s;
      AKV_TRY(read_string(r, ctx, s, false));
      if (!bad_utf8_seen && ctx.notes && !is_valid_utf8(s)) {
        bad_utf8_seen = true;
        add_note(ctx, r, r.file_offset() - s.size() - 8, ErrorCode::bad_utf8,
                 fmt::format("{}: element {} is not valid UTF-8", ctx.what, i), true);
      }
    }
  } else {
    // Array of arrays: read each inner array structurally, so the next key starts where it should.
    if (depth == 0 && ctx.notes)
      add_note(ctx, r, at, ErrorCode::unsupported,
               fmt::format("{}: array of arrays (allowed by the GGUF spec; ggml's reader refuses it)", ctx.what),
               false);
    for (uint64_t i = 0; i < count; ++i) {
      MetaValue inner;
      AKV_TRY(read_array(r, depth + 1, GgufValueContext{nullptr, ctx.what}, inner));
      out.depth = static_cast<uint8_t>(std::max<int>(out.depth, inner.depth + 1));
    }
  }
  if (!r.ok()) return r.error();
  out.elems_bytes = r.file_offset() - out.elems_offset;
  return {};
}

}   // namespace

const GgufValueType* gguf_value_type(uint64_t code) { return code < kValueTypes.size() ? &kValueTypes[code] : nullptr; }

Status read_gguf_value(ByteReader& reader, MetaType type, int depth, const GgufValueContext& ctx, MetaValue& out) {
  const GgufValueType* t = gguf_value_type(static_cast<uint64_t>(type));
  if (!t)
    return make_error(ErrorCode::unknown_type, reader.file(), reader.file_offset(),
                      fmt::format("{}: not a GGUF value type", ctx.what));
  out.type = t->type;
  if (t->type == MetaType::string) return read_string(reader, ctx, out.str, true);
  if (t->type == MetaType::array) return read_array(reader, depth, ctx, out);
  return read_scalar(reader, *t, ctx, out);
}

std::optional<int64_t> meta_integer(const MetaValue& value) {
  const GgufValueType* t = gguf_value_type(static_cast<uint64_t>(value.type));
  if (!t || t->fixed_bytes == 0 || t->is_float || t->type == MetaType::boolean) return std::nullopt;
  if (t->is_signed) return value.num.i;
  if (value.num.u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(value.num.u);
}

bool is_valid_utf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    // Names and keys are mostly ASCII: skip 8 bytes at a time while no high bit is set.
    while (end - p >= 8) {
      uint64_t word;
      std::memcpy(&word, p, 8);
      if (word & 0x8080808080808080ull) break;
      p += 8;
    }
    if (p == end) break;
    if (*p < 0x80) {
      ++p;
      continue;
    }
    int extra;
    uint32_t cp;
    if ((*p & 0xE0) == 0xC0) extra = 1, cp = *p & 0x1F;
    else if ((*p & 0xF0) == 0xE0) extra = 2, cp = *p & 0x0F;
    else if ((*p & 0xF8) == 0xF0) extra = 3, cp = *p & 0x07;
    else return false;
    if (end - p <= extra) return false;
    for (int i = 1; i <= extra; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    static constexpr uint32_t kMinForLength[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLength[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    p += extra + 1;
  }
  return true;
}

namespace {

// Skips `n` elements of type `elem` at the reader's position, validating each length against the
// bytes that remain (strings and nested arrays have no fixed size, so they are walked, never copied).
Status skip_gguf_elements(ByteReader& r, const GgufValueType& elem, uint64_t n, const GgufValueContext& ctx) {
  if (elem.fixed_bytes) {
    auto bytes = checked_mul(n, elem.fixed_bytes);
    if (!bytes || *bytes > r.remaining())
      return make_error(
          ErrorCode::count_too_large, r.file(), r.file_offset(),
          fmt::format("{}: skipping {} elements runs past the array's {} remaining bytes", ctx.what, n, r.remaining()));
    r.skip(*bytes, "array");
    return {};
  }
  for (uint64_t i = 0; i < n; ++i) {
    if (elem.type == MetaType::string) {
      const uint64_t at = r.file_offset();
      const uint64_t len = r.u64("string length");
      if (!r.ok()) return r.error();
      if (len > r.remaining() || len > kMaxStringBytes)
        return make_error(
            ErrorCode::count_too_large, r.file(), at,
            fmt::format("{}: string length {} exceeds the {} bytes that remain", ctx.what, len, r.remaining()));
      r.skip(len, "string");
    } else {
      MetaValue inner;   // a nested array: read structurally (a byte range), never materialised
      AKV_TRY(read_array(r, 1, ctx, inner));
    }
  }
  return {};
}

}   // namespace

Result<std::vector<MetaValue>> read_gguf_array(const Model& model, const MetaEntry& entry, const MetaValue& array,
                                               uint64_t max_elems) {
  return read_gguf_array_range(model, entry, array, 0, max_elems);
}

Result<std::vector<MetaValue>> read_gguf_array_range(const Model& model, const MetaEntry& entry, const MetaValue& array,
                                                     uint64_t first, uint64_t max_elems) {
  if (entry.file >= model.files.size())
    return make_error(ErrorCode::not_found, model.path, kNoOffset, "metadata entry refers to no file");
  const SourceFile& file = model.files[entry.file];
  if (array.type != MetaType::array)
    return make_error(ErrorCode::schema, file.path, entry.offset, fmt::format("'{}' is not an array", entry.key));
  auto bytes = file.map.range(array.elems_offset, array.elems_bytes);
  if (bytes.size() != array.elems_bytes)
    return make_error(ErrorCode::out_of_bounds, file.path, array.elems_offset,
                      fmt::format("'{}': array elements lie outside the file", entry.key));
  const GgufValueType* elem = gguf_value_type(static_cast<uint64_t>(array.elem_type));
  if (!elem)
    return make_error(ErrorCode::unknown_type, file.path, array.elems_offset,
                      fmt::format("'{}': array element type is not a GGUF value type", entry.key));
  std::vector<MetaValue> out;
  if (first >= array.count) return out;
  ByteReader r(bytes, file.path, array.elems_offset);
  const std::string what = fmt::format("metadata key '{}'", entry.key);
  const GgufValueContext ctx{nullptr, what};
  AKV_TRY(skip_gguf_elements(r, *elem, first, ctx));
  const uint64_t n = std::min(array.count - first, max_elems);
  // Reserve no more than the byte range can hold, whatever the caller's MetaValue claims.
  out.reserve(static_cast<size_t>(std::min(n, r.remaining() / elem->min_bytes)));
  const int depth = 1;   // elements of a top-level array
  for (uint64_t i = 0; i < n; ++i) {
    MetaValue v;
    AKV_TRY(read_gguf_value(r, elem->type, depth, ctx, v));
    out.push_back(v);
  }
  return out;
}

}   // namespace akview
