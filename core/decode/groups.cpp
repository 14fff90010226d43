// list_groups: a table of group extractors, one row per quantized type, that read a group's codes
// and scale fields straight from the block bytes (layouts as in the decoders' diagrams);
// decoded min/max come from decode_rows on the same row. Convention for the reported fields:
// linear types: value = scale * code + bias (codes unsigned, e.g. q4_0 code 0..15, bias = -8d);
// table types (iq4_*, fp4, fp8): value = table[code] * scale, bias 0; lattice IQ types: codes are
// grid points, so scale = super-block d and levels_used counts distinct decoded values.
#include "core/decode/groups.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "core/decode/decode.hpp"
#include "core/decode/float_formats.hpp"
#include "core/decode/group_cols.hpp"
#include "core/decode/kquant_scales.hpp"
#include "core/fault_guard.hpp"

namespace akview {
namespace {

using fp::f16_to_f32;
using fp::load_u16;

struct GroupParams {
  float scale = 0, bias = 0;
  bool has_super = false;
  float super_scale = 0, super_min = 0;
  uint8_t sub_scale = 0, sub_min = 0;
};

// Writes the codes of group g of the block (element order) into `codes`; nullptr codes: params only.
using GroupExtractor = void (*)(const uint8_t* b, int g, uint16_t* codes, GroupParams* p);

enum class Saturation : uint8_t { code_range, fp4_magnitude, fp8_magnitude, none };

struct GroupSpec {
  TypeId type;
  uint32_t group_elems;    // elements per group (composite: 0, from the view)
  uint32_t levels_total;   // 0: lattice codebook
  Saturation saturation;
  GroupExtractor extract;   // nullptr: composite (handled by the stream reader)
};

// ---- legacy quants -------------------------------------------------------------------------------
void nibbles16(const uint8_t* qs, uint16_t* c) {
  for (int j = 0; j < 16; ++j) {
    c[j] = qs[j] & 0xF;
    c[j + 16] = qs[j] >> 4;
  }
}
void g_q4_0(const uint8_t* b, int, uint16_t* c, GroupParams* p) {
  p->scale = f16_to_f32(load_u16(b));
  p->bias = -8.0f * p->scale;
  nibbles16(b + 2, c);
}
void g_q4_1(const uint8_t* b, int, uint16_t* c, GroupParams* p) {
  p->scale = f16_to_f32(load_u16(b));
  p->bias = f16_to_f32(load_u16(b + 2));
  nibbles16(b + 4, c);
}
void fifth_bits(const uint8_t* qh, uint16_t* c) {
  const uint32_t h = fp::load_u32(qh);
  for (int j = 0; j < 32; ++j) c[j] = static_cast<uint16_t>(c[j] | (((h >> j) & 1) << 4));
}
void g_q5_0(const uint8_t* b, int, uint16_t* c, GroupParams* p) {
  p->scale = f16_to_f32(load_u16(b));
  p->bias = -16.0f * p->scale;
  nibbles16(b + 6, c);
  fifth_bits(b + 2, c);
}
void g_q5_1(const uint8_t* b, int, uint16_t* c, GroupParams* p) {
  p->scale = f16_to_f32(load_u16(b));
  p->bias = f16_to_f32(load_u16(b + 2));
  nibbles16(b + 8, c);
  fifth_bits(b + 4, c);
}
template <int kQsOffset>
void g_q8(const uint8_t* b, int, uint16_t* c, GroupParams* p) {
  p->scale = f16_to_f32(load_u16(b));
  p->bias = -128.0f * p->scale;
  for (int j = 0; j < 32; ++j) c[j] = static_cast<uint16_t>(static_cast<int8_t>(b[kQsOffset + j]) + 128);
}
void g_q1_0(const uint8_t* b, int, uint16_t* c, GroupParams* p) {
  const float d = f16_to_f32(load_u16(b));
  p->scale = 2.0f * d;
  p->bias = -d;
  for (int j = 0; j < 128; ++j) c[j] = (b[2 + j / 8] >> (j % 8)) & 1;
}
void g_q2_0(const uint8_t* b, int, uint16_t* c, GroupParams* p) {
  p->scale = f16_to_f32(load_u16(b));
  p->bias = -p->scale;
  for (int j = 0; j < 64; ++j) c[j] = (b[2 + j / 4] >> (2 * (j % 4))) & 3;
}

// ---- K-quants --------------------------------------------------------------------------------------
void g_q2_k(const uint8_t* b, int g, uint16_t* c, GroupParams* p) {
  const float d = f16_to_f32(load_u16(b + 80)), dmin = f16_to_f32(load_u16(b + 82));
  const uint8_t sc = b[g];
  *p = {d * static_cast<float>(sc & 0xF), -(dmin * static_cast<float>(sc >> 4)), true, d, dmin,
        static_cast<uint8_t>(sc & 0xF),   static_cast<uint8_t>(sc >> 4)};
  const int n = g / 8, shift = 2 * ((g % 8) / 2), half = g % 2;
  for (int l = 0; l < 16; ++l) c[l] = (b[16 + 32 * n + 16 * half + l] >> shift) & 3;
}
void g_q3_k(const uint8_t* b, int g, uint16_t* c, GroupParams* p) {
  int8_t sc[16];
  decode::q3_k_unpack_scales(b + 96, sc);
  const float d = f16_to_f32(load_u16(b + 108));
  const float dl = d * static_cast<float>(sc[g] - 32);
  *p = {dl, -4.0f * dl, true, d, 0.0f, static_cast<uint8_t>(sc[g]), 0};
  const int n = g / 8, sidx = (g % 8) / 2, half = g % 2;
  const int hbit = 4 * n + sidx;
  for (int l = 0; l < 16; ++l) {
    const int low = (b[32 + 32 * n + 16 * half + l] >> (2 * sidx)) & 3;
    const int high = (b[16 * half + l] >> hbit) & 1;
    c[l] = static_cast<uint16_t>(low | (high << 2));
  }
}
template <bool kFiveBit>
void g_q45_k(const uint8_t* b, int g, uint16_t* c, GroupParams* p) {
  const float d = f16_to_f32(load_u16(b)), dmin = f16_to_f32(load_u16(b + 2));
  uint8_t sc, mn;
  decode::kquant_scale_min(g, b + 4, &sc, &mn);
  *p = {d * static_cast<float>(sc), -(dmin * static_cast<float>(mn)), true, d, dmin, sc, mn};
  const uint8_t* q = b + (kFiveBit ? 48 : 16) + 32 * (g / 2);
  for (int l = 0; l < 32; ++l) {
    int v = (g % 2) ? (q[l] >> 4) : (q[l] & 0xF);
    if constexpr (kFiveBit) v |= ((b[16 + l] >> g) & 1) << 4;
    c[l] = static_cast<uint16_t>(v);
  }
}
void g_q6_k(const uint8_t* b, int g, uint16_t* c, GroupParams* p) {
  const float d = f16_to_f32(load_u16(b + 208));
  const int8_t sc = static_cast<int8_t>(b[192 + g]);
  const float dl = d * static_cast<float>(sc);
  *p = {dl, -32.0f * dl, true, d, 0.0f, static_cast<uint8_t>(sc), 0};
  const int n = g / 8, k = (g % 8) / 2, l0 = (g % 2) * 16;
  const uint8_t* ql = b + 64 * n + (k % 2) * 32;
  const uint8_t* qh = b + 128 + 32 * n;
  for (int l = l0; l < l0 + 16; ++l) {
    const int low = k < 2 ? (ql[l] & 0xF) : (ql[l] >> 4);
    c[l - l0] = static_cast<uint16_t>(low | (((qh[l] >> (2 * k)) & 3) << 4));
  }
}
void g_q8_k(const uint8_t* b, int, uint16_t* c, GroupParams* p) {
  p->scale = fp::load_f32(b);
  p->bias = -128.0f * p->scale;
  for (int j = 0; j < 256; ++j) c[j] = static_cast<uint16_t>(static_cast<int8_t>(b[4 + j]) + 128);
}

// ---- table types -----------------------------------------------------------------------------------
void g_iq4_nl(const uint8_t* b, int, uint16_t* c, GroupParams* p) {
  p->scale = f16_to_f32(load_u16(b));
  nibbles16(b + 2, c);
}
void g_iq4_xs(const uint8_t* b, int g, uint16_t* c, GroupParams* p) {
  const float d = f16_to_f32(load_u16(b));
  const int ls = ((b[4 + g / 2] >> (4 * (g % 2))) & 0xF) | (((load_u16(b + 2) >> (2 * g)) & 3) << 4);
  *p = {d * static_cast<float>(ls - 32), 0.0f, true, d, 0.0f, static_cast<uint8_t>(ls), 0};
  nibbles16(b + 8 + 16 * g, c);
}
void g_mxfp4(const uint8_t* b, int, uint16_t* c, GroupParams* p) {
  p->scale = 2.0f * fp::e8m0_half_to_f32(b[0]);
  nibbles16(b + 1, c);
}
void g_nvfp4(const uint8_t* b, int g, uint16_t* c, GroupParams* p) {
  p->scale = 2.0f * fp::ue4m3_half_to_f32(b[g]);
  for (int j = 0; j < 8; ++j) {
    c[j] = b[4 + 8 * g + j] & 0xF;
    c[j + 8] = b[4 + 8 * g + j] >> 4;
  }
}

// ---- ternary -----------------------------------------------------------------------------------------
void g_tq1_0(const uint8_t* b, int, uint16_t* c, GroupParams* p) {
  static constexpr uint8_t kPow3[6] = {1, 3, 9, 27, 81, 243};
  p->scale = f16_to_f32(load_u16(b + 52));
  p->bias = -p->scale;
  auto trit = [](uint8_t x, uint8_t pw) {
    return static_cast<uint16_t>((static_cast<uint16_t>(static_cast<uint8_t>(x * pw)) * 3) >> 8);
  };
  int k = 0;
  for (int n = 0; n < 5; ++n)
    for (int m = 0; m < 32; ++m) c[k++] = trit(b[m], kPow3[n]);
  for (int n = 0; n < 5; ++n)
    for (int m = 0; m < 16; ++m) c[k++] = trit(b[32 + m], kPow3[n]);
  for (int n = 0; n < 4; ++n)
    for (int j = 0; j < 4; ++j) c[k++] = trit(b[48 + j], kPow3[n]);
}
void g_tq2_0(const uint8_t* b, int, uint16_t* c, GroupParams* p) {
  p->scale = f16_to_f32(load_u16(b + 64));
  p->bias = -p->scale;
  int k = 0;
  for (int j = 0; j < 64; j += 32)
    for (int l = 0; l < 4; ++l)
      for (int m = 0; m < 32; ++m) c[k++] = (b[j + m] >> (2 * l)) & 3;
}

// ---- lattice IQ types: params only (super-block d) ----------------------------------------------------
template <int kDOffset>
void g_lattice(const uint8_t* b, int, uint16_t*, GroupParams* p) {
  const float d = f16_to_f32(load_u16(b + kDOffset));
  *p = {d, 0.0f, true, d, 0.0f, 0, 0};
}
void g_iq1_m(const uint8_t* b, int, uint16_t*, GroupParams* p) {
  uint16_t sc[4];
  for (int k = 0; k < 4; ++k) sc[k] = load_u16(b + 48 + 2 * k);
  const float d = f16_to_f32(
      static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0xF0) | ((sc[2] >> 4) & 0xF00) | (sc[3] & 0xF000)));
  *p = {d, 0.0f, true, d, 0.0f, 0, 0};
}

using T = TypeId;
using S = Saturation;
// Block types: group_elems divides the type's block_elems; groups per block = block_elems / group_elems.
constexpr std::array kGroupSpecs = {
    GroupSpec{T::q4_0, 32, 16, S::code_range, g_q4_0},
    GroupSpec{T::q4_1, 32, 16, S::code_range, g_q4_1},
    GroupSpec{T::q5_0, 32, 32, S::code_range, g_q5_0},
    GroupSpec{T::q5_1, 32, 32, S::code_range, g_q5_1},
    GroupSpec{T::q8_0, 32, 256, S::code_range, g_q8<2>},
    GroupSpec{T::q8_1, 32, 256, S::code_range, g_q8<4>},
    GroupSpec{T::q2_k, 16, 4, S::code_range, g_q2_k},
    GroupSpec{T::q3_k, 16, 8, S::code_range, g_q3_k},
    GroupSpec{T::q4_k, 32, 16, S::code_range, g_q45_k<false>},
    GroupSpec{T::q5_k, 32, 32, S::code_range, g_q45_k<true>},
    GroupSpec{T::q6_k, 16, 64, S::code_range, g_q6_k},
    GroupSpec{T::q8_k, 256, 256, S::code_range, g_q8_k},
    GroupSpec{T::iq2_xxs, 32, 0, S::none, g_lattice<0>},
    GroupSpec{T::iq2_xs, 32, 0, S::none, g_lattice<0>},
    GroupSpec{T::iq3_xxs, 32, 0, S::none, g_lattice<0>},
    GroupSpec{T::iq1_s, 32, 0, S::none, g_lattice<0>},
    GroupSpec{T::iq4_nl, 32, 16, S::code_range, g_iq4_nl},
    GroupSpec{T::iq3_s, 32, 0, S::none, g_lattice<0>},
    GroupSpec{T::iq2_s, 32, 0, S::none, g_lattice<0>},
    GroupSpec{T::iq4_xs, 32, 16, S::code_range, g_iq4_xs},
    GroupSpec{T::iq1_m, 32, 0, S::none, g_iq1_m},
    GroupSpec{T::tq1_0, 256, 3, S::code_range, g_tq1_0},
    GroupSpec{T::tq2_0, 256, 4, S::code_range, g_tq2_0},
    GroupSpec{T::mxfp4, 32, 16, S::fp4_magnitude, g_mxfp4},
    GroupSpec{T::nvfp4, 16, 16, S::fp4_magnitude, g_nvfp4},
    GroupSpec{T::q1_0, 128, 2, S::code_range, g_q1_0},
    GroupSpec{T::q2_0, 64, 4, S::code_range, g_q2_0},
    GroupSpec{T::mlx_affine, 0, 0, S::code_range, nullptr},
    GroupSpec{T::mlx_mxfp4, 0, 16, S::fp4_magnitude, nullptr},
    GroupSpec{T::mlx_nvfp4, 0, 16, S::fp4_magnitude, nullptr},
    GroupSpec{T::mlx_mxfp8, 0, 256, S::fp8_magnitude, nullptr},
    GroupSpec{T::ollama_int4, 0, 0, S::code_range, nullptr},
    GroupSpec{T::ollama_int8, 0, 0, S::code_range, nullptr},
    GroupSpec{T::ollama_nvfp4, 0, 16, S::fp4_magnitude, nullptr},
    GroupSpec{T::ollama_mxfp4, 0, 16, S::fp4_magnitude, nullptr},
    GroupSpec{T::ollama_mxfp8, 0, 256, S::fp8_magnitude, nullptr},
};

// Every block-quant and composite type of the type table has one row, and no other type has one; a
// block type's groups tile its block.
constexpr bool has_group_spec(TypeKind kind) { return kind == TypeKind::block_quant || kind == TypeKind::composite; }
static_assert(covers_types_of_kind(kGroupSpecs, has_group_spec),
              "one GroupSpec per block_quant and composite type of kTypeTable (core/types.hpp)");
constexpr bool groups_tile_blocks() {
  for (const auto& s : kGroupSpecs) {
    const TypeInfo& t = kTypeTable[static_cast<size_t>(s.type)];
    if (t.kind == TypeKind::block_quant && (s.group_elems == 0 || t.block_elems % s.group_elems != 0)) return false;
    if (t.kind == TypeKind::block_quant && s.extract == nullptr) return false;
  }
  return true;
}
static_assert(groups_tile_blocks(), "a block type's group_elems divides its block_elems, and it has an extractor");

const GroupSpec* find_spec(TypeId type) {
  for (const auto& s : kGroupSpecs)
    if (s.type == type) return &s;
  return nullptr;
}

bool is_saturated(Saturation sat, uint32_t code, uint32_t levels) {
  switch (sat) {
    case S::code_range: return code == 0 || code + 1 == levels;
    case S::fp4_magnitude: return (code & 7) == 7;
    case S::fp8_magnitude: return (code & 0x7F) >= 0x7E;
    default: return false;
  }
}

void finish_group(QuantGroup& q, const float* values, const uint16_t* codes, const GroupSpec& spec, uint32_t levels) {
  float lo = NAN, hi = NAN;
  for (uint32_t j = 0; j < q.n_cols; ++j) {
    const float x = values[j];
    if (std::isnan(x)) continue;
    if (std::isnan(lo) || x < lo) lo = x;
    if (std::isnan(hi) || x > hi) hi = x;
  }
  q.value_min = lo;
  q.value_max = hi;
  q.levels_total = levels;
  if (codes == nullptr) {   // lattice: distinct decoded values
    std::vector<float> v(values, values + q.n_cols);
    std::sort(v.begin(), v.end());
    q.levels_used = static_cast<uint32_t>(std::unique(v.begin(), v.end()) - v.begin());
    return;
  }
  std::array<uint64_t, 4> seen{};
  for (uint32_t j = 0; j < q.n_cols; ++j) {
    const uint32_t c = codes[j] & 255;
    seen[c >> 6] |= uint64_t{1} << (c & 63);
    q.saturated += is_saturated(spec.saturation, codes[j], levels);
  }
  for (uint64_t w : seen) q.levels_used += static_cast<uint32_t>(std::popcount(w));
}

float affine_param(TypeId type, std::span<const uint8_t> bytes, size_t index) {
  if (type == TypeId::f32) return fp::load_f32(bytes.data() + 4 * index);
  if (type == TypeId::bf16) return fp::bf16_to_f32(load_u16(bytes.data() + 2 * index));
  return f16_to_f32(load_u16(bytes.data() + 2 * index));
}

}   // namespace

bool has_groups(TypeId type) { return find_spec(type) != nullptr; }

uint32_t group_cols(const TensorView& view) {
  const GroupSpec* spec = find_spec(view.type);
  if (spec == nullptr) return 0;
  return spec->extract == nullptr ? view.group_size : spec->group_elems;
}

Result<std::vector<QuantGroup>> list_groups(const TensorView& v, int64_t row_begin, int64_t row_end) {
  const GroupSpec* spec = find_spec(v.type);
  if (spec == nullptr)
    return make_error(ErrorCode::unsupported, "", kNoOffset,
                      fmt::format("{} tensor: not a quantized type, it has no groups", type_info(v.type).name));
  AKV_TRY(validate_view(v));
  if (row_begin < 0 || row_end < row_begin || row_end > v.n_rows)
    return make_error(ErrorCode::out_of_bounds, "", kNoOffset,
                      fmt::format("row range [{}, {}) is outside [0, {})", row_begin, row_end, v.n_rows));
  const bool composite = spec->extract == nullptr;
  const uint32_t group_elems = group_cols(v);
  const uint32_t levels = composite && spec->levels_total == 0 ? (1u << v.bits) : spec->levels_total;
  const size_t n_cols = static_cast<size_t>(v.n_cols);
  const size_t groups_per_row = n_cols / group_elems;
  std::vector<QuantGroup> out;
  out.reserve(static_cast<size_t>(row_end - row_begin) * groups_per_row);
  std::vector<float> values(n_cols);
  std::vector<uint16_t> codes(std::max<size_t>(group_elems, 256));
  const auto& info = type_info(v.type);
  // The row's bytes (and its scales and biases) are copied out of the mapping under the SIGBUS guard
  // first (core/fault_guard.hpp), so the field extraction below reads only memory akview owns.
  const size_t scale_row_bytes = composite ? groups_per_row * type_info(v.scales_type).block_bytes : 0;
  const size_t bias_row_bytes =
      composite && !v.biases.empty() ? groups_per_row * type_info(v.biases_type).block_bytes : 0;
  std::vector<uint8_t> row_copy(static_cast<size_t>(v.row_bytes)), scales_copy(scale_row_bytes),
      biases_copy(bias_row_bytes);
  for (int64_t r = row_begin; r < row_end; ++r) {
    AKV_TRY(decode_rows(v, r, r + 1, values.data()));
    const size_t ru = static_cast<size_t>(r);
    AKV_TRY(copy_mapped(v.data.subspan(ru * row_copy.size(), row_copy.size()), row_copy.data()));
    AKV_TRY(copy_mapped(v.scales.subspan(ru * scale_row_bytes, scale_row_bytes), scales_copy.data()));
    AKV_TRY(copy_mapped(v.biases.subspan(ru * bias_row_bytes, bias_row_bytes), biases_copy.data()));
    const uint8_t* row = row_copy.data();
    for (size_t g = 0; g < groups_per_row; ++g) {
      QuantGroup q;
      q.row = r;
      q.col = static_cast<int64_t>(g * group_elems);
      q.n_cols = group_elems;
      GroupParams p;
      uint16_t* group_codes = codes.data();
      if (!composite) {
        const uint32_t per_block = info.block_elems / group_elems;
        const uint8_t* block = row + (g / per_block) * info.block_bytes;
        if (spec->levels_total == 0) group_codes = nullptr;
        spec->extract(block, static_cast<int>(g % per_block), group_codes, &p);
      } else {
        const uint8_t* p8 = row + g * group_elems * v.bits / 8;
        for (uint32_t j = 0; j < group_elems; ++j) {   // LSB-first bit stream within the row
          const size_t bit = static_cast<size_t>(j) * v.bits;
          const uint32_t two =
              p8[bit / 8] | (bit / 8 + 1 < static_cast<size_t>(group_elems) * v.bits / 8 ? p8[bit / 8 + 1] << 8 : 0);
          codes[j] = static_cast<uint16_t>((two >> (bit % 8)) & ((1u << v.bits) - 1));
        }
        if (spec->saturation == S::code_range) {
          p.scale = affine_param(v.scales_type, scales_copy, g);
          p.bias = affine_param(v.biases_type, biases_copy, g);
        } else {
          const uint8_t s = scales_copy[g];
          const bool e8m0 = v.type == T::mlx_mxfp4 || v.type == T::mlx_mxfp8 || v.type == T::ollama_mxfp4 ||
                            v.type == T::ollama_mxfp8;
          p.scale = e8m0 ? fp::e8m0_to_f32(s) : fp::e4m3_mlx_to_f32(s);
        }
      }
      q.scale = p.scale;
      q.bias = p.bias;
      q.has_super = p.has_super;
      q.super_scale = p.super_scale;
      q.super_min = p.super_min;
      q.sub_scale = p.sub_scale;
      q.sub_min = p.sub_min;
      finish_group(q, values.data() + q.col, group_codes, *spec, levels);
      out.push_back(q);
    }
  }
  return out;
}

}   // namespace akview
