// The decoder table: one row per TypeId in core/types.hpp order (static_asserts keep it complete
// and ordered), pointing at a row decoder of the one signature in decoders.hpp.
#include "core/decode/decode_table.hpp"

#include <array>

namespace akview::decode {
namespace {

constexpr uint16_t bits(std::initializer_list<int> list) {
  uint16_t m = 0;
  for (int b : list) m = static_cast<uint16_t>(m | (1u << b));
  return m;
}

constexpr std::string_view kF4Caveat =
    "F4 nibble order assumed: element 2k in the low nibble of byte k (safetensors does not specify it)";
constexpr std::string_view kF6Caveat =
    "F6 bit order assumed: 4 elements per 3 bytes, little-endian bit stream, element k at bits 6k..6k+5 "
    "(safetensors does not specify it)";
constexpr std::string_view kComplexCaveat = "complex: the real part is shown";
constexpr std::string_view kQ8_1Caveat = "q8_1 is an intermediate type: decoded as qs*d (the stored sum is ignored)";

using T = TypeId;
constexpr CompositeRule kAffineAny{bits({2, 3, 4, 5, 6, 8}), 0, true};

constexpr std::array kDecoders = {
    DecoderRow{T::f32, decode_f32, {}},
    DecoderRow{T::f16, decode_f16, {}},
    DecoderRow{T::q4_0, decode_q4_0, {}},
    DecoderRow{T::q4_1, decode_q4_1, {}},
    DecoderRow{T::q5_0, decode_q5_0, {}},
    DecoderRow{T::q5_1, decode_q5_1, {}},
    DecoderRow{T::q8_0, decode_q8_0, {}},
    DecoderRow{T::q8_1, decode_q8_1, kQ8_1Caveat},
    DecoderRow{T::q2_k, decode_q2_k, {}},
    DecoderRow{T::q3_k, decode_q3_k, {}},
    DecoderRow{T::q4_k, decode_q4_k, {}},
    DecoderRow{T::q5_k, decode_q5_k, {}},
    DecoderRow{T::q6_k, decode_q6_k, {}},
    DecoderRow{T::q8_k, decode_q8_k, {}},
    DecoderRow{T::iq2_xxs, decode_iq2_xxs, {}},
    DecoderRow{T::iq2_xs, decode_iq2_xs, {}},
    DecoderRow{T::iq3_xxs, decode_iq3_xxs, {}},
    DecoderRow{T::iq1_s, decode_iq1_s, {}},
    DecoderRow{T::iq4_nl, decode_iq4_nl, {}},
    DecoderRow{T::iq3_s, decode_iq3_s, {}},
    DecoderRow{T::iq2_s, decode_iq2_s, {}},
    DecoderRow{T::iq4_xs, decode_iq4_xs, {}},
    DecoderRow{T::i8, decode_i8, {}},
    DecoderRow{T::i16, decode_i16, {}},
    DecoderRow{T::i32, decode_i32, {}},
    DecoderRow{T::i64, decode_i64, {}},
    DecoderRow{T::f64, decode_f64, {}},
    DecoderRow{T::iq1_m, decode_iq1_m, {}},
    DecoderRow{T::bf16, decode_bf16, {}},
    DecoderRow{T::tq1_0, decode_tq1_0, {}},
    DecoderRow{T::tq2_0, decode_tq2_0, {}},
    DecoderRow{T::mxfp4, decode_mxfp4, {}},
    DecoderRow{T::nvfp4, decode_nvfp4, {}},
    DecoderRow{T::q1_0, decode_q1_0, {}},
    DecoderRow{T::q2_0, decode_q2_0, {}},
    DecoderRow{T::boolean, decode_bool, {}},
    DecoderRow{T::f4, decode_f4, kF4Caveat},
    DecoderRow{T::f6_e2m3, decode_f6_e2m3, kF6Caveat},
    DecoderRow{T::f6_e3m2, decode_f6_e3m2, kF6Caveat},
    DecoderRow{T::u8, decode_u8, {}},
    DecoderRow{T::f8_e5m2, decode_f8_e5m2, {}},
    DecoderRow{T::f8_e4m3, decode_f8_e4m3, {}},
    DecoderRow{T::f8_e8m0, decode_f8_e8m0, {}},
    DecoderRow{T::f8_e4m3fnuz, decode_f8_e4m3fnuz, {}},
    DecoderRow{T::f8_e5m2fnuz, decode_f8_e5m2fnuz, {}},
    DecoderRow{T::u16, decode_u16, {}},
    DecoderRow{T::u32, decode_u32, {}},
    DecoderRow{T::u64, decode_u64, {}},
    DecoderRow{T::c64, decode_c64, kComplexCaveat},
    DecoderRow{T::c128, decode_c128, kComplexCaveat},
    DecoderRow{T::mlx_affine, decode_mlx_affine, {}, kAffineAny},
    DecoderRow{T::mlx_mxfp4, decode_mlx_mxfp4, {}, {bits({4}), 32, false}},
    DecoderRow{T::mlx_nvfp4, decode_mlx_nvfp4, {}, {bits({4}), 16, false}},
    DecoderRow{T::mlx_mxfp8, decode_mlx_mxfp8, {}, {bits({8}), 32, false}},
    DecoderRow{T::ollama_int4, decode_ollama_affine, {}, {bits({4}), 0, true}},
    DecoderRow{T::ollama_int8, decode_ollama_affine, {}, {bits({8}), 0, true}},
    DecoderRow{T::ollama_nvfp4, decode_ollama_nvfp4, {}, {bits({4}), 16, false}},
    DecoderRow{T::ollama_mxfp4, decode_ollama_mxfp4, {}, {bits({4}), 32, false}},
    DecoderRow{T::ollama_mxfp8, decode_ollama_mxfp8, {}, {bits({8}), 32, false}},
};
static_assert(kDecoders.size() == static_cast<size_t>(TypeId::count_), "one decoder row per TypeId");

constexpr bool rows_in_order() {
  for (size_t i = 0; i < kDecoders.size(); ++i)
    if (static_cast<size_t>(kDecoders[i].type) != i) return false;
  return true;
}
static_assert(rows_in_order(), "kDecoders rows must follow the TypeId order");

}   // namespace

const DecoderRow& decoder_row(TypeId type) { return kDecoders[static_cast<size_t>(type)]; }

}   // namespace akview::decode
