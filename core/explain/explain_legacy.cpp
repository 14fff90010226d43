// Step-throughs of ggml's legacy block quants (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q1_0, Q2_0): one
// group is one block. Float operations as in core/decode/decode_legacy_quants.cpp. FORMATS.md §2.7.
#include <fmt/format.h>

#include "core/decode/float_formats.hpp"
#include "core/explain/block_steps.hpp"

namespace akview::explain {
namespace {

constexpr const char* kNibbleOrder = "element k < 16: low nibble of qs[k]; element k >= 16: high nibble of qs[k-16]";

void nibbles(const uint8_t* qs, int* q) {
  for (int k = 0; k < 16; ++k) {
    q[k] = qs[k] & 0xF;
    q[k + 16] = qs[k] >> 4;
  }
}

// The fifth bits of Q5_0 / Q5_1: bit k of the LE u32 qh is bit 4 of element k's code.
void add_fifth_bits(BlockSteps& s, size_t qh_offset, int* q) {
  const uint32_t qh = s.u32("qh", qh_offset, "bit k is the 5th bit (value 16) of element k");
  for (int k = 0; k < 32; ++k) q[k] |= static_cast<int>((qh >> k) & 1) << 4;
}

}   // namespace

namespace {

// Q4_0, Q4_1, Q5_0, Q5_1: +0 f16 d [| +2 f16 m] [| u32 qh] | qs[16]. The _0 types centre the codes
// (y = (q - 2^(bits-1)) * d), the _1 types add the offset m (y = q * d + m).
template <bool kFiveBit, bool kHasMin>
void nibble_block(BlockSteps& s, float* y) {
  const float d = s.f16("d", 0);
  const float m = kHasMin ? s.f16("m", 2) : 0.0f;
  const size_t qh = kHasMin ? 4 : 2, qs = qh + (kFiveBit ? 4 : 0);
  int q[32];
  nibbles(s.b() + qs, q);
  s.raw("qs", qs, 16, kFiveBit ? "low 4 bits of the 32 codes" : "32 codes, 4 bits each");
  if constexpr (kFiveBit) add_fifth_bits(s, qh, q);
  s.codes(kFiveBit ? "codes (5-bit, 0..31)" : "codes (4-bit, 0..15)",
          std::string(kNibbleOrder) + (kFiveBit ? ", plus 16 * bit k of qh" : ""), q);
  const int j = s.j();
  if constexpr (kHasMin) {
    for (int k = 0; k < 32; ++k) y[k] = static_cast<float>(q[k]) * d + m;
    s.formula("y = q * d + m", fmt::format("{} * {} + {} = {}", q[j], num(d), num(m), num(y[j])));
  } else {
    constexpr int kCentre = kFiveBit ? 16 : 8;
    for (int k = 0; k < 32; ++k) y[k] = static_cast<float>(q[k] - kCentre) * d;
    s.formula(fmt::format("y = (q - {}) * d", kCentre),
              fmt::format("({} - {}) * {} = {}", q[j], kCentre, num(d), num(y[j])));
  }
}

}   // namespace

void explain_q4_0(BlockSteps& s, float* y) { nibble_block<false, false>(s, y); }
void explain_q4_1(BlockSteps& s, float* y) { nibble_block<false, true>(s, y); }
void explain_q5_0(BlockSteps& s, float* y) { nibble_block<true, false>(s, y); }
void explain_q5_1(BlockSteps& s, float* y) { nibble_block<true, true>(s, y); }

namespace {
void q8_common(BlockSteps& s, size_t qs_offset, float d, float* y) {
  int q[32];
  for (int k = 0; k < 32; ++k) q[k] = static_cast<int8_t>(s.b()[qs_offset + k]);
  s.codes("codes (int8, -128..127)", fmt::format("element k = byte qs[k] {} read as a signed int8", s.at(qs_offset)),
          q);
  for (int k = 0; k < 32; ++k) y[k] = static_cast<float>(q[k]) * d;
  s.formula("y = q * d", fmt::format("{} * {} = {}", q[s.j()], num(d), num(y[s.j()])));
}
}   // namespace

void explain_q8_0(BlockSteps& s, float* y) { q8_common(s, 2, s.f16("d", 0), y); }

void explain_q8_1(BlockSteps& s, float* y) {
  const float d = s.f16("d", 0);
  s.f16("s (= d * sum q, not used to decode)", 2);
  q8_common(s, 4, d, y);
}

void explain_q1_0(BlockSteps& s, float* y) {
  const float d = s.f16("d", 0);
  int q[128];
  for (int k = 0; k < 128; ++k) q[k] = (s.b()[2 + k / 8] >> (k % 8)) & 1;
  s.raw("qs", 2, 16, "128 sign bits");
  s.codes("codes (1-bit)", "element k = bit k%8 of qs[k/8]", q);
  const float neg_d = -d;
  for (int k = 0; k < 128; ++k) y[k] = q[k] ? d : neg_d;
  s.formula("y = bit ? d : -d", fmt::format("bit {} -> {}", q[s.j()], num(y[s.j()])));
}

void explain_q2_0(BlockSteps& s, float* y) {
  const float d = s.f16("d", 0);
  int q[64];
  for (int k = 0; k < 64; ++k) q[k] = (s.b()[2 + k / 4] >> (2 * (k % 4))) & 3;
  s.raw("qs", 2, 16, "64 codes, 2 bits each");
  s.codes("codes (2-bit, 0..3)", "element k = bits 2(k%4)..2(k%4)+1 of qs[k/4]", q);
  for (int k = 0; k < 64; ++k) y[k] = static_cast<float>(q[k] - 1) * d;
  s.formula("y = (q - 1) * d", fmt::format("({} - 1) * {} = {}", q[s.j()], num(d), num(y[s.j()])));
}

}   // namespace akview::explain
