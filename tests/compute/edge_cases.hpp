// Rows where quantized terms cancel (the hardest case for a per-row error bound): built with the
// block packers (tests/writers) so that each case holds exactly the codes it claims. Kinds, per type family:
//   cancel      most codes sit on the group's zero point (scale*q + bias == 0 exactly), the rest
//               random: the factorised sum scale*sum(q x) + bias*sum(x) is two large terms that cancel
//   near        98% of the codes on the zero point, the bias (min) off by an ulp or two of its stored
//               type: weights tiny but not zero, the hardest case for a factorised sum
//   one         every weight zero but one per row
//   zero_huge   all-zero groups beside groups with scales near the top of f16
// A row's bound is 1e-5 * sum|w x| against the f64 reference (compute/reference.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/tensor_view.hpp"
#include "core/types.hpp"
#include "tests/compute/synthetic.hpp"   // put_scalar, affine_view
#include "tests/writers/block_pack.hpp"
#include "tests/writers/quantize.hpp"

namespace akview::testing {

enum class EdgeKind { cancel, near, one, zero_huge };
inline const char* edge_kind_name(EdgeKind k) {
  constexpr const char* kNames[] = {"cancel", "near", "one", "zero_huge"};
  return kNames[static_cast<int>(k)];
}
constexpr EdgeKind kEdgeKinds[] = {EdgeKind::cancel, EdgeKind::near, EdgeKind::one, EdgeKind::zero_huge};

struct EdgeCase {
  std::string family;   // "q4_k", "mlx_affine 2-bit"
  std::string label;    // family + kind + layout
  EdgeKind kind = EdgeKind::cancel;
  std::vector<uint8_t> data, scales, biases;
  TensorView view;
};

// A scale of `sig_bits` significant bits in [2^e, 2^(e+1)): times a code of (mantissa bits of the
// stored type - sig_bits) bits it is exact in that type, so a bias of -scale*k is stored exactly.
inline float coarse_scale(std::mt19937_64& rng, int e, int sig_bits = 7) {
  const uint64_t top = uint64_t{1} << (sig_bits - 1);
  return std::ldexp(static_cast<float>(top + rng() % top), e - (sig_bits - 1));
}

// How one ggml block type places its zero: codes at `zero_code` decode to 0 when the min is
// `zero_code` steps of d (types with a min), or always (types without). `levels` = codes per element.
struct ZeroPoint {
  TypeId type;
  int levels;
  int zero_code;    // fixed zero code (no-min types); -1: chosen per sub-block (min types)
  int scale_bits;   // sub-block scale code width (0: none)
  int n_sub;        // sub-blocks per block
};
constexpr ZeroPoint kZeroPoints[] = {
    {TypeId::q4_0, 16, 8, 0, 1},   {TypeId::q5_0, 32, 16, 0, 1}, {TypeId::q8_0, 256, 0, 0, 1},
    {TypeId::q4_1, 16, -1, 0, 1},  {TypeId::q5_1, 32, -1, 0, 1}, {TypeId::q2_k, 4, -1, 4, 16},
    {TypeId::q3_k, 8, 4, 6, 16},   {TypeId::q4_k, 16, -1, 6, 8}, {TypeId::q5_k, 32, -1, 6, 8},
    {TypeId::q6_k, 64, 32, 8, 16},
};

// One block of `zp.type` for `kind`; `block_index` alternates zero / huge blocks for zero_huge and
// `one_at` (or -1) is the element that stays non-zero for kind one.
inline BlockCodes edge_block(const ZeroPoint& zp, EdgeKind kind, int64_t block_index, int one_at,
                             std::mt19937_64& rng) {
  const int elems = static_cast<int>(type_info(zp.type).block_elems), per_sub = elems / zp.n_sub;
  const bool has_min = zp.zero_code < 0, signed_codes = zp.type == TypeId::q8_0;
  BlockCodes f;
  // Legacy types store m = -k*d in f16 (11 bits): d keeps 11 - log2(levels) bits.
  f.d = coarse_scale(rng, -7 - static_cast<int>(rng() % 4), zp.levels == 32 ? 6 : 7);
  if (kind == EdgeKind::zero_huge) f.d = (block_index % 2) ? coarse_scale(rng, 10) : 0.0f;
  f.m = has_min ? f.d : 0.0f;
  if (kind == EdgeKind::near && has_min) f.m = f.d * (1.0f + 1.0f / 1024.0f);   // an ulp or two of f16 once stored
  std::vector<int> zero(static_cast<size_t>(zp.n_sub), zp.zero_code);
  for (int s = 0; s < zp.n_sub; ++s) {
    if (has_min)
      zero[s] = kind == EdgeKind::one ? 0 : 1 + static_cast<int>(rng() % static_cast<unsigned>(zp.levels - 1));
    if (zp.scale_bits == 0) continue;
    if (zp.type == TypeId::q3_k) {   // signed scale (code - 32), never 0
      f.scales.push_back(32 + (rng() % 2 ? 1 : -1) * (1 + static_cast<int>(rng() % 31)));
    } else if (zp.type == TypeId::q6_k) {
      f.scales.push_back((rng() % 2 ? 1 : -1) * (1 + static_cast<int>(rng() % 127)));
    } else {   // unsigned scale and min codes, min = scale * zero code
      const int top = (1 << zp.scale_bits) - 1,
                sc = 1 + static_cast<int>(rng() % static_cast<unsigned>(std::max(1, top / std::max(1, zero[s]))));
      f.scales.push_back(sc);
      f.mins.push_back(sc * zero[s]);
    }
  }
  // Legacy types with a min: m = -zero * d (codes are one sub-block).
  if (has_min && zp.scale_bits == 0) f.m = -static_cast<float>(zero[0]) * f.m;
  std::uniform_int_distribution<int> any(0, zp.levels - 1);
  for (int e = 0; e < elems; ++e) {
    const int z = zero[static_cast<size_t>(e / per_sub)];
    int c = z;
    if (kind == EdgeKind::zero_huge ||
        (kind == EdgeKind::one ? e == one_at : rng() % (kind == EdgeKind::near ? 50 : 10) == 0))
      c = any(rng);
    if (kind == EdgeKind::one && e == one_at && c == z) c = (z + 1) % zp.levels;
    f.codes.push_back(signed_codes ? c - 256 * (c >= 128) : c);
  }
  return f;
}

inline EdgeCase make_block_edge_case(const ZeroPoint& zp, EdgeKind kind, int64_t rows, int64_t blocks_per_row,
                                     uint64_t seed) {
  const TypeInfo& info = type_info(zp.type);
  EdgeCase c;
  c.family = info.name;
  c.kind = kind;
  c.label = std::string(info.name) + " " + edge_kind_name(kind);
  std::mt19937_64 rng(seed);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t one_block = static_cast<int64_t>(rng() % static_cast<uint64_t>(blocks_per_row));
    const int one_at = static_cast<int>(rng() % info.block_elems);
    for (int64_t b = 0; b < blocks_per_row; ++b)
      pack_block(zp.type, edge_block(zp, kind, b, b == one_block ? one_at : -1, rng), c.data);
  }
  c.view.type = zp.type;
  c.view.n_rows = rows;
  c.view.n_cols = blocks_per_row * info.block_elems;
  c.view.row_bytes = static_cast<uint64_t>(blocks_per_row) * info.block_bytes;
  c.view.data = c.data;
  return c;
}

// MLX affine: w = scale * q + bias per group, bias = -scale * k (k per group), stored as `scale_type`.
inline EdgeCase make_affine_edge_case(int bits, uint32_t group, TypeId scale_type, EdgeKind kind, int64_t rows,
                                      int64_t cols, uint64_t seed) {
  EdgeCase c;
  c.family = "mlx_affine " + std::to_string(bits) + "-bit";
  c.kind = kind;
  c.label = c.family + " g" + std::to_string(group) + " " + std::string(type_info(scale_type).name) + " " +
            edge_kind_name(kind);
  std::mt19937_64 rng(seed);
  const int levels = 1 << bits;
  std::uniform_int_distribution<int> any(0, levels - 1);
  std::vector<int> codes;
  const int64_t groups = cols / group;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t one_at = static_cast<int64_t>(rng() % static_cast<uint64_t>(cols));
    for (int64_t g = 0; g < groups; ++g) {
      // -scale * k exact in the stored type: f16 keeps 11 significant bits, bf16 8, f32 24.
      const int mantissa = scale_type == TypeId::f16 ? 11 : scale_type == TypeId::bf16 ? 8 : 24;
      float s = (rng() % 2 ? 1.0f : -1.0f) *
                coarse_scale(rng, -8 - static_cast<int>(rng() % 4), std::clamp(mantissa - bits, 1, 12));
      const int k = kind == EdgeKind::one ? 0 : 1 + static_cast<int>(rng() % static_cast<unsigned>(levels - 1));
      float b = -s * static_cast<float>(k);
      if (kind == EdgeKind::near) b *= 1.0f + std::ldexp(1.0f, 1 - mantissa);   // two ulps of the stored type
      if (kind == EdgeKind::zero_huge) {
        s = (g % 2) ? coarse_scale(rng, 6) : 0.0f;   // |s * k| stays below f16's 65504
        b = (g % 2) ? -s * static_cast<float>(k) : 0.0f;
      }
      put_scalar(c.scales, scale_type, s);
      put_scalar(c.biases, scale_type, b);
      for (int64_t e = g * group; e < (g + 1) * group; ++e) {
        int q = k;
        if (kind == EdgeKind::zero_huge ||
            (kind == EdgeKind::one ? e == one_at : rng() % (kind == EdgeKind::near ? 50 : 10) == 0))
          q = any(rng);
        if (kind == EdgeKind::one && e == one_at && q == k) q = k + 1;
        codes.push_back(q);
      }
    }
  }
  c.data = pack_affine_codes(codes, bits);
  c.view = affine_view(TypeId::mlx_affine, bits, group, scale_type, rows, cols);
  c.view.data = c.data;
  c.view.scales = c.scales;
  c.view.biases = c.biases;
  return c;
}

// Every case: each ggml type and kind, and MLX affine at 2/3/4/5/6/8 bits, groups 32/64/128,
// f16 / bf16 / f32 scales, each kind.
inline std::vector<EdgeCase> all_edge_cases() {
  std::vector<EdgeCase> cases;
  uint64_t seed = 1;
  for (const auto& zp : kZeroPoints) {
    const int64_t blocks = type_info(zp.type).block_elems == 256 ? 8 : 64;   // 2048 columns
    for (EdgeKind kind : kEdgeKinds)
      if (kind != EdgeKind::near || zp.zero_code < 0)   // near moves the min: types without one have none
        cases.push_back(make_block_edge_case(zp, kind, 13, blocks, seed++));
  }
  for (int bits : {2, 3, 4, 5, 6, 8})
    for (uint32_t group : {32u, 64u, 128u})
      for (TypeId st : {TypeId::f16, TypeId::bf16, TypeId::f32})
        for (EdgeKind kind : kEdgeKinds)
          cases.push_back(make_affine_edge_case(bits, group, st, kind, 13, 2048, seed++));
  return cases;
}

}   // namespace akview::testing
