// Block packers (block_pack.hpp): the inverse of core/decode's block layouts, one function per type.
#include "tests/writers/block_pack.hpp"

#include <array>

#include "tests/writers/quantize.hpp"

namespace akview::testing {
namespace {

void put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void put_f16(uint8_t* p, float f) { put16(p, f32_to_f16(f)); }

// 32-element blocks: element j < 16 is the low nibble of qs[j], j >= 16 the high nibble of qs[j-16];
// q5 types keep bit 4 of element j in bit j of the little-endian qh word.
void nibbles32(const std::vector<int>& codes, uint8_t* qs) {
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((codes[j] & 0xF) | ((codes[j + 16] & 0xF) << 4));
}
void high_bits32(const std::vector<int>& codes, uint8_t* qh) {
  uint32_t h = 0;
  for (int j = 0; j < 32; ++j) h |= static_cast<uint32_t>((codes[j] >> 4) & 1) << j;
  for (int k = 0; k < 4; ++k) qh[k] = static_cast<uint8_t>(h >> (8 * k));
}

// Q4_0: +0 d | +2 qs[16]                 Q4_1: +0 d | +2 m | +4 qs[16]
// Q5_0: +0 d | +2 qh[4] | +6 qs[16]      Q5_1: +0 d | +2 m | +4 qh[4] | +8 qs[16]
// Q8_0: +0 d | +2 i8 qs[32]
void pack_q4_0(const BlockCodes& f, uint8_t* b) {
  put_f16(b, f.d);
  nibbles32(f.codes, b + 2);
}
void pack_q4_1(const BlockCodes& f, uint8_t* b) {
  put_f16(b, f.d);
  put_f16(b + 2, f.m);
  nibbles32(f.codes, b + 4);
}
void pack_q5_0(const BlockCodes& f, uint8_t* b) {
  put_f16(b, f.d);
  high_bits32(f.codes, b + 2);
  nibbles32(f.codes, b + 6);
}
void pack_q5_1(const BlockCodes& f, uint8_t* b) {
  put_f16(b, f.d);
  put_f16(b + 2, f.m);
  high_bits32(f.codes, b + 4);
  nibbles32(f.codes, b + 8);
}
void pack_q8_0(const BlockCodes& f, uint8_t* b) {
  put_f16(b, f.d);
  for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(f.codes[j]));
}

// Q2_K: +0 scales[16] (low nibble scale, high nibble min of run e/16) | +16 qs[64] | +80 d | +82 dmin;
// element 128n + 32j + l is bits 2j..2j+1 of qs[32n + l].
void pack_q2_k(const BlockCodes& f, uint8_t* b) {
  for (int k = 0; k < 16; ++k) b[k] = static_cast<uint8_t>((f.scales[k] & 0xF) | ((f.mins[k] & 0xF) << 4));
  for (int e = 0; e < 256; ++e)
    b[16 + 32 * (e / 128) + e % 32] |= static_cast<uint8_t>((f.codes[e] & 3) << (2 * ((e % 128) / 32)));
  put_f16(b + 80, f.d);
  put_f16(b + 82, f.m);
}

// Q3_K: +0 hmask[32] | +32 qs[64] | +96 scales[12] | +108 d. Element 128n + 32j + l: low 2 bits as
// in Q2_K, bit 2 = bit 4n+j of hmask[l]. Scale k (6 bits): low nibble in byte k (k < 8) or the high
// nibble of byte k-8, top 2 bits in bits 2*(k/4) of byte 8 + k%4.
void pack_q3_k(const BlockCodes& f, uint8_t* b) {
  for (int e = 0; e < 256; ++e) {
    const int n = e / 128, j = (e % 128) / 32, l = e % 32;
    b[32 + 32 * n + l] |= static_cast<uint8_t>((f.codes[e] & 3) << (2 * j));
    b[l] |= static_cast<uint8_t>(((f.codes[e] >> 2) & 1) << (4 * n + j));
  }
  for (int k = 0; k < 16; ++k) {
    const int s = f.scales[k] & 63;
    b[96 + k % 8] |= static_cast<uint8_t>((s & 0xF) << (k < 8 ? 0 : 4));
    b[96 + 8 + k % 4] |= static_cast<uint8_t>((s >> 4) << (2 * (k / 4)));
  }
  put_f16(b + 108, f.d);
}

// Q4_K / Q5_K scales[12]: 8 six-bit (scale, min) pairs; pairs 0..3 whole in bytes k and k+4, pairs
// 4..7 as low nibbles in byte k+8 with their top two bits in bits 6..7 of bytes k and k+4.
void pack_k4_scales(const BlockCodes& f, uint8_t* q) {
  for (int k = 0; k < 4; ++k) {
    q[k] = static_cast<uint8_t>((f.scales[k] & 63) | (((f.scales[k + 4] >> 4) & 3) << 6));
    q[k + 4] = static_cast<uint8_t>((f.mins[k] & 63) | (((f.mins[k + 4] >> 4) & 3) << 6));
    q[k + 8] = static_cast<uint8_t>((f.scales[k + 4] & 0xF) | ((f.mins[k + 4] & 0xF) << 4));
  }
}
// Q4_K: +0 d | +2 dmin | +4 scales[12] | +16 qs[128]; 64-element chunk c: sub-block 2c in the low
// nibbles of qs[32c..32c+31], 2c+1 in their high nibbles.  Q5_K: qh[32] at +16, qs at +48; bit 4 of
// element 64c + l is bit 2c of qh[l], of element 64c + 32 + l bit 2c+1.
template <bool kQ5>
void pack_k4(const BlockCodes& f, uint8_t* b) {
  put_f16(b, f.d);
  put_f16(b + 2, f.m);
  pack_k4_scales(f, b + 4);
  uint8_t* qs = b + (kQ5 ? 48 : 16);
  for (int e = 0; e < 256; ++e) {
    const int c = e / 64, hi = (e % 64) / 32, l = e % 32;
    qs[32 * c + l] |= static_cast<uint8_t>((f.codes[e] & 0xF) << (4 * hi));
    if (kQ5) b[16 + l] |= static_cast<uint8_t>(((f.codes[e] >> 4) & 1) << (2 * c + hi));
  }
}

// Q6_K: +0 ql[128] | +128 qh[64] | +192 i8 scales[16] | +208 d. Element 128h + 32g + l: low nibble
// in ql[64h + l + 32 (g odd)] (low nibble for g < 2, high for g >= 2), top 2 bits in bits 2g of
// qh[32h + l]; scale e/16.
void pack_q6_k(const BlockCodes& f, uint8_t* b) {
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, g = (e % 128) / 32, l = e % 32, u = f.codes[e] & 63;
    b[64 * h + (g % 2 ? l + 32 : l)] |= static_cast<uint8_t>((u & 0xF) << (g < 2 ? 0 : 4));
    b[128 + 32 * h + l] |= static_cast<uint8_t>((u >> 4) << (2 * g));
  }
  for (int k = 0; k < 16; ++k) b[192 + k] = static_cast<uint8_t>(static_cast<int8_t>(f.scales[k]));
  put_f16(b + 208, f.d);
}

struct PackerRow {
  TypeId type;
  void (*pack)(const BlockCodes&, uint8_t*);
  size_t n_scales, n_mins;
};
constexpr std::array kPackers = {
    PackerRow{TypeId::q4_0, &pack_q4_0, 0, 0},     PackerRow{TypeId::q4_1, &pack_q4_1, 0, 0},
    PackerRow{TypeId::q5_0, &pack_q5_0, 0, 0},     PackerRow{TypeId::q5_1, &pack_q5_1, 0, 0},
    PackerRow{TypeId::q8_0, &pack_q8_0, 0, 0},     PackerRow{TypeId::q2_k, &pack_q2_k, 16, 16},
    PackerRow{TypeId::q3_k, &pack_q3_k, 16, 0},    PackerRow{TypeId::q4_k, &pack_k4<false>, 8, 8},
    PackerRow{TypeId::q5_k, &pack_k4<true>, 8, 8}, PackerRow{TypeId::q6_k, &pack_q6_k, 16, 0},
};

const PackerRow* find_packer(TypeId type) {
  for (const auto& row : kPackers)
    if (row.type == type) return &row;
  return nullptr;
}

}   // namespace

bool can_pack_block(TypeId type) { return find_packer(type) != nullptr; }

bool pack_block(TypeId type, const BlockCodes& fields, std::vector<uint8_t>& out) {
  const PackerRow* row = find_packer(type);
  const TypeInfo& info = type_info(type);
  if (!row || fields.codes.size() != info.block_elems || fields.scales.size() != row->n_scales ||
      fields.mins.size() != row->n_mins)
    return false;
  const size_t at = out.size();
  out.resize(at + info.block_bytes, 0);
  row->pack(fields, out.data() + at);
  return true;
}

std::vector<uint8_t> pack_affine_codes(std::span<const int> codes, int bits) {
  std::vector<uint8_t> out((codes.size() * static_cast<size_t>(bits) + 7) / 8, 0);
  const uint32_t mask = (1u << bits) - 1;
  for (size_t i = 0; i < codes.size(); ++i) {
    const uint64_t bit = i * static_cast<uint64_t>(bits);
    const uint32_t v = (static_cast<uint32_t>(codes[i]) & mask) << (bit % 8);
    for (uint64_t k = bit / 8; k < out.size() && (k - bit / 8) < 3; ++k)
      out[k] |= static_cast<uint8_t>(v >> (8 * (k - bit / 8)));
  }
  return out;
}

}   // namespace akview::testing
