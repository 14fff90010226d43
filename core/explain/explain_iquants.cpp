// Step-throughs of ggml's IQ types: the lattice types IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
// IQ1_M (grid indices -> grid points from ggml's codebooks, sign indices -> sign bytes, the sub-block
// scale) and the non-linear IQ4_NL / IQ4_XS. One group is one 32-element sub-block. Float operations
// as in core/decode/decode_iquants.cpp. FORMATS.md §2.7.
#include <fmt/format.h>

#include "core/decode/float_formats.hpp"
#include "core/decode/iq_grids.hpp"
#include "core/explain/block_steps.hpp"

namespace akview::explain {
namespace {

using decode::iq::grid_byte;
using decode::iq::kIq4nlValues;
using decode::iq::kSignsIq2xs;

inline float sign_of(uint8_t signs, int j) { return (signs >> j) & 1 ? -1.0f : 1.0f; }

// The grid points and signs of the lattice types' 32 elements.
struct Lattice {
  int grid[32];
  float sign[32];
};

void lattice_steps(BlockSteps& s, const Lattice& l, const std::vector<double>& indices, std::string_view index_how,
                   std::string_view grid_name, int per_index) {
  s.add("grid indices", std::string(index_how), indices);
  std::vector<double> grid(l.grid, l.grid + 32);
  s.add("grid values", fmt::format("{}[index]: {} magnitudes per index, element order", grid_name, per_index), grid);
}

// IQ2_XS / IQ2_S: scales[ib] at `offset` holds two 4-bit scales, one per 16-element half.
void half_scales_step(BlockSteps& s, size_t offset, float d, float& db0, float& db1) {
  const int ib = s.g();
  const uint8_t sc = s.b()[offset + ib];
  db0 = d * (0.5f + static_cast<float>(sc & 0xF)) * 0.25f;
  db1 = d * (0.5f + static_cast<float>(sc >> 4)) * 0.25f;
  s.add(fmt::format("scales of sub-block {}", ib),
        fmt::format("scales[{}] {} = 0x{:02x}: elements 0-15 use the low nibble {}, 16-31 the high nibble {}; "
                    "db = d * (0.5 + s) * 0.25 = {}, {}",
                    ib, s.at(offset + ib), sc, sc & 0xF, sc >> 4, num(db0), num(db1)),
        {static_cast<double>(sc & 0xF), static_cast<double>(sc >> 4), db0, db1});
}

void signs_step(BlockSteps& s, const Lattice& l, std::string how) {
  s.add("signs", std::move(how), std::vector<double>(l.sign, l.sign + 32));
}

}   // namespace

// IQ2_XXS: per sub-block 8 bytes: 4 one-byte grid indices, then an LE u32 with 4 x 7-bit sign indices
// and the 4-bit scale in bits 28..31.
void explain_iq2_xxs(BlockSteps& s, float* y) {
  const int ib = s.g();
  const float d = s.f16("d (super-block scale)", 0);
  const size_t q = 2 + 8 * static_cast<size_t>(ib);
  s.raw("qs", q, 4, "4 grid indices, one byte per 8 elements: entries of the 256-point iq2xxs grid");
  const uint32_t aux1 =
      s.u32("signs and scale", q + 4, "4 x 7-bit sign indices (bits 0..27), 4-bit scale (bits 28..31)");
  const uint32_t scale = aux1 >> 28;
  const float db = d * (0.5f + static_cast<float>(scale)) * 0.25f;
  s.add("sub-block scale",
        fmt::format("s = aux >> 28 = {}; db = d * (0.5 + s) * 0.25 = {} * {} * 0.25 = {}", scale, num(d),
                    num(0.5f + static_cast<float>(scale)), num(db)),
        {static_cast<double>(scale), db});
  Lattice l{};
  std::vector<double> idx, sidx, sbytes;
  for (int k = 0; k < 4; ++k) {
    const uint8_t gi = s.b()[q + k];
    const uint32_t si = (aux1 >> (7 * k)) & 127;
    const uint8_t signs = kSignsIq2xs[si];
    idx.push_back(gi);
    sidx.push_back(si);
    sbytes.push_back(signs);
    for (int j = 0; j < 8; ++j) {
      l.grid[8 * k + j] = grid_byte(decode::iq::kIq2xxsGrid[gi], j);
      l.sign[8 * k + j] = sign_of(signs, j);
    }
  }
  lattice_steps(s, l, idx, "one byte each, for elements 8i..8i+7", "iq2xxs_grid", 8);
  s.add("sign indices", "(aux >> 7i) & 127, one per 8 elements", sidx);
  s.add("sign bytes",
        "ksigns_iq2xs[sign index]: 7 stored sign bits and an 8th that makes the count of minus signs even", sbytes);
  signs_step(s, l, "bit j of the sign byte set: element 8i+j is negative");
  for (int k = 0; k < 32; ++k) y[k] = db * static_cast<float>(l.grid[k]) * l.sign[k];
  s.formula("y = db * grid * sign",
            fmt::format("{} * {} * {} = {}", num(db), l.grid[s.j()], num(l.sign[s.j()]), num(y[s.j()])));
}

// IQ2_XS: per 8 elements a u16 = 9-bit grid index | 7-bit sign index << 9; two 4-bit scales per sub-block.
void explain_iq2_xs(BlockSteps& s, float* y) {
  const int ib = s.g();
  const float d = s.f16("d (super-block scale)", 0);
  float db0, db1;
  half_scales_step(s, 66, d, db0, db1);
  const size_t q = 2 + 8 * static_cast<size_t>(ib);
  s.raw("qs", q, 8, "4 LE u16: grid index (low 9 bits) | sign index << 9");
  Lattice l{};
  std::vector<double> idx, sidx;
  for (int k = 0; k < 4; ++k) {
    const uint16_t qv = fp::load_u16(s.b() + q + 2 * k);
    idx.push_back(qv & 511);
    sidx.push_back(qv >> 9);
    const uint8_t signs = kSignsIq2xs[qv >> 9];
    for (int j = 0; j < 8; ++j) {
      l.grid[8 * k + j] = grid_byte(decode::iq::kIq2xsGrid[qv & 511], j);
      l.sign[8 * k + j] = sign_of(signs, j);
    }
  }
  lattice_steps(s, l, idx, "u16 & 511, one per 8 elements", "iq2xs_grid", 8);
  s.add("sign indices", "u16 >> 9 -> ksigns_iq2xs (8th sign bit: even parity)", sidx);
  signs_step(s, l, "bit j of the sign byte set: element 8i+j is negative");
  for (int k = 0; k < 32; ++k) y[k] = (k < 16 ? db0 : db1) * static_cast<float>(l.grid[k]) * l.sign[k];
  const float db = s.j() < 16 ? db0 : db1;
  s.formula("y = db * grid * sign",
            fmt::format("{} * {} * {} = {}", num(db), l.grid[s.j()], num(l.sign[s.j()]), num(y[s.j()])));
}

// IQ2_S: 10-bit grid indices (8 bits in qs, 2 in qh), sign bytes stored whole, two 4-bit scales.
void explain_iq2_s(BlockSteps& s, float* y) {
  const int ib = s.g();
  const uint8_t* b = s.b();
  const float d = s.f16("d (super-block scale)", 0);
  float db0, db1;
  half_scales_step(s, 74, d, db0, db1);
  s.raw("qs", 2 + 4 * static_cast<size_t>(ib), 4, "low 8 bits of the 4 grid indices");
  s.raw("qh", 66 + static_cast<size_t>(ib), 1, "bits 2i..2i+1: bits 8-9 of grid index i");
  s.raw("signs", 34 + 4 * static_cast<size_t>(ib), 4, "one sign byte per 8 elements");
  Lattice l{};
  std::vector<double> idx;
  for (int k = 0; k < 4; ++k) {
    const uint32_t i = b[2 + 4 * ib + k] | ((static_cast<uint32_t>(b[66 + ib]) << (8 - 2 * k)) & 0x300);
    idx.push_back(i);
    for (int j = 0; j < 8; ++j) {
      l.grid[8 * k + j] = grid_byte(decode::iq::kIq2sGrid[i], j);
      l.sign[8 * k + j] = sign_of(b[34 + 4 * ib + k], j);
    }
  }
  lattice_steps(s, l, idx, "qs[i] | ((qh << (8 - 2i)) & 0x300)", "iq2s_grid", 8);
  signs_step(s, l, "bit j of sign byte i set: element 8i+j is negative");
  for (int k = 0; k < 32; ++k) y[k] = (k < 16 ? db0 : db1) * static_cast<float>(l.grid[k]) * l.sign[k];
  const float db = s.j() < 16 ? db0 : db1;
  s.formula("y = db * grid * sign",
            fmt::format("{} * {} * {} = {}", num(db), l.grid[s.j()], num(l.sign[s.j()]), num(y[s.j()])));
}

// IQ3_XXS: 8 one-byte indices of 4-element grid points; an LE u32 of 4 x 7-bit sign indices + 4-bit scale.
void explain_iq3_xxs(BlockSteps& s, float* y) {
  const int ib = s.g();
  const uint8_t* b = s.b();
  const float d = s.f16("d (super-block scale)", 0);
  const size_t qs = 2 + 8 * static_cast<size_t>(ib);
  s.raw("qs", qs, 8, "8 grid indices, one byte per 4 elements: entries of the 256-point iq3xxs grid");
  const uint32_t aux =
      s.u32("signs and scale", 66 + 4 * static_cast<size_t>(ib), "4 x 7-bit sign indices, 4-bit scale in bits 28..31");
  const uint32_t scale = aux >> 28;
  const float db = d * (0.5f + static_cast<float>(scale)) * 0.5f;
  s.add("sub-block scale", fmt::format("s = aux >> 28 = {}; db = d * (0.5 + s) * 0.5 = {}", scale, num(db)),
        {static_cast<double>(scale), db});
  Lattice l{};
  std::vector<double> idx(b + qs, b + qs + 8), sbytes;
  for (int k = 0; k < 4; ++k) {
    const uint8_t signs = kSignsIq2xs[(aux >> (7 * k)) & 127];
    sbytes.push_back(signs);
    const uint32_t g1 = decode::iq::kIq3xxsGrid[b[qs + 2 * k]], g2 = decode::iq::kIq3xxsGrid[b[qs + 2 * k + 1]];
    for (int j = 0; j < 4; ++j) {
      l.grid[8 * k + j] = grid_byte(g1, j);
      l.grid[8 * k + j + 4] = grid_byte(g2, j);
      l.sign[8 * k + j] = sign_of(signs, j);
      l.sign[8 * k + j + 4] = sign_of(signs, j + 4);
    }
  }
  lattice_steps(s, l, idx, "one byte per 4 elements", "iq3xxs_grid", 4);
  s.add("sign bytes", "ksigns_iq2xs[(aux >> 7i) & 127], one per 8 elements (8th bit: even parity)", sbytes);
  signs_step(s, l, "bit j of sign byte i set: element 8i+j is negative");
  for (int k = 0; k < 32; ++k) y[k] = db * static_cast<float>(l.grid[k]) * l.sign[k];
  s.formula("y = db * grid * sign",
            fmt::format("{} * {} * {} = {}", num(db), l.grid[s.j()], num(l.sign[s.j()]), num(y[s.j()])));
}

// IQ3_S: 9-bit indices of 4-element grid points (8 bits in qs, the 9th in qh), sign bytes, 4-bit scales.
void explain_iq3_s(BlockSteps& s, float* y) {
  const int ib = s.g();
  const uint8_t* b = s.b();
  const float d = s.f16("d (super-block scale)", 0);
  const uint8_t sc = b[106 + ib / 2];
  const int nib = (ib % 2) ? (sc >> 4) : (sc & 0xF);
  const float db = d * static_cast<float>(1 + 2 * nib);
  s.add(fmt::format("scale of sub-block {}", ib),
        fmt::format("{} nibble of scales[{}] {} = 0x{:02x}: s = {}; db = d * (1 + 2s) = {} * {} = {}",
                    ib % 2 ? "high" : "low", ib / 2, s.at(106 + static_cast<size_t>(ib / 2)), sc, nib, num(d),
                    1 + 2 * nib, num(db)),
        {static_cast<double>(nib), db});
  const size_t qs = 2 + 8 * static_cast<size_t>(ib), signs = 74 + 4 * static_cast<size_t>(ib);
  s.raw("qs", qs, 8, "low 8 bits of the 8 grid indices");
  s.raw("qh", 66 + static_cast<size_t>(ib), 1, "bit i: the 9th bit of grid index i");
  s.raw("signs", signs, 4, "one sign byte per 8 elements");
  const uint32_t h = b[66 + ib];
  Lattice l{};
  std::vector<double> idx;
  for (int k = 0; k < 4; ++k) {
    const uint32_t i1 = b[qs + 2 * k] | ((h << (8 - 2 * k)) & 256), i2 = b[qs + 2 * k + 1] | ((h << (7 - 2 * k)) & 256);
    idx.push_back(i1);
    idx.push_back(i2);
    for (int j = 0; j < 4; ++j) {
      l.grid[8 * k + j] = grid_byte(decode::iq::kIq3sGrid[i1], j);
      l.grid[8 * k + j + 4] = grid_byte(decode::iq::kIq3sGrid[i2], j);
      l.sign[8 * k + j] = sign_of(b[signs + k], j);
      l.sign[8 * k + j + 4] = sign_of(b[signs + k], j + 4);
    }
  }
  lattice_steps(s, l, idx, "qs[i] | (bit i of qh) << 8", "iq3s_grid", 4);
  signs_step(s, l, "bit j of sign byte i set: element 8i+j is negative");
  for (int k = 0; k < 32; ++k) y[k] = db * static_cast<float>(l.grid[k]) * l.sign[k];
  s.formula("y = db * grid * sign",
            fmt::format("{} * {} * {} = {}", num(db), l.grid[s.j()], num(l.sign[s.j()]), num(y[s.j()])));
}

namespace {
constexpr float kIq1Delta = 0.125f;

// The IQ1 grids hold -1, 0, +1 (int8); values are dl * (grid + delta).
void iq1_finish(BlockSteps& s, const int* grid, const float* dl, const float* delta, float* y) {
  std::vector<double> gv(grid, grid + 32), deltas;
  s.add("grid values", "iq1s_grid[index]: 8 values in {-1, 0, +1} per index", gv);
  for (int k = 0; k < 4; ++k) deltas.push_back(delta[k]);
  s.add("deltas", "±1/8 per 8 elements (sign bit set: -1/8)", deltas);
  for (int k = 0; k < 32; ++k) y[k] = dl[k / 8] * (static_cast<float>(grid[k]) + delta[k / 8]);
  const int j = s.j();
  s.formula("y = dl * (grid + delta)",
            fmt::format("{} * ({} + {}) = {}", num(dl[j / 8]), grid[j], num(delta[j / 8]), num(y[j])));
}
}   // namespace

// IQ1_S: 11-bit indices into the 2048-point iq1s grid (8 bits in qs, 3 in qh), a 3-bit scale and a
// delta sign per sub-block in the u16 qh.
void explain_iq1_s(BlockSteps& s, float* y) {
  const int ib = s.g();
  const uint8_t* b = s.b();
  const float d = s.f16("d (super-block scale)", 0);
  const size_t qs = 2 + 4 * static_cast<size_t>(ib);
  s.raw("qs", qs, 4, "low 8 bits of the 4 grid indices");
  const uint16_t qh = s.u16("qh", 34 + 2 * static_cast<size_t>(ib),
                            "bits 3i..3i+2: bits 8-10 of index i; bits 12-14: scale; bit 15: delta sign");
  const int scale = (qh >> 12) & 7;
  const float dl = d * static_cast<float>(2 * scale + 1);
  const float delta = (qh & 0x8000) ? -kIq1Delta : kIq1Delta;
  s.add("sub-block scale",
        fmt::format("s = (qh >> 12) & 7 = {}; dl = d * (2s + 1) = {} * {} = {}", scale, num(d), 2 * scale + 1, num(dl)),
        {static_cast<double>(scale), dl});
  int grid[32];
  std::vector<double> idx;
  for (int k = 0; k < 4; ++k) {
    const uint32_t i = b[qs + k] | (((qh >> (3 * k)) & 7u) << 8);
    idx.push_back(i);
    for (int j = 0; j < 8; ++j) grid[8 * k + j] = static_cast<int8_t>(grid_byte(decode::iq::kIq1sGrid[i], j));
  }
  s.add("grid indices", "qs[i] | ((qh >> 3i) & 7) << 8", idx);
  const float dls[4] = {dl, dl, dl, dl}, deltas[4] = {delta, delta, delta, delta};
  iq1_finish(s, grid, dls, deltas, y);
}

// IQ1_M: like IQ1_S with a delta sign per 8 elements, two 3-bit scales per sub-block, and the f16 d
// spread over the top nibbles of the four u16 scale words.
void explain_iq1_m(BlockSteps& s, float* y) {
  const int ib = s.g();
  const uint8_t* b = s.b();
  uint16_t sc[4];
  for (int k = 0; k < 4; ++k) sc[k] = fp::load_u16(b + 48 + 2 * k);
  const uint16_t dbits =
      static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000));
  const float d = fp::f16_to_f32(dbits);
  s.raw("scales", 48, 8, "4 LE u16: 3-bit sub-block scales (4 per word), top nibbles = the f16 super-block scale");
  s.add(
      "d (f16, from the top nibbles)",
      fmt::format("sc0 >> 12 | (sc1 >> 8) & 0xF0 | (sc2 >> 4) & 0xF00 | sc3 & 0xF000 = 0x{:04x} -> {}", dbits, num(d)),
      {d});
  const int s1 = (sc[ib / 2] >> (6 * (ib % 2))) & 7, s2 = (sc[ib / 2] >> (6 * (ib % 2) + 3)) & 7;
  const float dl1 = d * static_cast<float>(2 * s1 + 1), dl2 = d * static_cast<float>(2 * s2 + 1);
  s.add(fmt::format("scales of sub-block {}", ib),
        fmt::format("bits {}..{} and {}..{} of word {}: {} and {}; dl = d * (2s + 1) = {}, {} (elements 0-15, 16-31)",
                    6 * (ib % 2), 6 * (ib % 2) + 2, 6 * (ib % 2) + 3, 6 * (ib % 2) + 5, ib / 2, s1, s2, num(dl1),
                    num(dl2)),
        {static_cast<double>(s1), static_cast<double>(s2), dl1, dl2});
  const size_t qs = 4 * static_cast<size_t>(ib), qh = 32 + 2 * static_cast<size_t>(ib);
  s.raw("qs", qs, 4, "low 8 bits of the 4 grid indices");
  s.raw("qh", qh, 2, "per nibble: bits 8-10 of an index (bits 0-2) and its delta sign (bit 3)");
  const uint8_t h0 = b[qh], h1 = b[qh + 1];
  const uint32_t idx[4] = {
      b[qs] | ((static_cast<uint32_t>(h0) << 8) & 0x700u), b[qs + 1] | ((static_cast<uint32_t>(h0) << 4) & 0x700u),
      b[qs + 2] | ((static_cast<uint32_t>(h1) << 8) & 0x700u), b[qs + 3] | ((static_cast<uint32_t>(h1) << 4) & 0x700u)};
  const float delta[4] = {(h0 & 0x08) ? -kIq1Delta : kIq1Delta, (h0 & 0x80) ? -kIq1Delta : kIq1Delta,
                          (h1 & 0x08) ? -kIq1Delta : kIq1Delta, (h1 & 0x80) ? -kIq1Delta : kIq1Delta};
  s.add("grid indices", "qs[i] | (3 low bits of qh nibble i) << 8",
        {idx[0] * 1.0, idx[1] * 1.0, idx[2] * 1.0, idx[3] * 1.0});
  int grid[32];
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 8; ++j) grid[8 * k + j] = static_cast<int8_t>(grid_byte(decode::iq::kIq1sGrid[idx[k]], j));
  const float dls[4] = {dl1, dl1, dl2, dl2};
  iq1_finish(s, grid, dls, delta, y);
}

namespace {
void iq4_codes(BlockSteps& s, size_t qs, int* q, std::vector<double>& levels) {
  for (int k = 0; k < 16; ++k) {
    q[k] = s.b()[qs + k] & 0xF;
    q[k + 16] = s.b()[qs + k] >> 4;
  }
  s.raw("qs", qs, 16, "32 codes, 4 bits each");
  s.codes("codes (4-bit, 0..15)", "element k < 16: low nibble of qs[k]; k >= 16: high nibble of qs[k-16]",
          std::span<const int>(q, 32));
  for (int k = 0; k < 32; ++k) levels.push_back(kIq4nlValues[q[k]]);
  s.add("levels", "kvalues_iq4nl[code]: {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}",
        levels);
}
}   // namespace

void explain_iq4_nl(BlockSteps& s, float* y) {
  const float d = s.f16("d", 0);
  int q[32];
  std::vector<double> levels;
  iq4_codes(s, 2, q, levels);
  for (int k = 0; k < 32; ++k) y[k] = d * static_cast<float>(kIq4nlValues[q[k]]);
  s.formula("y = d * level", fmt::format("{} * {} = {}", num(d), kIq4nlValues[q[s.j()]], num(y[s.j()])));
}

void explain_iq4_xs(BlockSteps& s, float* y) {
  const int ib = s.g();
  const uint8_t* b = s.b();
  const float d = s.f16("d (super-block scale)", 0);
  const uint16_t sh = s.u16("scales_h", 2, "bits 2i..2i+1: the high 2 bits of sub-block i's 6-bit scale");
  s.raw("scales_l", 4, 4, "4-bit low parts of the 8 scales, two per byte (low nibble first)");
  const int lo = (b[4 + ib / 2] >> (4 * (ib % 2))) & 0xF, hi = (sh >> (2 * ib)) & 3;
  const int ls = lo | (hi << 4);
  const float dl = d * static_cast<float>(ls - 32);
  s.add(fmt::format("6-bit scale of sub-block {}", ib),
        fmt::format("ls = {} | {} << 4 = {}; dl = d * (ls - 32) = {} * {} = {}", lo, hi, ls, num(d), ls - 32, num(dl)),
        {static_cast<double>(ls), dl});
  int q[32];
  std::vector<double> levels;
  iq4_codes(s, 8 + 16 * static_cast<size_t>(ib), q, levels);
  for (int k = 0; k < 32; ++k) y[k] = dl * static_cast<float>(kIq4nlValues[q[k]]);
  s.formula("y = dl * level", fmt::format("{} * {} = {}", num(dl), kIq4nlValues[q[s.j()]], num(y[s.j()])));
}

}   // namespace akview::explain
