// Bounds-checked little-endian reader over a byte span. Every read of file content goes through it.
// Errors are sticky: after the first failure reads return zero values and ok() is false, so a
// parser checks ok() before it trusts a value to size an allocation or a loop.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace akview {

class ByteReader {
 public:
  // `base` is the absolute file offset of bytes[0], so error offsets are file offsets.
  ByteReader(std::span<const uint8_t> bytes, std::string_view file, uint64_t base = 0)
      : bytes_(bytes), file_(file), base_(base) {}

  uint64_t pos() const { return pos_; }                   // relative to bytes[0]
  uint64_t file_offset() const { return base_ + pos_; }   // absolute
  uint64_t size() const { return bytes_.size(); }
  uint64_t remaining() const { return bytes_.size() - pos_; }
  bool ok() const { return !failed_; }
  const Error& error() const { return error_; }
  std::string_view file() const { return file_; }

  // Fails (sticky) unless `n` more bytes remain; `what` names the item for the message.
  bool need(uint64_t n, std::string_view what) {
    if (failed_) return false;
    if (n > remaining()) {
      fail(ErrorCode::truncated, file_offset(),
           std::string(what) + " needs " + std::to_string(n) + " bytes but only " + std::to_string(remaining()) +
               " remain");
      return false;
    }
    return true;
  }

  void fail(ErrorCode code, uint64_t file_offset, std::string message) {
    if (failed_) return;
    failed_ = true;
    error_ = Error{code, std::string(file_), file_offset, std::move(message)};
  }

  template <typename T>
  T read(std::string_view what) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (!need(sizeof(T), what)) return T{};
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));   // unaligned-safe; host is little-endian
    pos_ += sizeof(T);
    return v;
  }
  uint8_t u8(std::string_view what = "u8") { return read<uint8_t>(what); }
  uint16_t u16(std::string_view what = "u16") { return read<uint16_t>(what); }
  uint32_t u32(std::string_view what = "u32") { return read<uint32_t>(what); }
  uint64_t u64(std::string_view what = "u64") { return read<uint64_t>(what); }
  int64_t i64(std::string_view what = "i64") { return read<int64_t>(what); }

  // A view of the next n bytes (empty + failure when they are not there).
  std::span<const uint8_t> bytes(uint64_t n, std::string_view what) {
    if (!need(n, what)) return {};
    auto s = bytes_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  std::string_view chars(uint64_t n, std::string_view what) {
    auto s = bytes(n, what);
    return {reinterpret_cast<const char*>(s.data()), s.size()};
  }
  bool skip(uint64_t n, std::string_view what) {
    if (!need(n, what)) return false;
    pos_ += n;
    return true;
  }
  void seek(uint64_t pos) {
    if (pos > bytes_.size()) fail(ErrorCode::truncated, base_ + pos, "seek past the end of the data");
    else pos_ = pos;
  }

 private:
  std::span<const uint8_t> bytes_;
  std::string_view file_;
  uint64_t base_ = 0;
  uint64_t pos_ = 0;
  bool failed_ = false;
  Error error_;
};

static_assert(std::endian::native == std::endian::little, "akview assumes a little-endian host");

}   // namespace akview
