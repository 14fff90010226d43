// Synthetic tensors for odd sizes: random block bytes with sane f16 scales, float rows from a
// normal distribution, MLX affine rows of any bits / group / scale type. Each owns exactly its
// bytes (no slack), so an out-of-bounds read shows up under ASan.
#pragma once

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/tensor_view.hpp"
#include "core/types.hpp"
#include "tests/writers/quantize.hpp"   // f32_to_f16, f32_to_bf16 (round to nearest even)

namespace akview::testing {

struct SyntheticTensor {
  std::vector<uint8_t> data, scales, biases;
  TensorView view;
};

// Offsets of the f16 fields (scales, mins) inside one block, per block type.
struct BlockFields {
  TypeId type;
  std::array<int, 2> f16_offsets;   // -1: none
};
constexpr std::array kBlockFields = {
    BlockFields{TypeId::q4_0, {0, -1}},    BlockFields{TypeId::q4_1, {0, 2}},     BlockFields{TypeId::q5_0, {0, -1}},
    BlockFields{TypeId::q5_1, {0, 2}},     BlockFields{TypeId::q8_0, {0, -1}},    BlockFields{TypeId::iq4_nl, {0, -1}},
    BlockFields{TypeId::q2_k, {80, 82}},   BlockFields{TypeId::q3_k, {108, -1}},  BlockFields{TypeId::q4_k, {0, 2}},
    BlockFields{TypeId::q5_k, {0, 2}},     BlockFields{TypeId::q6_k, {208, -1}},  BlockFields{TypeId::iq4_xs, {0, -1}},
    BlockFields{TypeId::tq2_0, {64, -1}},  BlockFields{TypeId::tq1_0, {52, -1}},  BlockFields{TypeId::q1_0, {0, -1}},
    BlockFields{TypeId::iq2_xxs, {0, -1}}, BlockFields{TypeId::iq3_xxs, {0, -1}}, BlockFields{TypeId::iq2_xs, {0, -1}},
    BlockFields{TypeId::iq2_s, {0, -1}},   BlockFields{TypeId::iq3_s, {0, -1}},   BlockFields{TypeId::iq1_s, {0, -1}},
};

inline SyntheticTensor make_block_tensor(TypeId type, int64_t rows, int64_t blocks_per_row, uint64_t seed) {
  const TypeInfo& info = type_info(type);
  SyntheticTensor t;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t cols = blocks_per_row * info.block_elems;
  t.view.type = type;
  t.view.n_rows = rows;
  t.view.n_cols = cols;
  t.view.row_bytes = static_cast<uint64_t>(blocks_per_row) * info.block_bytes;
  t.data.resize(static_cast<size_t>(t.view.row_bytes * rows));
  auto put16 = [&](size_t at, uint16_t v) { std::memcpy(t.data.data() + at, &v, 2); };
  if (info.kind == TypeKind::floating) {
    for (int64_t i = 0; i < rows * cols; ++i) {
      const float f = normal(rng);
      if (type == TypeId::f32) std::memcpy(t.data.data() + 4 * i, &f, 4);
      if (type == TypeId::f16) put16(2 * i, f32_to_f16(f));
      if (type == TypeId::bf16) put16(2 * i, f32_to_bf16(f));
    }
  } else {
    for (auto& b : t.data) b = static_cast<uint8_t>(rng());
    // mxfp4's E8M0 byte: scales 2^-16 .. 2^-1 (a random byte reaches 2^127, and inf once multiplied).
    if (type == TypeId::mxfp4)
      for (int64_t blk = 0; blk < rows * blocks_per_row; ++blk)
        t.data[static_cast<size_t>(blk * info.block_bytes)] = static_cast<uint8_t>(112 + rng() % 16);
    // iq1_m's f16 d is spread over the top nibbles of its four scale words (+48..+55).
    if (type == TypeId::iq1_m)
      for (int64_t blk = 0; blk < rows * blocks_per_row; ++blk) {
        const uint16_t d = f32_to_f16(0.01f + 0.05f * std::fabs(normal(rng)));
        for (int k = 0; k < 4; ++k) {
          uint8_t& top = t.data[static_cast<size_t>(blk * info.block_bytes + 48 + 2 * k + 1)];
          top = static_cast<uint8_t>((top & 0x0F) | (((d >> (4 * k)) & 0xF) << 4));
        }
      }
    for (const auto& f : kBlockFields)
      if (f.type == type)
        for (int64_t blk = 0; blk < rows * blocks_per_row; ++blk)
          for (int off : f.f16_offsets)
            if (off >= 0)
              put16(static_cast<size_t>(blk * info.block_bytes + off),
                    f32_to_f16(0.01f + 0.05f * std::fabs(normal(rng))));
  }
  t.view.data = t.data;
  return t;
}

// Appends v stored as `type`: f32 as is, f16 / bf16 rounded to nearest even.
inline void put_scalar(std::vector<uint8_t>& out, TypeId type, float v) {
  const size_t at = out.size();
  if (type == TypeId::f32) {
    out.resize(at + 4);
    std::memcpy(out.data() + at, &v, 4);
    return;
  }
  const uint16_t h = type == TypeId::f16 ? f32_to_f16(v) : f32_to_bf16(v);
  out.resize(at + 2);
  std::memcpy(out.data() + at, &h, 2);
}

// The view of an affine tensor (MLX / Ollama): rows x cols codes of `bits`, groups of `group`;
// the spans are left for the owner to set.
inline TensorView affine_view(TypeId type, int bits, uint32_t group, TypeId scale_type, int64_t rows, int64_t cols) {
  TensorView v;
  v.type = type;
  v.n_rows = rows;
  v.n_cols = cols;
  v.bits = static_cast<uint8_t>(bits);
  v.group_size = group;
  v.row_bytes = static_cast<uint64_t>(cols) * bits / 8;
  v.scales_type = v.biases_type = scale_type;
  return v;
}

inline SyntheticTensor make_affine_tensor(TypeId type, int bits, uint32_t group, TypeId scale_type, int64_t rows,
                                          int64_t cols, uint64_t seed) {
  SyntheticTensor t;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  t.view = affine_view(type, bits, group, scale_type, rows, cols);
  t.data.resize(static_cast<size_t>(t.view.row_bytes * rows));
  for (auto& b : t.data) b = static_cast<uint8_t>(rng());
  const size_t groups = static_cast<size_t>(rows * cols / group);
  for (size_t g = 0; g < groups; ++g) {
    const float s = 0.01f * normal(rng), b = 0.1f * normal(rng);   // negative scales included
    put_scalar(t.scales, scale_type, s);
    put_scalar(t.biases, scale_type, b);
  }
  t.view.data = t.data;
  t.view.scales = t.scales;
  t.view.biases = t.biases;
  return t;
}

// MLX / Ollama mxfp4: random 4-bit codes, one E8M0 byte per group of 32 (scales 2^-17 .. 2^-2, and
// every `zero_every`-th group the smallest E8M0 value, 2^-127, a subnormal).
inline SyntheticTensor make_mxfp4_tensor(TypeId type, int64_t rows, int64_t cols, uint64_t seed, int zero_every = 0) {
  SyntheticTensor t;
  std::mt19937_64 rng(seed);
  t.view = affine_view(type, 4, 32, TypeId::u8, rows, cols);
  t.data.resize(static_cast<size_t>(t.view.row_bytes * rows));
  for (auto& b : t.data) b = static_cast<uint8_t>(rng());
  t.scales.resize(static_cast<size_t>(rows * cols / 32));
  for (size_t g = 0; g < t.scales.size(); ++g)
    t.scales[g] =
        zero_every && g % static_cast<size_t>(zero_every) == 0 ? uint8_t{0} : static_cast<uint8_t>(110 + rng() % 16);
  t.view.data = t.data;
  t.view.scales = t.scales;
  return t;
}

inline std::vector<float> normal_vector(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = normal(rng);
  return x;
}

}   // namespace akview::testing
