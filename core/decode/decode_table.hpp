// Internal: the decoder table, one row per TypeId (decode_table.cpp).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/decode/decoders.hpp"
#include "core/types.hpp"

namespace akview::decode {

// How a composite type's view must look (ignored for block and plain types).
struct CompositeRule {
  uint16_t bits_mask = 0;    // bit b set: `bits == b` is allowed
  uint32_t group_size = 0;   // required group size; 0: any positive multiple of 8
  bool affine = false;       // scales/biases are f16/bf16/f32 and biases are required
};

struct DecoderRow {
  TypeId type;
  RowRangeDecoder decode;    // nullptr: listed but not decodable
  std::string_view caveat;   // stated assumption shown next to the values; empty when none
  CompositeRule composite{};
};

const DecoderRow& decoder_row(TypeId type);

}   // namespace akview::decode
