// Step-throughs of ggml's ternary types (TQ1_0, TQ2_0: one group per 256-element block) and FP4
// blocks (MXFP4: 32 elements, E8M0 scale; NVFP4: 16-element sub-blocks with UE4M3 scales). Float
// operations as in core/decode/decode_ternary.cpp and decode_fp4.cpp. FORMATS.md §2.7.
#include <fmt/format.h>

#include "core/decode/float_formats.hpp"
#include "core/explain/block_steps.hpp"

namespace akview::explain {
namespace {
constexpr int8_t kFp4Doubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
}

void explain_tq1_0(BlockSteps& s, float* y) {
  static constexpr uint8_t kPow3[6] = {1, 3, 9, 27, 81, 243};
  const uint8_t* b = s.b();
  const float d = s.f16("d", 52);
  s.raw("qs", 0, 48, "5 trits per byte in base 3 (scaled so the top trit comes out first)");
  s.raw("qh", 48, 4, "4 trits per byte");
  int q[256];
  int k = 0;
  auto trit = [](uint8_t x, uint8_t pw) { return (static_cast<uint16_t>(static_cast<uint8_t>(x * pw)) * 3) >> 8; };
  for (int n = 0; n < 5; ++n)
    for (int m = 0; m < 32; ++m) q[k++] = trit(b[m], kPow3[n]);
  for (int n = 0; n < 5; ++n)
    for (int m = 0; m < 16; ++m) q[k++] = trit(b[32 + m], kPow3[n]);
  for (int n = 0; n < 4; ++n)
    for (int j = 0; j < 4; ++j) q[k++] = trit(b[48 + j], kPow3[n]);
  s.codes("trits (0..2)",
          "trit n of byte x = ((uint8)(x * 3^n) * 3) >> 8; elements 0-159: qs[0..31] trit-major, 160-239: qs[32..47], "
          "240-255: qh[0..3]",
          q);
  for (int i = 0; i < 256; ++i) y[i] = static_cast<float>(q[i] - 1) * d;
  s.formula("y = (t - 1) * d", fmt::format("({} - 1) * {} = {}", q[s.j()], num(d), num(y[s.j()])));
}

void explain_tq2_0(BlockSteps& s, float* y) {
  const uint8_t* b = s.b();
  const float d = s.f16("d", 64);
  s.raw("qs", 0, 64, "256 codes, 2 bits each");
  int q[256];
  int k = 0;
  for (int j = 0; j < 64; j += 32)
    for (int l = 0; l < 4; ++l)
      for (int m = 0; m < 32; ++m) q[k++] = (b[j + m] >> (2 * l)) & 3;
  s.codes("codes (2-bit, 0..2)", "element 128h + 32l + m = (qs[32h + m] >> 2l) & 3", q);
  for (int i = 0; i < 256; ++i) y[i] = static_cast<float>(q[i] - 1) * d;
  s.formula("y = (q - 1) * d", fmt::format("({} - 1) * {} = {}", q[s.j()], num(d), num(y[s.j()])));
}

void explain_mxfp4(BlockSteps& s, float* y) {
  const uint8_t e = s.b()[0];
  const float d = fp::e8m0_half_to_f32(e);
  s.add("scale e (E8M0 shared exponent)",
        fmt::format("byte {:02x} {} = {}: scale 2^(e-127); ggml stores E2M1 doubled, so d = 2^(e-128) = {}", e, s.at(0),
                    e, num(d)),
        {static_cast<double>(e), d});
  int q[32];
  for (int k = 0; k < 16; ++k) {
    q[k] = s.b()[1 + k] & 0xF;
    q[k + 16] = s.b()[1 + k] >> 4;
  }
  s.raw("qs", 1, 16, "32 E2M1 codes");
  s.codes("codes (E2M1)", "element k < 16: low nibble of qs[k]; k >= 16: high nibble of qs[k-16]", q);
  std::vector<double> kv;
  for (int k = 0; k < 32; ++k) kv.push_back(kFp4Doubled[q[k]]);
  s.add("doubled E2M1 values", "kvalues_mxfp4[code] = 2 * E2M1: {0, 1, 2, 3, 4, 6, 8, 12, -0, -1, ..., -12}", kv);
  for (int k = 0; k < 32; ++k) y[k] = static_cast<float>(kFp4Doubled[q[k]]) * d;
  s.formula("y = kvalue * d", fmt::format("{} * {} = {}", kFp4Doubled[q[s.j()]], num(d), num(y[s.j()])));
}

void explain_nvfp4(BlockSteps& s, float* y) {
  const int g = s.g();
  const uint8_t x = s.b()[g];
  const float d = fp::ue4m3_half_to_f32(x);
  s.add(fmt::format("scale of sub-block {} (UE4M3)", g),
        fmt::format(
            "d[{}] {} = 0x{:02x}: exponent {} mantissa {} (bias 7); ggml halves it for its doubled E2M1 table: d = {}",
            g, s.at(static_cast<size_t>(g)), x, (x >> 3) & 0xF, x & 7, num(d)),
        {static_cast<double>(x), d});
  const size_t qs = 4 + 8 * static_cast<size_t>(g);
  int q[16];
  for (int j = 0; j < 8; ++j) {
    q[j] = s.b()[qs + j] & 0xF;
    q[j + 8] = s.b()[qs + j] >> 4;
  }
  s.raw("qs", qs, 8, "16 E2M1 codes");
  s.codes("codes (E2M1)",
          fmt::format("element k < 8: low nibble of qs[{} + k]; k >= 8: high nibble of qs[{} + k - 8]", qs - 4, qs - 4),
          q);
  for (int k = 0; k < 16; ++k) y[k] = static_cast<float>(kFp4Doubled[q[k]]) * d;
  s.formula("y = kvalue * d", fmt::format("{} * {} = {}", kFp4Doubled[q[s.j()]], num(d), num(y[s.j()])));
}

}   // namespace akview::explain
