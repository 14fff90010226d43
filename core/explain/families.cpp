// The quantization families, one paragraph each: what is stored, the formula, bits per weight and
// where the format comes from (FORMATS.md §2.6-2.7, §3, §4.5). Each type belongs to one family.
#include <array>
#include <span>

#include "core/explain/explain.hpp"

namespace akview {
namespace {

using T = TypeId;

struct FamilyRow {
  QuantFamily family;
  std::span<const TypeId> types;
};

constexpr TypeId kLegacyTypes[] = {T::q4_0, T::q4_1, T::q5_0, T::q5_1, T::q8_0, T::q8_1, T::q1_0, T::q2_0};
constexpr TypeId kKquantTypes[] = {T::q2_k, T::q3_k, T::q4_k, T::q5_k, T::q6_k, T::q8_k};
constexpr TypeId kIqLatticeTypes[] = {T::iq2_xxs, T::iq2_xs, T::iq2_s, T::iq3_xxs, T::iq3_s, T::iq1_s, T::iq1_m};
constexpr TypeId kIqNonlinearTypes[] = {T::iq4_nl, T::iq4_xs};
constexpr TypeId kTernaryTypes[] = {T::tq1_0, T::tq2_0};
constexpr TypeId kFp4BlockTypes[] = {T::mxfp4, T::nvfp4};
constexpr TypeId kMlxAffineTypes[] = {T::mlx_affine};
constexpr TypeId kMlxFpTypes[] = {T::mlx_mxfp4, T::mlx_nvfp4, T::mlx_mxfp8};
constexpr TypeId kOllamaTypes[] = {T::ollama_int4, T::ollama_int8, T::ollama_nvfp4, T::ollama_mxfp4, T::ollama_mxfp8};
constexpr TypeId kIntegerTypes[] = {T::i8, T::i16, T::i32, T::i64, T::u8, T::u16, T::u32, T::u64, T::boolean};
constexpr TypeId kFloatTypes[] = {T::f32,         T::f16,         T::bf16, T::f64,     T::f8_e5m2,
                                  T::f8_e4m3,     T::f8_e8m0,     T::f4,   T::f6_e2m3, T::f6_e3m2,
                                  T::f8_e4m3fnuz, T::f8_e5m2fnuz, T::c64,  T::c128};

constexpr std::array<FamilyRow, 11> kFamilies = {{
    {{"legacy", "ggml legacy block quants",
      "The first ggml formats (llama.cpp, 2023). A block of 32 weights (Q1_0: 128, Q2_0: 64) stores one f16 scale d, "
      "for "
      "Q4_1 and Q5_1 also an f16 offset m, then the codes: 4-bit nibbles (low nibbles are elements 0-15, high nibbles "
      "16-31), a fifth bit per weight gathered in a 32-bit mask for Q5, or whole int8 bytes for Q8. Symmetric types "
      "centre the codes: y = (q - 8) * d for Q4_0, (q - 16) * d for Q5_0, q * d for Q8_0; the _1 types add the offset: "
      "y = q * d + m. The scale costs 16 or 32 bits per block, so Q4_0 is 4.5 bits per weight, Q4_1 5, Q5_0 5.5, Q5_1 "
      "6 "
      "and Q8_0 8.5. Q8_1 (with a stored d*sum) is an intermediate for dot products, rarely in files."},
     kLegacyTypes},
    {{"kquant", "ggml K-quants",
      "Two-level scaling over a super-block of 256 weights (llama.cpp, 2023). The super-block stores an f16 scale d "
      "(and an f16 dmin for Q2_K, Q4_K and Q5_K); its sub-blocks of 16 or 32 weights each store a small integer scale "
      "sc (and min m) that is itself quantized against d: 4-bit nibbles in Q2_K, 6-bit fields packed into 12 bytes "
      "in Q3_K, Q4_K and Q5_K, int8 in Q6_K. A value is (d * sc) * q - (dmin * m), or (d * sc) * q with centred codes "
      "for Q3_K and Q6_K. The sub-block scales cost only a few bits per weight, giving 2.625 (Q2_K), 3.4375, 4.5, 5.5 "
      "and 6.5625 (Q6_K) bits per weight. Q8_K (an f32 scale and int8 codes) is an intermediate for dot products. "
      "The _S/_M/_L recipes of llama-quantize mix these types per tensor."},
     kKquantTypes},
    {{"iq_lattice", "ggml i-quants (lattice codebooks)",
      "IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS and IQ3_S (llama.cpp, 2024) quantize 8 weights (IQ3: 4) at a "
      "time as one point of a fixed codebook, a grid of magnitude patterns shipped in ggml. The file stores the grid "
      "index; the signs are stored apart (7 bits per 8 weights, the 8th sign chosen so the count of minus signs is "
      "even, via the ksigns table; IQ2_S and IQ3_S store whole sign bytes), and IQ1 grids hold -1/0/+1 shifted by "
      "±1/8. A 256-weight super-block has an f16 d, and each 32-weight sub-block a 3- or 4-bit scale. A value is "
      "d * f(scale) * grid[index][j] * sign. From 1.5625 (IQ1_S) to 3.4375 (IQ3_S) bits per weight; these types are "
      "usually made with an importance matrix that weighs the error."},
     kIqLatticeTypes},
    {{"iq_nonlinear", "ggml non-linear 4-bit (IQ4_NL, IQ4_XS)",
      "4-bit codes that index a fixed table of 16 non-uniform int8 levels (-127 ... 113), denser near zero where "
      "weights cluster, instead of an evenly spaced range. IQ4_NL stores one f16 d per 32 weights (4.5 bits per "
      "weight): y = d * level[q]. IQ4_XS groups 256 weights under one f16 d with a 6-bit scale per 32 (4.25 bits per "
      "weight): y = d * (ls - 32) * level[q]. From llama.cpp (2024)."},
     kIqNonlinearTypes},
    {{"ternary", "ggml ternary (TQ1_0, TQ2_0)",
      "For ternary models (BitNet b1.58 style): every weight is -1, 0 or +1 times one f16 scale per 256 weights. "
      "TQ2_0 spends 2 bits per trit (2.0625 bits per weight); TQ1_0 packs 5 trits per byte in base 3 (1.6875 bits per "
      "weight), read back by multiplying the byte by 3^n (mod 256) and keeping the top bits of 3 times that. "
      "y = (t - 1) * d. From llama.cpp (2024)."},
     kTernaryTypes},
    {{"fp4_block", "ggml FP4 blocks (MXFP4, NVFP4)",
      "4-bit E2M1 floats (±0, 0.5, 1, 1.5, 2, 3, 4, 6) sharing a scale. MXFP4 (OCP Microscaling) has one E8M0 power of "
      "two per 32 weights (4.25 bits per weight); NVFP4 one unsigned E4M3 scale per 16 weights (4.5 bits per weight). "
      "ggml keeps the E2M1 table doubled and halves the scale, so y = 2*E2M1(q) * scale/2. Element j is the low nibble "
      "of byte j and element j+16 (NVFP4: j+8) its high nibble. Used by gpt-oss (MXFP4) and NVIDIA's FP4 checkpoints."},
     kFp4BlockTypes},
    {{"mlx_affine", "MLX affine quantization",
      "mlx.core.quantize in mode 'affine' (mlx-lm's default): each row is cut into groups of 32, 64 or 128 weights; "
      "each group has a scale and a bias in the model's float type, stored as the .scales and .biases tensors beside "
      "the packed .weight, whose uint32 words hold the codes q in 0..2^bits-1 (bits 2, 3, 4, 5, 6 or 8) least "
      "significant bit first, the row one continuous bit stream. y = scale * q + bias. Bits per weight = bits + 32 / "
      "group with 16-bit scales and biases (4.5 for 4-bit, group 64). MLX's quantizer takes the group edge of larger "
      "magnitude as the bias, so the scale may be negative and the bias need not be the minimum."},
     kMlxAffineTypes},
    {{"mlx_fp", "MLX floating-point modes (mxfp4, nvfp4, mxfp8)",
      "MLX's microscaling modes: the codes are tiny floats packed in uint32 words (E2M1 nibbles, element 2k in the low "
      "nibble of byte k; or E4M3 bytes for mxfp8), and each group has one uint8 scale in .scales: E8M0, a power of two "
      "2^(e-127), per 32 weights for mxfp4 and mxfp8; E4M3 per 16 weights for nvfp4, optionally times a global scale "
      "divided by 448*6. y = value(q) * scale. 4.25 (mxfp4), 4.5 (nvfp4) or 8.25 (mxfp8) bits per weight. There are no "
      "biases."},
     kMlxFpTypes},
    {{"ollama", "Ollama tensor blobs",
      "Ollama's safetensors-based models store one blob per tensor: the packed uint32 weight with .scale and .bias "
      "companions in the same blob and the quant_type and group_size in its metadata (always take the group size from "
      "the blob: int4 has used groups of 32 and of 64). The packing and formulas are MLX's: int4 and int8 are affine, "
      "y = scale * q + bias (4.5 or 8.5 bits per weight with group 64 and bf16 scales and biases); nvfp4, mxfp4 and "
      "mxfp8 are MLX's floating modes, and a .global_scale is multiplied in as stored."},
     kOllamaTypes},
    {{"integer", "plain integers and booleans",
      "Each element is stored on its own as a little-endian integer (or a 0/1 byte); akview shows it converted to "
      "float32, exact up to 2^24. There are no groups and no scales: bits per weight is the type's width."},
     kIntegerTypes},
    {{"float", "plain floats",
      "Each element is stored on its own in a float format (f32, f16, bf16, f64, the FP8 variants, E8M0, packed F4 / "
      "F6, complex) and is widened to float32, exactly for every format narrower than f32 (f64 rounds to nearest). "
      "There are no groups and no scales: bits per weight is the type's width."},
     kFloatTypes},
}};

// Every type of the type table is in exactly one family (so a new type must name its family here).
constexpr bool families_cover_types() {
  for (const TypeInfo& t : kTypeTable) {
    int found = 0;
    for (const FamilyRow& row : kFamilies)
      for (TypeId id : row.types) found += id == t.id ? 1 : 0;
    if (found != 1) return false;
  }
  return true;
}
static_assert(families_cover_types(), "each type of kTypeTable (core/types.hpp) in exactly one family");

}   // namespace

const QuantFamily& quant_family(TypeId type) {
  for (const auto& row : kFamilies)
    for (TypeId t : row.types)
      if (t == type) return row.family;
  return kFamilies.back().family;   // not reached: every type has a family (checked above)
}

}   // namespace akview
