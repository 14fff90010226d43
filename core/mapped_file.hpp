// A file mapped read-only (PROT_READ, MAP_PRIVATE): zero-copy access to headers and tensor data.
// Opening maps the whole file but touches nothing, so a 1 TB file opens as fast as a 1 MB one.
//
// Another process may truncate the file while it is mapped; touching a page past the new end then
// raises SIGBUS. So every mapping is also entered in a process-wide registry (address range, path,
// and the read-only descriptor, kept open for fstat): core/fault_guard.hpp uses it to check a range
// against the file's current size before reading it, and to name the file and offset of a fault.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/result.hpp"

namespace akview {

// What a mapping made elsewhere (a remote file's, core/remote/fault_mapping.hpp) does where core
// reads it: fetch a range before a checked read, and say why a guarded read faulted.
class MappingHooks {
 public:
  virtual ~MappingHooks() = default;
  // Before a read that core checks first (fault_guard's check_mapped_range): the bytes are made readable.
  virtual Status prepare(uint64_t offset, uint64_t length) = 0;
  // After a guarded read of `offset` faulted: the error to report (the mapping may recover).
  virtual Error fault_error(uint64_t offset) = 0;
};

class MappedFile;
// Paths whose bytes are not on this disk yet (remote models' stand-ins in the cache): `map` maps
// one (nullopt: not one of its paths), `prepare` makes [offset, offset + length) of it readable by
// read()/pread() (probes read a file's first bytes that way).
struct FileProvider {
  std::optional<Result<MappedFile>> (*map)(const std::string& path) = nullptr;
  Status (*prepare)(const std::string& path, uint64_t offset, uint64_t length) = nullptr;
};
void set_file_provider(FileProvider provider);
// The provider's prepare for `path`, or success for any ordinary file.
Status prepare_file_read(const std::string& path, uint64_t offset, uint64_t length);

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  static Result<MappedFile> open(const std::string& path);
  // A mapping made by someone else: `owner` keeps it alive (and unmaps it when the last MappedFile
  // holding it goes), its hooks serve core's checked and guarded reads; `stat_fd` (owned) is fstat'ed
  // for the size, as an opened file's descriptor is.
  static MappedFile adopt(std::string path, const uint8_t* data, uint64_t size, int stat_fd,
                          std::shared_ptr<MappingHooks> owner);

  const std::string& path() const { return path_; }
  // Unique to this mapping in the process, never reused (0: none): caches of the bytes (e.g. the
  // OpenCL backend's device copies) key on it, so a file opened again is never mistaken for the old one.
  uint64_t id() const { return id_; }
  uint64_t size() const { return size_; }
  const uint8_t* data() const { return data_; }
  std::span<const uint8_t> bytes() const { return {data_, static_cast<size_t>(size_)}; }
  // Bytes [offset, offset+length) or an empty span when the range is not inside the file.
  std::span<const uint8_t> range(uint64_t offset, uint64_t length) const;
  // Drops the pages read so far from this process's resident set (madvise MADV_DONTNEED); the bytes
  // stay readable and come back from the page cache when touched. For jobs that stream through a
  // model's data and must not keep it all resident.
  void release_pages() const;

 private:
  void release();

  std::string path_;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t id_ = 0;
  int fd_ = -1;   // read-only, close-on-exec; kept for fstat (the file may shrink under the mapping)
  std::shared_ptr<MappingHooks> owner_;   // adopted mappings: the owner unmaps
};

// Where an address lies among the live mappings: the file, the byte offset in it, the size mapped
// at open and the size the file has now (fstat; equal to mapped_size when it cannot be had).
struct MappedLocation {
  std::string path;
  uint64_t offset = 0;
  uint64_t mapped_size = 0;
  uint64_t current_size = 0;
  std::shared_ptr<MappingHooks> hooks;   // set for adopted mappings (remote files)
};
// Empty when `address` lies in no mapping made by MappedFile::open that is still alive.
std::optional<MappedLocation> locate_mapping(const void* address);

}   // namespace akview
