// KV cache sizing (kv_cache.hpp), in checked arithmetic: a hostile head count or context gives an
// error, never a wrapped product.
#include "core/fit/kv_cache.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/checked.hpp"

namespace akview::fit {

std::optional<uint64_t> row_bytes(TypeId type, uint64_t elems) {
  const TypeInfo& info = type_info(type);
  if (info.block_elems == 0 || elems % info.block_elems != 0) return std::nullopt;
  return checked_mul(elems / info.block_elems, info.block_bytes);
}

Result<uint32_t> padded_cells(uint64_t context, const std::string& file) {
  auto padded = context == 0 ? std::optional<uint64_t>() : checked_align_up(context, kCellPad);
  if (!padded || *padded > 0xffffffffu)
    return make_error(ErrorCode::overflow, file, kNoOffset,
                      fmt::format("a context of {} tokens: llama.cpp counts cells in 32 bits (1 .. {} tokens)", context,
                                  0xffffffffu - kCellPad + 1));
  return static_cast<uint32_t>(*padded);
}

Result<KvCache> size_kv_cache(const GgufAttention& a, uint32_t cells, uint32_t ubatch, TypeId type,
                              const std::string& file) {
  KvCache c;
  auto overflow = [&](uint32_t il) {
    return make_error(ErrorCode::overflow, file, kNoOffset,
                      fmt::format("KV cache of layer {}: the byte count passes 2^64", il));
  };
  for (uint32_t il = 0; il < a.layers.size(); ++il) {
    const LayerShape& s = a.layers[il];
    KvLayer l;
    l.layer = il;
    l.sliding = s.sliding;
    l.kv_heads = s.kv_heads;
    l.k_head_dim = s.k_head_dim;
    l.v_head_dim = s.v_head_dim;
    l.cells = cells;
    if (s.sliding) {
      auto want = checked_add(a.window, ubatch);
      auto padded = want ? checked_align_up(std::min<uint64_t>(cells, *want), kCellPad) : std::nullopt;
      if (!padded) return overflow(il);
      l.cells = static_cast<uint32_t>(std::min<uint64_t>(*padded, cells));
    }
    if (s.kv_heads == 0) {   // a layer without attention caches nothing
      c.layers.push_back(l);
      continue;
    }
    const uint64_t k_elems = uint64_t{s.k_head_dim} * s.kv_heads, v_elems = uint64_t{s.v_head_dim} * s.kv_heads;
    auto k_row = row_bytes(type, k_elems);
    auto v_row = v_elems ? row_bytes(type, v_elems) : std::optional<uint64_t>(0);
    if (!k_row || !v_row) {
      const TypeInfo& info = type_info(type);
      return make_error(
          ErrorCode::usage, file, kNoOffset,
          fmt::format("KV cache type {}: layer {}'s {} row of {} values is not a whole number of its {}-value blocks",
                      info.name, il, k_row ? "V" : "K", k_row ? v_elems : k_elems, info.block_elems));
    }
    auto k = checked_mul(*k_row, l.cells), v = checked_mul(*v_row, l.cells);
    if (!k || !v) return overflow(il);
    l.k_bytes = *k;
    l.v_bytes = *v;
    auto k_sum = checked_add(c.k_bytes, *k), v_sum = checked_add(c.v_bytes, *v);
    auto k_al = checked_align_up(*k, kTensorAlignment);
    auto v_al = v_elems ? checked_align_up(*v, kTensorAlignment) : std::optional<uint64_t>(0);
    auto buf = k_al && v_al ? checked_add(c.buffer_bytes, *k_al) : std::nullopt;
    buf = buf ? checked_add(*buf, *v_al) : std::nullopt;
    if (!k_sum || !v_sum || !buf) return overflow(il);
    c.k_bytes = *k_sum;
    c.v_bytes = *v_sum;
    c.buffer_bytes = *buf;
    c.layers.push_back(l);
  }
  return c;
}

}   // namespace akview::fit
