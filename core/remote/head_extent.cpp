// The header extent of the first bytes of a file (see head_extent.hpp). GGUF's layout: magic "GGUF",
// u32 version, u64 tensor count, u64 key/value count, the key/values (u64-length key, u32 value
// type, value), then per tensor a u64-length name, u32 dims, u64 per dim, u32 type, u64 offset
// (FORMATS.md §2).
#include "core/remote/head_extent.hpp"

#include <algorithm>
#include <cstring>

namespace akview::remote {
namespace {

constexpr uint64_t kMaxSafetensorsHeader = 100ull << 20;   // FORMATS.md §1: the format's own cap
constexpr uint64_t kTensorInfoGuess = 72;                  // a typical name plus 2-3 dims
constexpr uint64_t kKeyValueGuess = 48;
constexpr uint64_t kEstimateMargin = 16 << 10;
constexpr uint64_t kArrayMargin = 192 << 10;

struct Walker {
  std::span<const uint8_t> b;
  uint64_t pos = 0;
  bool out = false;   // ran past the bytes at hand

  bool need(uint64_t n) {
    if (out || n > b.size() || pos > b.size() - n) {
      out = true;
      return false;
    }
    return true;
  }
  uint64_t u64() {
    if (!need(8)) return 0;
    uint64_t v;
    std::memcpy(&v, b.data() + pos, 8);
    pos += 8;
    return v;
  }
  uint32_t u32() {
    if (!need(4)) return 0;
    uint32_t v;
    std::memcpy(&v, b.data() + pos, 4);
    pos += 4;
    return v;
  }
  void skip(uint64_t n) {
    if (need(n)) pos += n;
  }
};

// Fixed sizes of GGUF value types 0..12 (0 for string and array).
constexpr uint64_t kScalarBytes[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

// Where an estimate stands when the bytes ran out inside an array of strings.
struct ArrayProgress {
  uint64_t count = 0, done = 0, bytes_done = 0;
};

bool walk_value(Walker& w, uint32_t type, int depth, ArrayProgress& progress) {
  if (type <= 12 && kScalarBytes[type]) {
    w.skip(kScalarBytes[type]);
    return !w.out;
  }
  if (type == 8) {
    w.skip(w.u64());
    return !w.out;
  }
  if (type != 9 || depth > 3) return false;
  const uint32_t elem = w.u32();
  const uint64_t count = w.u64();
  if (w.out) return false;
  if (elem <= 12 && kScalarBytes[elem]) {
    if (count > (w.b.size() - std::min<uint64_t>(w.pos, w.b.size())) / kScalarBytes[elem] + 1) {
      // Runs past the bytes at hand: its size is known exactly.
      progress = {count, 0, 0};
      progress.bytes_done = 0;
      w.out = true;
      w.pos += count * kScalarBytes[elem];   // the estimate continues from the array's end
      return false;
    }
    w.skip(count * kScalarBytes[elem]);
    return !w.out;
  }
  const uint64_t start = w.pos;
  for (uint64_t i = 0; i < count; ++i) {
    if (!walk_value(w, elem, depth + 1, progress)) {
      if (depth == 0) progress = {count, i, w.pos > start ? std::min(w.pos, (uint64_t)w.b.size()) - start : 0};
      return false;
    }
  }
  return true;
}

}   // namespace

HeadExtent estimate_head_extent(std::span<const uint8_t> head, uint64_t file_size) {
  HeadExtent out{std::min<uint64_t>(head.size(), file_size), false};
  // SafeTensors: u64 header length, then '{'.
  if (head.size() >= 9) {
    uint64_t n;
    std::memcpy(&n, head.data(), 8);
    if (head[8] == '{' && n > 0 && n <= kMaxSafetensorsHeader && n <= file_size - 8) return {8 + n, true};
  }
  if (head.size() < 24 || std::memcmp(head.data(), "GGUF", 4) != 0) return out;
  Walker w{head};
  w.pos = 4;
  const uint32_t version = w.u32();
  if (version < 2 || version > 3) return out;
  const uint64_t n_tensors = w.u64();
  const uint64_t n_kv = w.u64();
  uint64_t kv = 0;
  ArrayProgress progress;
  for (; kv < n_kv && !w.out; ++kv) {
    w.skip(w.u64());   // key
    const uint32_t type = w.u32();
    if (w.out) break;
    if (!walk_value(w, type, 0, progress) && !w.out) return out;   // malformed: the parser will say so
  }
  uint64_t t = 0;
  for (; !w.out && t < n_tensors; ++t) {
    w.skip(w.u64());   // name
    const uint32_t dims = w.u32();
    if (w.out || dims > 8) break;
    w.skip(8ull * dims + 4 + 8);
  }
  if (!w.out) return {std::min(w.pos, file_size), true};
  // Ran out: what is left of the current array, the key/values after it, then the tensor infos.
  uint64_t estimate = std::max<uint64_t>(w.pos, head.size());
  if (progress.count > progress.done && progress.done > 0) {
    // Vocabularies run from short to long entries: the mean so far undershoots, so 15 % more
    // (at most 192 KiB more: an overshoot costs bytes, an undershoot one more request).
    const double mean = static_cast<double>(progress.bytes_done) / static_cast<double>(progress.done);
    const auto rest = static_cast<uint64_t>(mean * static_cast<double>(progress.count - progress.done));
    estimate += rest + std::min<uint64_t>(rest * 15 / 100, kArrayMargin);
  }
  const uint64_t kv_left = n_kv > kv ? std::min<uint64_t>(n_kv - kv, 1 << 20) : 0;
  const uint64_t tensors_left = n_tensors > t ? std::min<uint64_t>(n_tensors - t, 1ull << 32) : 0;
  estimate += kv_left * kKeyValueGuess + tensors_left * kTensorInfoGuess + kEstimateMargin;
  return {std::min(estimate, file_size), false};
}

}   // namespace akview::remote
