// llama.cpp's KV cache, layer by layer: how many cells each layer holds (the context padded to 256;
// a sliding-window layer the window plus one ubatch, padded to 256, never more than the context),
// and the bytes of its K and V rows in the cache type. The buffer holds each tensor at a 32-byte
// aligned offset (ggml's TENSOR_ALIGNMENT), one K and one V tensor per layer.
#pragma once

#include <cstdint>
#include <vector>

#include "core/fit/fit_estimate.hpp"
#include "core/fit/gguf_attention.hpp"
#include "core/result.hpp"

namespace akview::fit {

inline constexpr uint64_t kCellPad = 256;
inline constexpr uint64_t kTensorAlignment = 32;

// llama.cpp's n_ctx for a requested context: padded up to 256 cells. Error past 2^32 - 1.
Result<uint32_t> padded_cells(uint64_t context, const std::string& file);

struct KvCache {
  std::vector<KvLayer> layers;
  uint64_t k_bytes = 0, v_bytes = 0;
  uint64_t buffer_bytes = 0;   // with each tensor's alignment padding
};

// The cache for `cells` (padded_cells) at `ubatch`, rows of `type`. A usage error when a row is not
// a whole number of the type's blocks (llama.cpp cannot make that cache either); overflow-checked.
Result<KvCache> size_kv_cache(const GgufAttention& attention, uint32_t cells, uint32_t ubatch, TypeId type,
                              const std::string& file);

// Bytes of `elems` values of `type` (whole blocks); nullopt when `elems` is not a multiple of the
// block or the product overflows.
std::optional<uint64_t> row_bytes(TypeId type, uint64_t elems);

}   // namespace akview::fit
