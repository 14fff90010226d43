// A read-only ZIP directory reader for PyTorch checkpoints (FORMATS.md §5.2, §5.6 step 1):
// the central directory (ZIP64 aware) gives every record's name, size and local-header offset;
// data offsets come from the central directory plus the local header's own name/extra lengths,
// never from data descriptors (torch writes zero sizes in local headers).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace akview {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;   // 0 = stored; anything else is compressed (refused when read)
  uint64_t size = 0;     // uncompressed size
  uint64_t compressed_size = 0;
  uint64_t local_header = 0;       // absolute offset of the local file header
  uint64_t data_offset = 0;        // absolute offset of the record's first data byte
  uint64_t directory_offset = 0;   // absolute offset of its central-directory entry (for errors)
};

// Lists every entry of the archive in `bytes` (the whole file). Checks that each record's data
// lies inside the file; does not decompress anything.
Result<std::vector<ZipEntry>> read_zip_directory(std::span<const uint8_t> bytes, std::string_view file);

// The stored bytes of `entry` (fails for compressed entries).
Result<std::span<const uint8_t>> zip_entry_bytes(std::span<const uint8_t> bytes, std::string_view file,
                                                 const ZipEntry& entry);

}   // namespace akview
