// The block field tables and the block describer of block_fields.hpp. Offsets and sizes are
// ggml-common.h's structs as FORMATS.md §2.7 prints them; a test checks that every table's fields
// tile its block exactly (the sizes sum to type_info().block_bytes, in order, without holes).
#include "core/layout/block_fields.hpp"

#include <array>
#include <cmath>

#include <fmt/format.h>

#include "core/decode/float_formats.hpp"
#include "core/decode/kquant_scales.hpp"
#include "core/fault_guard.hpp"
#include "core/sha256.hpp"

namespace akview {
namespace {

using D = FieldDecode;
using R = FieldRole;
using F = BlockField;

constexpr F kQ4_0[] = {
    {"d", 0, 2, D::f16, R::scale, "block scale (f16)"},
    {"qs", 2, 16, D::nibbles, R::codes, "32 4-bit codes: element j low nibble of byte j, j+16 high; y = (q-8)*d"}};
constexpr F kQ4_1[] = {
    {"d", 0, 2, D::f16, R::scale, "block scale (f16)"},
    {"m", 2, 2, D::f16, R::min, "block minimum (f16)"},
    {"qs", 4, 16, D::nibbles, R::codes, "32 4-bit codes (low nibbles: 0-15, high: 16-31); y = q*d + m"}};
constexpr F kQ5_0[] = {{"d", 0, 2, D::f16, R::scale, "block scale (f16)"},
                       {"qh", 2, 4, D::bits, R::high_bits, "5th bit of each of the 32 codes (bit j: element j)"},
                       {"qs", 6, 16, D::nibbles, R::codes, "low 4 bits of 32 codes; y = (q-16)*d"}};
constexpr F kQ5_1[] = {{"d", 0, 2, D::f16, R::scale, "block scale (f16)"},
                       {"m", 2, 2, D::f16, R::min, "block minimum (f16)"},
                       {"qh", 4, 4, D::bits, R::high_bits, "5th bit of each of the 32 codes"},
                       {"qs", 8, 16, D::nibbles, R::codes, "low 4 bits of 32 codes; y = q*d + m"}};
constexpr F kQ8_0[] = {{"d", 0, 2, D::f16, R::scale, "block scale (f16)"},
                       {"qs", 2, 32, D::i8s, R::codes, "32 signed 8-bit codes; y = q*d"}};
constexpr F kQ8_1[] = {{"d", 0, 2, D::f16, R::scale, "block scale (f16)"},
                       {"s", 2, 2, D::f16, R::sums, "d * sum(qs) (f16)"},
                       {"qs", 4, 32, D::i8s, R::codes, "32 signed 8-bit codes; y = q*d"}};
constexpr F kQ2_K[] = {
    {"scales", 0, 16, D::q2_k_scales, R::sub_scales, "16 sub-blocks of 16: 4-bit scale (low) and min (high)"},
    {"qs", 16, 64, D::crumbs, R::codes, "256 2-bit codes"},
    {"d", 80, 2, D::f16, R::scale, "super-block scale of the sub-block scales (f16)"},
    {"dmin", 82, 2, D::f16, R::min, "super-block scale of the sub-block mins (f16)"}};
constexpr F kQ3_K[] = {
    {"hmask", 0, 32, D::bits, R::high_bits, "high bit of each of the 256 codes (clear: subtract 4)"},
    {"qs", 32, 64, D::crumbs, R::codes, "low 2 bits of the 256 codes"},
    {"scales", 96, 12, D::q3_k_scales, R::sub_scales, "16 6-bit sub-block scales, stored offset by 32"},
    {"d", 108, 2, D::f16, R::scale, "super-block scale (f16)"}};
constexpr F kQ4_K[] = {
    {"d", 0, 2, D::f16, R::scale, "super-block scale of the sub-block scales (f16)"},
    {"dmin", 2, 2, D::f16, R::min, "super-block scale of the sub-block mins (f16)"},
    {"scales", 4, 12, D::kquant_scale_min, R::sub_scales, "6-bit scales and mins of 8 sub-blocks of 32"},
    {"qs", 16, 128, D::nibbles, R::codes, "256 4-bit codes; y = d*sc*q - dmin*m"}};
constexpr F kQ5_K[] = {
    {"d", 0, 2, D::f16, R::scale, "super-block scale of the sub-block scales (f16)"},
    {"dmin", 2, 2, D::f16, R::min, "super-block scale of the sub-block mins (f16)"},
    {"scales", 4, 12, D::kquant_scale_min, R::sub_scales, "6-bit scales and mins of 8 sub-blocks of 32"},
    {"qh", 16, 32, D::bits, R::high_bits, "5th bit of the 256 codes"},
    {"qs", 48, 128, D::nibbles, R::codes, "low 4 bits of the 256 codes"}};
constexpr F kQ6_K[] = {{"ql", 0, 128, D::nibbles, R::codes, "low 4 bits of the 256 codes"},
                       {"qh", 128, 64, D::crumbs, R::high_bits, "high 2 bits of the 256 codes"},
                       {"scales", 192, 16, D::i8s, R::sub_scales, "16 signed 8-bit sub-block scales"},
                       {"d", 208, 2, D::f16, R::scale, "super-block scale (f16); y = d*sc*(q-32)"}};
constexpr F kQ8_K[] = {{"d", 0, 4, D::f32, R::scale, "block scale (f32)"},
                       {"qs", 4, 256, D::i8s, R::codes, "256 signed 8-bit codes"},
                       {"bsums", 260, 32, D::i16s, R::sums, "sums of the codes of each 16"}};
constexpr F kIq2Xxs[] = {
    {"d", 0, 2, D::f16, R::scale, "super-block scale (f16)"},
    {"qs", 2, 64, D::u16s, R::codes, "per 32: 4 grid indices (bytes), then 4x7 sign bits + a 4-bit scale"}};
constexpr F kIq2Xs[] = {{"d", 0, 2, D::f16, R::scale, "super-block scale (f16)"},
                        {"qs", 2, 64, D::u16s, R::codes, "32 x (9-bit grid index + 7 sign bits)"},
                        {"scales", 66, 8, D::nibbles, R::sub_scales, "4-bit scales of 16 sub-blocks of 16"}};
constexpr F kIq3Xxs[] = {{"d", 0, 2, D::f16, R::scale, "super-block scale (f16)"},
                         {"qs", 2, 64, D::u8s, R::codes, "64 grid indices (4 values each)"},
                         {"scales_signs", 66, 32, D::raw, R::signs, "per 32: 4x7 sign bits + a 4-bit scale (u32)"}};
constexpr F kIq1S[] = {{"d", 0, 2, D::f16, R::scale, "super-block scale (f16)"},
                       {"qs", 2, 32, D::u8s, R::codes, "low 8 bits of 32 grid indices"},
                       {"qh", 34, 16, D::u16s, R::high_bits, "per 32: 4x3 high index bits, 3-bit scale, delta sign"}};
constexpr F kIq4Nl[] = {{"d", 0, 2, D::f16, R::scale, "block scale (f16)"},
                        {"qs", 2, 16, D::nibbles, R::codes, "32 4-bit indices into the non-linear table"}};
constexpr F kIq3S[] = {{"d", 0, 2, D::f16, R::scale, "super-block scale (f16)"},
                       {"qs", 2, 64, D::u8s, R::codes, "low 8 bits of 64 grid indices"},
                       {"qh", 66, 8, D::bits, R::high_bits, "9th bit of the 64 grid indices"},
                       {"signs", 74, 32, D::bits, R::signs, "sign of each of the 256 values"},
                       {"scales", 106, 4, D::nibbles, R::sub_scales, "4-bit scales of 8 sub-blocks of 32"}};
constexpr F kIq2S[] = {{"d", 0, 2, D::f16, R::scale, "super-block scale (f16)"},
                       {"qs", 2, 32, D::u8s, R::codes, "low 8 bits of 32 grid indices"},
                       {"signs", 34, 32, D::bits, R::signs, "sign of each of the 256 values"},
                       {"qh", 66, 8, D::crumbs, R::high_bits, "high 2 bits of the 32 grid indices"},
                       {"scales", 74, 8, D::nibbles, R::sub_scales, "4-bit scales of 16 sub-blocks of 16"}};
constexpr F kIq4Xs[] = {{"d", 0, 2, D::f16, R::scale, "super-block scale (f16)"},
                        {"scales_h", 2, 2, D::crumbs, R::sub_scales, "high 2 bits of the 8 6-bit sub-block scales"},
                        {"scales_l", 4, 4, D::nibbles, R::sub_scales, "low 4 bits of the 8 sub-block scales"},
                        {"qs", 8, 128, D::nibbles, R::codes, "256 4-bit indices into the non-linear table"}};
constexpr F kIq1M[] = {
    {"qs", 0, 32, D::u8s, R::codes, "low 8 bits of 32 grid indices"},
    {"qh", 32, 16, D::nibbles, R::high_bits, "per 8: 3 high index bits and a delta sign"},
    {"scales", 48, 8, D::u16s, R::sub_scales, "3-bit sub-block scales; the top nibbles form the f16 scale"}};
constexpr F kTq1_0[] = {{"qs", 0, 48, D::u8s, R::codes, "240 ternary values, 5 per byte (base 3)"},
                        {"qh", 48, 4, D::u8s, R::codes, "16 ternary values, 4 per byte"},
                        {"d", 52, 2, D::f16, R::scale, "block scale (f16); y = (t-1)*d"}};
constexpr F kTq2_0[] = {{"qs", 0, 64, D::crumbs, R::codes, "256 2-bit ternary codes; y = (q-1)*d"},
                        {"d", 64, 2, D::f16, R::scale, "block scale (f16)"}};
constexpr F kMxfp4[] = {
    {"e", 0, 1, D::e8m0_half, R::scale, "shared E8M0 exponent: scale 2^(e-128) on doubled E2M1"},
    {"qs", 1, 16, D::nibbles, R::codes, "32 E2M1 codes (element j low nibble of byte j, j+16 high)"}};
constexpr F kNvfp4[] = {{"d", 0, 4, D::ue4m3_half, R::scale, "UE4M3 scales of the 4 sub-blocks of 16"},
                        {"qs", 4, 32, D::nibbles, R::codes, "64 E2M1 codes"}};
constexpr F kQ1_0[] = {{"d", 0, 2, D::f16, R::scale, "block scale (f16)"},
                       {"qs", 2, 16, D::bits, R::codes, "128 sign bits: y = bit ? d : -d"}};
constexpr F kQ2_0[] = {{"d", 0, 2, D::f16, R::scale, "block scale (f16)"},
                       {"qs", 2, 16, D::crumbs, R::codes, "64 2-bit codes: y = (q-1)*d"}};

struct TableRow {
  TypeId type;
  std::span<const F> fields;
};
constexpr std::array kBlockTables = {
    TableRow{TypeId::q4_0, kQ4_0},      TableRow{TypeId::q4_1, kQ4_1},    TableRow{TypeId::q5_0, kQ5_0},
    TableRow{TypeId::q5_1, kQ5_1},      TableRow{TypeId::q8_0, kQ8_0},    TableRow{TypeId::q8_1, kQ8_1},
    TableRow{TypeId::q2_k, kQ2_K},      TableRow{TypeId::q3_k, kQ3_K},    TableRow{TypeId::q4_k, kQ4_K},
    TableRow{TypeId::q5_k, kQ5_K},      TableRow{TypeId::q6_k, kQ6_K},    TableRow{TypeId::q8_k, kQ8_K},
    TableRow{TypeId::iq2_xxs, kIq2Xxs}, TableRow{TypeId::iq2_xs, kIq2Xs}, TableRow{TypeId::iq3_xxs, kIq3Xxs},
    TableRow{TypeId::iq1_s, kIq1S},     TableRow{TypeId::iq4_nl, kIq4Nl}, TableRow{TypeId::iq3_s, kIq3S},
    TableRow{TypeId::iq2_s, kIq2S},     TableRow{TypeId::iq4_xs, kIq4Xs}, TableRow{TypeId::iq1_m, kIq1M},
    TableRow{TypeId::tq1_0, kTq1_0},    TableRow{TypeId::tq2_0, kTq2_0},  TableRow{TypeId::mxfp4, kMxfp4},
    TableRow{TypeId::nvfp4, kNvfp4},    TableRow{TypeId::q1_0, kQ1_0},    TableRow{TypeId::q2_0, kQ2_0},
};

// Every block-quant type of the type table has one field table, and its fields tile the block: in order,
// without holes, summing to the type's block_bytes.
constexpr bool has_block_table(TypeKind kind) { return kind == TypeKind::block_quant; }
static_assert(covers_types_of_kind(kBlockTables, has_block_table),
              "one TableRow per block_quant type of kTypeTable (core/types.hpp)");
constexpr bool tables_tile_blocks() {
  for (const auto& row : kBlockTables) {
    uint32_t at = 0;
    for (const F& f : row.fields) {
      if (f.offset != at) return false;
      at += f.size;
    }
    if (at != kTypeTable[static_cast<size_t>(row.type)].block_bytes) return false;
  }
  return true;
}
static_assert(tables_tile_blocks(), "a block's fields tile it exactly");

// One element of a plain type: a single field of the element's bytes (sub-byte types: one byte).
constexpr F kElementFields[] = {
    {"value", 0, 1, D::element, R::value, "one element"},         {"value", 0, 2, D::element, R::value, "one element"},
    {"value", 0, 3, D::element, R::value, "four 6-bit elements"}, {"value", 0, 4, D::element, R::value, "one element"},
    {"value", 0, 8, D::element, R::value, "one element"},         {"value", 0, 16, D::element, R::value, "one element"},
};

template <typename Fn>
std::string join_n(size_t n, Fn&& item) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (i ? " " : "") + item(i);
  return s;
}

// The value of one element of a plain type, one row per plain type; a row without text leaves the hex to
// say it (F6 packs 4 elements in 3 bytes).
using ElementText = std::string (*)(const uint8_t* p);
struct ElementRow {
  TypeId type;
  ElementText text;
};
template <typename T>
std::string shown(T v) {
  return fmt::format("{}", v);
}
std::string f4_high(const uint8_t* p) { return shown(fp::e2m1_to_f32(p[0] >> 4)); }   // F4: the byte's 2nd element
template <typename T>
std::string complex_text(T re, T im) {
  return fmt::format("{}{:+}i", re, im);
}
constexpr std::array kElementTexts = {
    ElementRow{TypeId::f32, [](const uint8_t* p) { return shown(fp::load_f32(p)); }},
    ElementRow{TypeId::f16, [](const uint8_t* p) { return shown(fp::f16_to_f32(fp::load_u16(p))); }},
    ElementRow{TypeId::bf16, [](const uint8_t* p) { return shown(fp::bf16_to_f32(fp::load_u16(p))); }},
    ElementRow{TypeId::f64, [](const uint8_t* p) { return shown(fp::load_f64(p)); }},
    ElementRow{TypeId::i8, [](const uint8_t* p) { return shown(static_cast<int8_t>(p[0])); }},
    ElementRow{TypeId::i16, [](const uint8_t* p) { return shown(static_cast<int16_t>(fp::load_u16(p))); }},
    ElementRow{TypeId::i32, [](const uint8_t* p) { return shown(static_cast<int32_t>(fp::load_u32(p))); }},
    ElementRow{TypeId::i64, [](const uint8_t* p) { return shown(static_cast<int64_t>(fp::load_u64(p))); }},
    ElementRow{TypeId::u8, [](const uint8_t* p) { return shown(p[0]); }},
    ElementRow{TypeId::u16, [](const uint8_t* p) { return shown(fp::load_u16(p)); }},
    ElementRow{TypeId::u32, [](const uint8_t* p) { return shown(fp::load_u32(p)); }},
    ElementRow{TypeId::u64, [](const uint8_t* p) { return shown(fp::load_u64(p)); }},
    ElementRow{TypeId::boolean, [](const uint8_t* p) { return std::string(p[0] ? "true" : "false"); }},
    ElementRow{TypeId::f8_e5m2, [](const uint8_t* p) { return shown(fp::e5m2_to_f32(p[0])); }},
    ElementRow{TypeId::f8_e4m3, [](const uint8_t* p) { return shown(fp::e4m3fn_to_f32(p[0])); }},
    ElementRow{TypeId::f8_e8m0, [](const uint8_t* p) { return shown(fp::e8m0_ocp_to_f32(p[0])); }},
    ElementRow{TypeId::f8_e4m3fnuz, [](const uint8_t* p) { return shown(fp::e4m3fnuz_to_f32(p[0])); }},
    ElementRow{TypeId::f8_e5m2fnuz, [](const uint8_t* p) { return shown(fp::e5m2fnuz_to_f32(p[0])); }},
    ElementRow{TypeId::f4, [](const uint8_t* p) { return shown(fp::e2m1_to_f32(p[0] & 0xF)) + " " + f4_high(p); }},
    ElementRow{TypeId::f6_e2m3, nullptr},
    ElementRow{TypeId::f6_e3m2, nullptr},
    ElementRow{TypeId::c64, [](const uint8_t* p) { return complex_text(fp::load_f32(p), fp::load_f32(p + 4)); }},
    ElementRow{TypeId::c128, [](const uint8_t* p) { return complex_text(fp::load_f64(p), fp::load_f64(p + 8)); }},
};
constexpr bool is_plain(TypeKind kind) { return kind != TypeKind::block_quant && kind != TypeKind::composite; }
static_assert(covers_types_of_kind(kElementTexts, is_plain),
              "one ElementRow per plain (float, integer, boolean, complex) type of kTypeTable (core/types.hpp)");

std::string element_value(TypeId type, std::span<const uint8_t> b) {
  for (const ElementRow& row : kElementTexts)
    if (row.type == type) return row.text ? row.text(b.data()) : std::string();
  return {};   // block and composite types: their fields say it
}

std::string field_value(D decode, std::span<const uint8_t> b, TypeId type) {
  const uint8_t* p = b.data();
  const size_t n = b.size();
  switch (decode) {
    case D::raw: return {};
    case D::f16: return fmt::format("{}", fp::f16_to_f32(fp::load_u16(p)));
    case D::bf16: return fmt::format("{}", fp::bf16_to_f32(fp::load_u16(p)));
    case D::f32: return fmt::format("{}", fp::load_f32(p));
    case D::f64: return fmt::format("{}", fp::load_f64(p));
    case D::e8m0_half: return fmt::format("{} (2^{})", fp::e8m0_half_to_f32(p[0]), static_cast<int>(p[0]) - 128);
    case D::ue4m3_half: return join_n(n, [&](size_t i) { return fmt::format("{}", fp::ue4m3_half_to_f32(p[i])); });
    case D::u8s: return join_n(n, [&](size_t i) { return fmt::format("{}", p[i]); });
    case D::i8s: return join_n(n, [&](size_t i) { return fmt::format("{}", static_cast<int8_t>(p[i])); });
    case D::u16s: return join_n(n / 2, [&](size_t i) { return fmt::format("{}", fp::load_u16(p + 2 * i)); });
    case D::i16s:
      return join_n(n / 2, [&](size_t i) { return fmt::format("{}", static_cast<int16_t>(fp::load_u16(p + 2 * i))); });
    case D::nibbles:
      return join_n(2 * n, [&](size_t i) { return fmt::format("{}", (p[i / 2] >> (4 * (i % 2))) & 15); });
    case D::crumbs: return join_n(4 * n, [&](size_t i) { return fmt::format("{}", (p[i / 4] >> (2 * (i % 4))) & 3); });
    case D::bits: {
      std::string s;
      for (size_t i = 0; i < 8 * n; ++i) s += ((p[i / 8] >> (i % 8)) & 1) ? '1' : '0';
      return s;
    }
    case D::kquant_scale_min:
      return join_n(8, [&](size_t j) {
        uint8_t sc = 0, mn = 0;
        decode::kquant_scale_min(static_cast<int>(j), p, &sc, &mn);
        return fmt::format("{}/{}", sc, mn);
      });
    case D::q3_k_scales: {
      int8_t s[16];
      decode::q3_k_unpack_scales(p, s);
      return join_n(16, [&](size_t k) { return fmt::format("{}", s[k] - 32); });
    }
    case D::q2_k_scales: return join_n(n, [&](size_t i) { return fmt::format("{}/{}", p[i] & 15, p[i] >> 4); });
    case D::element: return element_value(type, b);
  }
  return {};
}

// The element bytes of a plain type: index into kElementFields by size.
std::span<const F> element_fields(const TypeInfo& info) {
  for (const F& f : kElementFields)
    if (f.size == info.block_bytes) return {&f, 1};
  return {};
}

Result<std::span<const uint8_t>> file_bytes(const Model& model, uint32_t file, uint64_t offset, uint64_t size) {
  auto b = model.files[file].map.range(offset, size);
  if (b.size() != size)
    return make_error(ErrorCode::out_of_bounds, model.files[file].path, offset, "block lies outside the file");
  AKV_TRY(check_mapped_range(b));   // the file may have shrunk since it was opened
  return b;
}

// One group of a composite tensor: its packed bytes in the weight, then one row of each companion.
Result<BlockReport> describe_group(const Model& model, const Tensor& t, uint64_t block, BlockReport r) {
  const QuantInfo& q = model.quants[t.quant];
  if (q.group_size == 0 || q.bits == 0)
    return make_error(ErrorCode::unsupported, model.files[t.file].path, t.offset,
                      "composite tensor without bits/group size");
  r.block_elems = q.group_size;
  r.block_bytes = uint64_t{q.group_size} * q.bits / 8;
  r.n_blocks = model.n_elements(t) / q.group_size;
  r.block = block;
  if (block >= r.n_blocks)
    return make_error(ErrorCode::not_found, model.files[t.file].path, t.offset,
                      fmt::format("block {} is past the last of {} groups", block, r.n_blocks));
  const uint64_t at = t.offset + block * r.block_bytes;
  auto words = file_bytes(model, t.file, at, r.block_bytes);
  if (!words) return words.error();
  const uint64_t mask = (uint64_t{1} << q.bits) - 1;
  std::string codes = join_n(q.group_size, [&](size_t j) {
    const uint64_t bit = j * q.bits;
    uint64_t v = 0;
    for (uint64_t k = 0; k < q.bits; ++k) v |= uint64_t{((*words)[(bit + k) / 8] >> ((bit + k) % 8)) & 1u} << k;
    return fmt::format("{}", v & mask);
  });
  r.fields.push_back(FieldReport{"words", at, r.block_bytes, to_hex(*words), std::move(codes),
                                 fmt::format("{} {}-bit codes packed little-endian in u32 words", q.group_size, q.bits),
                                 R::codes, t.file});
  auto add_companion = [&](uint32_t index, std::string name, R role, std::string meaning) -> Status {
    if (index == kNone) return {};
    const Tensor& c = model.tensors[index];
    const uint64_t elem = type_info(c.type).block_bytes;
    const uint64_t c_at = c.offset + block * elem;
    auto b = file_bytes(model, c.file, c_at, elem);
    if (!b) return b.error();
    std::string value = element_value(c.type, *b);
    if (c.type == TypeId::u8 && (t.type == TypeId::mlx_mxfp4 || t.type == TypeId::ollama_mxfp4 ||
                                 t.type == TypeId::mlx_mxfp8 || t.type == TypeId::ollama_mxfp8))
      value = fmt::format("{} (E8M0 2^{})", fp::e8m0_to_f32((*b)[0]), static_cast<int>((*b)[0]) - 127);
    r.fields.push_back(FieldReport{std::move(name), c_at, elem, to_hex(*b), std::move(value),
                                   fmt::format("{} ({}, row of {})", meaning, type_info(c.type).name, c.name), role,
                                   c.file});
    return {};
  };
  AKV_TRY(add_companion(q.scales, "scale", R::scale, "group scale"));
  AKV_TRY(add_companion(q.biases, "bias", R::min, "group bias: y = scale*q + bias"));
  return r;
}

}   // namespace

std::span<const BlockField> block_fields(TypeId type) {
  for (const auto& row : kBlockTables)
    if (row.type == type) return row.fields;
  const TypeInfo& info = type_info(type);
  if (info.kind == TypeKind::block_quant || info.kind == TypeKind::composite) return {};
  return element_fields(info);
}

Result<BlockReport> describe_block(const Model& model, uint32_t tensor_index, uint64_t block) {
  const Tensor& t = model.tensors[tensor_index];
  const TypeInfo& info = type_info(t.type);
  BlockReport r;
  r.name = std::string(t.name);
  r.type = std::string(info.name);
  r.file = t.file;
  r.offset = t.offset;
  r.nbytes = t.nbytes;
  if (info.kind == TypeKind::composite && t.quant != kNone) return describe_group(model, t, block, std::move(r));
  const auto fields = block_fields(t.type);
  if (fields.empty() || (t.flags & kTensorNonContiguous))
    return make_error(ErrorCode::unsupported, model.files[t.file].path, t.offset,
                      fmt::format("tensor '{}' of type {} has no block layout akview describes", t.name, info.name));
  r.block_elems = info.block_elems;
  r.block_bytes = info.block_bytes;
  r.n_blocks = t.nbytes / info.block_bytes;
  r.block = block;
  if (block >= r.n_blocks)
    return make_error(ErrorCode::not_found, model.files[t.file].path, t.offset,
                      fmt::format("block {} is past the last of {} blocks", block, r.n_blocks));
  const uint64_t at = t.offset + block * info.block_bytes;
  auto bytes = file_bytes(model, t.file, at, info.block_bytes);
  if (!bytes) return bytes.error();
  for (const BlockField& f : fields) {
    const auto b = bytes->subspan(f.offset, f.size);
    r.fields.push_back(FieldReport{std::string(f.name), at + f.offset, f.size, to_hex(b),
                                   field_value(f.decode, b, t.type), std::string(f.meaning), f.role, t.file});
  }
  return r;
}

}   // namespace akview
