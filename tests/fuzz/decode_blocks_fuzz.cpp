// Every block decoder on random blocks: each input is decoded as every decodable type in turn
// (no type choice left to the fuzzer). The view is always a valid one: 1-2 rows of 1-2 blocks
// carved from the input, and for composite types the bits and group size that type's rule allows
// and scales (and biases) from the input. Each span is its own exact-size buffer (ASan sees an
// overread); every element of a decoded row is written, and rows decoded one at a time give
// the same bits as all at once.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/decode/decode.hpp"
#include "core/decode/decode_table.hpp"

namespace {

using namespace akview;

// The input bytes, repeated as needed, as a buffer of exactly `n` bytes starting at `at`.
std::vector<uint8_t> carve(const uint8_t* data, size_t size, size_t at, size_t n) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = size ? data[(at + i) % size] : 0;
  return out;
}

void check_decode(const TensorView& v) {
  if (!validate_view(v).ok()) return;   // a type that is listed but not decodable
  const size_t n = static_cast<size_t>(v.n_rows * v.n_cols);
  // Two buffers poisoned with different NaN patterns: all rows at once into one, row by row into
  // the other. They agree bit for bit only if every element was written, the same way both times.
  std::vector<float> a(n), b(n);
  const uint32_t poison_a = 0x7fc0dead, poison_b = 0xffc0beef;
  for (float& f : a) std::memcpy(&f, &poison_a, 4);
  for (float& f : b) std::memcpy(&f, &poison_b, 4);
  if (!decode_rows(v, 0, v.n_rows, a.data()).ok()) return;
  for (int64_t r = 0; r < v.n_rows; ++r)
    if (!decode_rows(v, r, r + 1, b.data() + r * v.n_cols).ok()) std::abort();
  if (std::memcmp(a.data(), b.data(), n * sizeof(float)) != 0) std::abort();
}

constexpr TypeId kAffineParams[] = {TypeId::f16, TypeId::bf16, TypeId::f32};

}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int64_t rows = 1 + data[0] % 2;
  const uint32_t blocks = 1 + (size > 1 ? data[1] % 2 : 0);
  for (size_t t = 0; t < static_cast<size_t>(TypeId::count_); ++t) {
    TensorView v;
    v.type = static_cast<TypeId>(t);
    v.n_rows = rows;
    const TypeInfo& info = type_info(v.type);
    std::vector<uint8_t> body, scales, biases;
    if (info.kind != TypeKind::composite) {
      if (info.block_bytes == 0 || info.block_elems == 0) continue;
      v.n_cols = int64_t{info.block_elems} * blocks;
      v.row_bytes = uint64_t{info.block_bytes} * blocks;
      body = carve(data, size, 2, static_cast<size_t>(v.row_bytes * rows));
      v.data = body;
      check_decode(v);
      continue;
    }
    const decode::CompositeRule rule = decode::decoder_row(v.type).composite;
    for (uint8_t bits = 1; bits < 16; ++bits) {
      if (!(rule.bits_mask & (1u << bits))) continue;
      v.bits = bits;
      v.group_size = rule.group_size ? rule.group_size : 8u * (1 + data[size / 2] % 16);
      v.n_cols = int64_t{v.group_size} * blocks;
      v.row_bytes = static_cast<uint64_t>(v.n_cols) * bits / 8;
      const size_t groups = static_cast<size_t>(rows) * blocks;
      v.scales_type = rule.affine ? kAffineParams[bits % 3] : TypeId::u8;
      v.biases_type = rule.affine ? kAffineParams[(bits + 1) % 3] : TypeId::u8;
      body = carve(data, size, 2, static_cast<size_t>(v.row_bytes * rows));
      scales = carve(data, size, 7, groups * type_info(v.scales_type).block_bytes);
      biases =
          rule.affine ? carve(data, size, 11, groups * type_info(v.biases_type).block_bytes) : std::vector<uint8_t>{};
      v.data = body, v.scales = scales, v.biases = biases;
      check_decode(v);
    }
  }
  return 0;
}
