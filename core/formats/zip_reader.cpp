// ZIP central directory (PKWARE APPNOTE 4.3.12-4.3.16, ZIP64 4.3.14-4.3.15) for FORMATS.md §5.2.
//
//   ... local header (30 B + name + extra) | data | ... | central directory | [zip64 EOCD | locator] | EOCD (22 B +
//   comment)
#include "core/formats/zip_reader.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/byte_reader.hpp"
#include "core/checked.hpp"

namespace akview {
namespace {

constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint64_t kEocdBytes = 22;
constexpr uint64_t kCentralFixedBytes = 46;
constexpr uint64_t kLocalFixedBytes = 30;
constexpr uint64_t kMaxComment = 0xffff;
// Entry count cap: a PyTorch archive has one entry per storage; 4M covers a 1M-tensor model 4x over.
constexpr uint64_t kMaxEntries = uint64_t{1} << 22;
constexpr uint16_t kZip64ExtraId = 0x0001;

uint32_t load_u32(std::span<const uint8_t> b, uint64_t at) {
  return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 | uint32_t(b[at + 3]) << 24;
}

struct Directory {
  uint64_t entries = 0;
  uint64_t size = 0;
  uint64_t offset = 0;
};

// Finds the end-of-central-directory record (searching back over a possible comment) and,
// when any field is saturated, the ZIP64 record it points to.
Result<Directory> find_directory(std::span<const uint8_t> bytes, std::string_view file) {
  if (bytes.size() < kEocdBytes)
    return make_error(ErrorCode::header_too_small, file, 0, "too short to be a zip archive");
  const uint64_t last = bytes.size() - kEocdBytes;
  const uint64_t first = last > kMaxComment ? last - kMaxComment : 0;
  uint64_t eocd = kNoOffset;
  for (uint64_t at = last + 1; at-- > first;) {
    if (load_u32(bytes, at) == kEocdSig && at + kEocdBytes + (bytes[at + 20] | bytes[at + 21] << 8) == bytes.size()) {
      eocd = at;
      break;
    }
  }
  if (eocd == kNoOffset)
    return make_error(ErrorCode::bad_magic, file, last,
                      "no zip end-of-central-directory record at the end of the file");
  ByteReader r(bytes.subspan(eocd, kEocdBytes), file, eocd);
  r.u32();
  uint16_t disk = r.u16(), cd_disk = r.u16();
  r.u16();
  Directory d;
  d.entries = r.u16();
  d.size = r.u32();
  d.offset = r.u32();
  if (disk != 0 || cd_disk != 0)
    return make_error(ErrorCode::unsupported, file, eocd, "multi-disk zip archives are not supported");
  if (d.entries == 0xffff || d.size == 0xffffffff || d.offset == 0xffffffff) {
    if (eocd < 20) return make_error(ErrorCode::truncated, file, eocd, "zip64 locator missing before the end record");
    const uint64_t loc = eocd - 20;
    ByteReader l(bytes.subspan(loc, 20), file, loc);
    if (l.u32() != kZip64LocatorSig)
      return make_error(ErrorCode::bad_magic, file, loc, "saturated end record without a zip64 locator");
    l.u32();
    const uint64_t z = l.u64();
    if (z > bytes.size() || bytes.size() - z < 56)
      return make_error(ErrorCode::out_of_bounds, file, loc,
                        fmt::format("zip64 end record offset 0x{:x} is past the end of the file", z));
    ByteReader zr(bytes.subspan(z, 56), file, z);
    if (zr.u32() != kZip64EocdSig)
      return make_error(ErrorCode::bad_magic, file, z, "bad zip64 end-of-central-directory signature");
    zr.skip(8 + 2 + 2 + 4 + 4 + 8, "zip64 end record");
    d.entries = zr.u64();
    d.size = zr.u64();
    d.offset = zr.u64();
    if (d.entries > kMaxEntries)
      return make_error(ErrorCode::count_too_large, file, z + 32,
                        fmt::format("zip64 entry count {} exceeds the cap of {} entries", d.entries, kMaxEntries));
  }
  auto end = checked_add(d.offset, d.size);
  if (!end || *end > bytes.size())
    return make_error(ErrorCode::out_of_bounds, file, eocd, "central directory lies past the end of the file");
  if (d.entries > d.size / kCentralFixedBytes)
    return make_error(ErrorCode::count_too_large, file, eocd,
                      fmt::format("{} entries cannot fit in a {}-byte central directory", d.entries, d.size));
  return d;
}

// Applies the ZIP64 extended-information extra field: 64-bit values appear, in this order, only
// for the fields that are saturated in the fixed header.
void apply_zip64_extra(ByteReader& extra, ZipEntry& e, bool need_size, bool need_csize, bool need_offset) {
  while (extra.ok() && extra.remaining() >= 4) {
    uint16_t id = extra.u16(), len = extra.u16();
    if (id != kZip64ExtraId) {
      extra.skip(len, "zip extra field");
      continue;
    }
    auto field = extra.bytes(len, "zip64 extra field");
    ByteReader f(field, extra.file(), extra.file_offset() - len);
    if (need_size) e.size = f.u64("zip64 size");
    if (need_csize) e.compressed_size = f.u64("zip64 compressed size");
    if (need_offset) e.local_header = f.u64("zip64 local header offset");
    if (!f.ok()) extra.fail(f.error().code, f.error().offset, f.error().message);
    return;
  }
}

}   // namespace

Result<std::vector<ZipEntry>> read_zip_directory(std::span<const uint8_t> bytes, std::string_view file) {
  auto dir = find_directory(bytes, file);
  if (!dir) return std::move(dir).error();
  ByteReader r(bytes.subspan(dir->offset, dir->size), file, dir->offset);
  std::vector<ZipEntry> entries;
  entries.reserve(dir->entries);
  for (uint64_t i = 0; i < dir->entries; ++i) {
    ZipEntry e;
    e.directory_offset = r.file_offset();
    if (r.u32("central directory entry") != kCentralSig && r.ok())
      return make_error(ErrorCode::bad_magic, file, e.directory_offset, "bad central directory entry signature");
    r.skip(4, "versions");
    r.u16("flags");
    e.method = r.u16("method");
    r.skip(8, "time, date, crc");
    e.compressed_size = r.u32("compressed size");
    e.size = r.u32("size");
    uint16_t name_len = r.u16(), extra_len = r.u16(), comment_len = r.u16();
    r.skip(8, "disk, attributes");
    e.local_header = r.u32("local header offset");
    e.name = std::string(r.chars(name_len, "entry name"));
    auto extra_bytes = r.bytes(extra_len, "extra field");
    r.skip(comment_len, "entry comment");
    if (!r.ok()) return r.error();
    ByteReader extra(extra_bytes, file, r.file_offset() - comment_len - extra_len);
    apply_zip64_extra(extra, e, e.size == 0xffffffff, e.compressed_size == 0xffffffff, e.local_header == 0xffffffff);
    if (!extra.ok()) return extra.error();

    // The data offset needs the local header's own name and extra lengths (they may differ from
    // the central copy: torch pads the local extra field to align data to 64 bytes).
    if (e.local_header > bytes.size() || bytes.size() - e.local_header < kLocalFixedBytes)
      return make_error(
          ErrorCode::out_of_bounds, file, e.directory_offset,
          fmt::format("entry '{}': local header at 0x{:x} is past the end of the file", e.name, e.local_header));
    ByteReader lh(bytes.subspan(e.local_header, kLocalFixedBytes), file, e.local_header);
    if (lh.u32() != kLocalSig)
      return make_error(ErrorCode::bad_magic, file, e.local_header,
                        fmt::format("entry '{}': bad local header signature", e.name));
    lh.skip(22, "local header");
    uint64_t local_name = lh.u16(), local_extra = lh.u16();
    e.data_offset = e.local_header + kLocalFixedBytes + local_name + local_extra;
    auto end = checked_add(e.data_offset, e.compressed_size);
    if (!end || *end > bytes.size())
      return make_error(ErrorCode::out_of_bounds, file, e.local_header,
                        fmt::format("entry '{}': data ends past the end of the file (0x{:x})", e.name, bytes.size()));
    entries.push_back(std::move(e));
  }
  return entries;
}

Result<std::span<const uint8_t>> zip_entry_bytes(std::span<const uint8_t> bytes, std::string_view file,
                                                 const ZipEntry& entry) {
  if (entry.method != 0)
    return make_error(
        ErrorCode::unsupported, file, entry.local_header,
        fmt::format("entry '{}' is compressed (method {}); only stored records are read", entry.name, entry.method));
  if (entry.compressed_size != entry.size)
    return make_error(
        ErrorCode::size_mismatch, file, entry.directory_offset,
        fmt::format("stored entry '{}' has different sizes ({} vs {})", entry.name, entry.size, entry.compressed_size));
  if (entry.data_offset > bytes.size() || bytes.size() - entry.data_offset < entry.size)
    return make_error(ErrorCode::out_of_bounds, file, entry.local_header,
                      fmt::format("entry '{}' lies past the end of the file", entry.name));
  return bytes.subspan(entry.data_offset, entry.size);
}

}   // namespace akview
