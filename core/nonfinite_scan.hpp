// `akview check`'s data scan: every tensor's values searched for NaN and Inf, as decoding would give
// them, without decoding what cannot hold one. Float elements are tested by their bits (an exponent of
// all ones); a block-quantized value is a product of its block's float fields (f16/f32 scales and
// mins, E8M0/UE4M3 exponents) and small integers, so a block can decode to NaN/Inf only when one of
// those fields is NaN/Inf or large enough to overflow float32: only such blocks ("suspect") are
// decoded, and their values counted. Composite (MLX / Ollama) tensors are scanned through their
// scales, biases and global scale the same way. Runs on every thread, each chunk copied out of the
// file by the kernel (core/kernel_copy.hpp: faster than touching the mapping).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/types.hpp"

namespace akview {

// What a run of bytes of one type decodes to: NaN and Inf counts, the blocks (or elements, for
// plain types) that hold them, and the byte offset (from the run's start) of the first such block.
struct NonFiniteCount {
  uint64_t nan = 0, inf = 0;
  uint64_t blocks = 0;
  uint64_t first = ~uint64_t{0};
  bool any() const { return nan + inf > 0; }
};

// True when a value of `type` can decode to NaN/Inf at all (false: integers, bool, FP4/FP6, NVFP4,
// composite types, whose scales are scanned instead, and undecodable types).
bool type_can_be_nonfinite(TypeId type);

// Counts the NaN/Inf of whole blocks (or elements) of `type` in `bytes` (a multiple of the type's
// block bytes), using the block structure: equal to decoding every value and counting.
NonFiniteCount count_nonfinite(TypeId type, std::span<const uint8_t> bytes);

struct NonFiniteScanOptions {
  int threads = 0;                        // 0: every thread the machine has
  size_t chunk_bytes = 256 << 10;         // bytes copied and scanned per step and thread
  std::function<void(double)> progress;   // in [0,1], over the bytes scanned, on the calling thread
  const std::atomic<bool>* cancel = nullptr;
};

// A tensor whose values hold a NaN or Inf, at the byte offset (in `file`) of its first offending
// block or element; or one that could not be read (`error` set: a file truncated under the scan).
struct ValueProblem {
  uint32_t tensor = 0;
  std::string file;
  uint64_t offset = kNoOffset;
  std::string message;   // names the tensor, its type, the counts and the blocks
  NonFiniteCount count;
  std::optional<ErrorCode> error;
};

// Every tensor's problems, in the model's order; empty when every value is finite (or cancelled).
std::vector<ValueProblem> scan_nonfinite(const Model& model, const NonFiniteScanOptions& options = {});

}   // namespace akview
