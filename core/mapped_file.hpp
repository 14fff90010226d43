// A file mapped read-only (PROT_READ, MAP_PRIVATE): zero-copy access to headers and tensor data.
// Opening maps the whole file but touches nothing, so a 1 TB file opens as fast as a 1 MB one.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/result.hpp"

namespace akview {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  static Result<MappedFile> open(const std::string& path);

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  const uint8_t* data() const { return data_; }
  std::span<const uint8_t> bytes() const { return {data_, static_cast<size_t>(size_)}; }
  // Bytes [offset, offset+length) or an empty span when the range is not inside the file.
  std::span<const uint8_t> range(uint64_t offset, uint64_t length) const;

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace akview
