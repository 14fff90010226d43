// Overflow-checked size arithmetic for values read from files.
#pragma once

#include <cstdint>
#include <optional>

namespace akview {

inline std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
// Round `value` up to a multiple of `align` (a power of two); nullopt on overflow.
inline std::optional<uint64_t> checked_align_up(uint64_t value, uint64_t align) {
  auto r = checked_add(value, align - 1);
  if (!r) return std::nullopt;
  return *r & ~(align - 1);
}
inline bool is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}   // namespace akview
