// Step-throughs of ggml's K-quants (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K): one group is one sub-block
// of a 256-element super-block (16 or 32 elements; Q8_K: the whole block). The sub-block scale is
// unpacked from its packed bits with the numbers shown, then d * sc (and dmin * m) as the decoder does
// (core/decode/decode_kquants.cpp). FORMATS.md §2.7.
#include <fmt/format.h>

#include "core/decode/float_formats.hpp"
#include "core/decode/kquant_scales.hpp"
#include "core/explain/block_steps.hpp"

namespace akview::explain {

// Q2_K: group g (0..15) of 16; scales[g] holds the 4-bit scale (low) and min (high).
void explain_q2_k(BlockSteps& s, float* y) {
  const int g = s.g();
  const float d = s.f16("d (super-block scale)", 80);
  const float dmin = s.f16("dmin (super-block min scale)", 82);
  const uint8_t sc = s.b()[g];
  s.add(fmt::format("scale and min of sub-block {} (4 bits each)", g),
        fmt::format("scales[{}] {} = 0x{:02x}: sc = low nibble = {}, m = high nibble = {}", g, s.at(g), sc, sc & 0xF,
                    sc >> 4),
        {static_cast<double>(sc & 0xF), static_cast<double>(sc >> 4)});
  const float dl = d * static_cast<float>(sc & 0xF), ml = dmin * static_cast<float>(sc >> 4);
  s.add("sub-block scale and min",
        fmt::format("scale = d * sc = {} * {} = {}; min = dmin * m = {} * {} = {}", num(d), sc & 0xF, num(dl),
                    num(dmin), sc >> 4, num(ml)),
        {dl, ml});
  const int n = g / 8, shift = 2 * ((g % 8) / 2), half = g % 2;
  const size_t qs = 16 + 32 * static_cast<size_t>(n) + 16 * static_cast<size_t>(half);
  int q[16];
  for (int l = 0; l < 16; ++l) q[l] = (s.b()[qs + l] >> shift) & 3;
  s.raw("qs", qs, 16, fmt::format("bits {}..{} of each byte are this sub-block's codes", shift, shift + 1));
  s.codes("codes (2-bit, 0..3)", fmt::format("element k = (qs[{} + k] >> {}) & 3", qs - 16, shift), q);
  for (int l = 0; l < 16; ++l) y[l] = dl * static_cast<float>(q[l]) - ml;
  s.formula("y = scale * q - min", fmt::format("{} * {} - {} = {}", num(dl), q[s.j()], num(ml), num(y[s.j()])));
}

// Q3_K: group g (0..15) of 16; 6-bit scales offset by 32; the code's third bit in hmask.
void explain_q3_k(BlockSteps& s, float* y) {
  const int g = s.g();
  const uint8_t* b = s.b();
  const float d = s.f16("d (super-block scale)", 108);
  int8_t sc[16];
  decode::q3_k_unpack_scales(b + 96, sc);
  const int low = g < 8 ? (b[96 + g] & 0xF) : (b[96 + g - 8] >> 4);
  const int high = (b[96 + 8 + g % 4] >> (2 * (g / 4))) & 3;
  s.raw("scales", 96, 12,
        "16 6-bit scales: low 4 bits in bytes 0-7 (low nibble for 0-7, high for 8-15), high 2 bits in bytes 8-11");
  s.add(
      fmt::format("6-bit scale of sub-block {}", g),
      fmt::format(
          "low 4 = {} of scales[{}] = {}; high 2 = (scales[{}] >> {}) & 3 = {}; s = {} | {} << 4 = {}; s - 32 = {}",
          g < 8 ? "low nibble" : "high nibble", g % 8, low, 8 + g % 4, 2 * (g / 4), high, low, high, sc[g], sc[g] - 32),
      {static_cast<double>(sc[g]), static_cast<double>(sc[g] - 32)});
  const float dl = d * static_cast<float>(sc[g] - 32);
  s.add("sub-block scale", fmt::format("scale = d * (s - 32) = {} * {} = {}", num(d), sc[g] - 32, num(dl)), {dl});
  const int n = g / 8, sidx = (g % 8) / 2, half = g % 2, hbit = 4 * n + sidx;
  const size_t qs = 32 + 32 * static_cast<size_t>(n) + 16 * static_cast<size_t>(half),
               hm = 16 * static_cast<size_t>(half);
  s.raw("qs", qs, 16, fmt::format("bits {}..{} of each byte: the low 2 bits of the codes", 2 * sidx, 2 * sidx + 1));
  s.raw("hmask", hm, 16, fmt::format("bit {} of each byte: set = code as is, clear = code - 4", hbit));
  int q[16];
  for (int l = 0; l < 16; ++l) {
    const int lo = (b[qs + l] >> (2 * sidx)) & 3;
    q[l] = lo - (((b[hm + l] >> hbit) & 1) ? 0 : 4);
  }
  s.codes("codes (3-bit, -4..3)",
          fmt::format("element k = ((qs[{} + k] >> {}) & 3) - (bit {} of hmask[{} + k] ? 0 : 4)", qs - 32, 2 * sidx,
                      hbit, hm),
          q);
  for (int l = 0; l < 16; ++l) y[l] = dl * static_cast<float>(q[l]);
  s.formula("y = scale * q", fmt::format("{} * {} = {}", num(dl), q[s.j()], num(y[s.j()])));
}

namespace {

// Q4_K / Q5_K: the 6-bit (scale, min) pair of sub-block g from the 12 packed bytes at +4.
void kquant_pair_step(BlockSteps& s, int g, uint8_t* sc, uint8_t* mn) {
  const uint8_t* q = s.b() + 4;
  decode::kquant_scale_min(g, q, sc, mn);
  s.raw("scales", 4, 12,
        "8 (scale, min) pairs of 6 bits: bytes 0-3 scales 0-3, bytes 4-7 mins 0-3 (their top 2 bits: "
        "the high bits of pairs 4-7), bytes 8-11 the low 4 bits of scales 4-7 (low nibble) and mins 4-7");
  std::string how;
  if (g < 4) {
    how = fmt::format("sc = scales[{}] & 63 = 0x{:02x} & 63 = {}; m = scales[{}] & 63 = 0x{:02x} & 63 = {}", g, q[g],
                      *sc, g + 4, q[g + 4], *mn);
  } else {
    how = fmt::format(
        "sc = (scales[{0}] & 0xF) | (scales[{1}] >> 6) << 4 = {2} | {3} << 4 = {4}; "
        "m = (scales[{0}] >> 4) | (scales[{5}] >> 6) << 4 = {6} | {7} << 4 = {8}",
        g + 4, g - 4, q[g + 4] & 0xF, q[g - 4] >> 6, *sc, g, q[g + 4] >> 4, q[g] >> 6, *mn);
  }
  s.add(fmt::format("6-bit scale and min of sub-block {}", g), how,
        {static_cast<double>(*sc), static_cast<double>(*mn)});
}

template <bool kFiveBit>
void explain_q45_k(BlockSteps& s, float* y) {
  const int g = s.g();
  const uint8_t* b = s.b();
  const float d = s.f16("d (super-block scale)", 0);
  const float dmin = s.f16("dmin (super-block min scale)", 2);
  uint8_t sc, mn;
  kquant_pair_step(s, g, &sc, &mn);
  const float dl = d * static_cast<float>(sc), ml = dmin * static_cast<float>(mn);
  s.add("sub-block scale and min",
        fmt::format("scale = d * sc = {} * {} = {}; min = dmin * m = {} * {} = {}", num(d), sc, num(dl), num(dmin), mn,
                    num(ml)),
        {dl, ml});
  const size_t qs = (kFiveBit ? 48 : 16) + 32 * static_cast<size_t>(g / 2);
  const bool high = g % 2;
  s.raw("qs", qs, 32,
        fmt::format("the {} nibbles are this sub-block's codes{}", high ? "high" : "low",
                    kFiveBit ? " (low 4 bits)" : ""));
  int q[32];
  for (int l = 0; l < 32; ++l) q[l] = high ? (b[qs + l] >> 4) : (b[qs + l] & 0xF);
  std::string where =
      fmt::format("element k = {} nibble of qs[{} + k]", high ? "high" : "low", qs - (kFiveBit ? 48 : 16));
  if constexpr (kFiveBit) {
    s.raw("qh", 16, 32, fmt::format("bit {} of byte k is the 5th bit (value 16) of element k", g));
    for (int l = 0; l < 32; ++l) q[l] += ((b[16 + l] >> g) & 1) << 4;
    where += fmt::format(", plus 16 * bit {} of qh[k]", g);
  }
  s.codes(kFiveBit ? "codes (5-bit, 0..31)" : "codes (4-bit, 0..15)", where, q);
  for (int l = 0; l < 32; ++l) y[l] = dl * static_cast<float>(q[l]) - ml;
  s.formula("y = scale * q - min", fmt::format("{} * {} - {} = {}", num(dl), q[s.j()], num(ml), num(y[s.j()])));
}

}   // namespace

void explain_q4_k(BlockSteps& s, float* y) { explain_q45_k<false>(s, y); }
void explain_q5_k(BlockSteps& s, float* y) { explain_q45_k<true>(s, y); }

// Q6_K: group g (0..15) of 16; int8 scales; codes: 4 low bits in ql, 2 high bits in qh, minus 32.
void explain_q6_k(BlockSteps& s, float* y) {
  const int g = s.g();
  const uint8_t* b = s.b();
  const float d = s.f16("d (super-block scale)", 208);
  const int8_t sc = static_cast<int8_t>(b[192 + g]);
  s.add(fmt::format("scale of sub-block {} (int8)", g),
        fmt::format("scales[{}] {} = 0x{:02x} -> {}", g, s.at(192 + g), b[192 + g], sc), {static_cast<double>(sc)});
  const float dl = d * static_cast<float>(sc);
  s.add("sub-block scale", fmt::format("scale = d * sc = {} * {} = {}", num(d), sc, num(dl)), {dl});
  const int n = g / 8, k = (g % 8) / 2, l0 = (g % 2) * 16;
  const size_t ql = 64 * static_cast<size_t>(n) + 32 * static_cast<size_t>(k % 2) + static_cast<size_t>(l0);
  const size_t qh = 128 + 32 * static_cast<size_t>(n) + static_cast<size_t>(l0);
  s.raw("ql", ql, 16, fmt::format("the {} nibbles: the low 4 bits of the codes", k < 2 ? "low" : "high"));
  s.raw("qh", qh, 16, fmt::format("bits {}..{} of each byte: the high 2 bits of the codes", 2 * k, 2 * k + 1));
  int q[16];
  for (int l = 0; l < 16; ++l) {
    const int lo = k < 2 ? (b[ql + l] & 0xF) : (b[ql + l] >> 4);
    q[l] = (lo | (((b[qh + l] >> (2 * k)) & 3) << 4)) - 32;
  }
  s.codes("codes (6-bit, -32..31)",
          fmt::format("element k = ({} nibble of ql[{} + k] | ((qh[{} + k] >> {}) & 3) << 4) - 32",
                      k < 2 ? "low" : "high", ql, qh - 128, 2 * k),
          q);
  for (int l = 0; l < 16; ++l) y[l] = dl * static_cast<float>(q[l]);
  s.formula("y = scale * q", fmt::format("{} * {} = {}", num(dl), q[s.j()], num(y[s.j()])));
}

// Q8_K: one group of 256; an f32 scale and int8 codes (the bsums are for dot products only).
void explain_q8_k(BlockSteps& s, float* y) {
  const float d = s.f32("d", 0);
  int q[256];
  for (int k = 0; k < 256; ++k) q[k] = static_cast<int8_t>(s.b()[4 + k]);
  s.codes("codes (int8, -128..127)",
          fmt::format("element k = byte qs[k] {} as a signed int8 (bsums @+260 are not used)", s.at(4)), q);
  for (int k = 0; k < 256; ++k) y[k] = d * static_cast<float>(q[k]);
  s.formula("y = d * q", fmt::format("{} * {} = {}", num(d), q[s.j()], num(y[s.j()])));
}

}   // namespace akview::explain
