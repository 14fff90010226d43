// Reading a model's files through the kernel's copy: pread() of a byte range into the caller's
// buffer, for the passes that stream every byte of a model (check's value scan and blob digests,
// diff's values). On this project's VMs (shadowed page tables) the first touch of each 4 KiB page of a
// mapping from user code costs 2-3.6 us, so a fresh process reads a cached file through its mapping
// at 1-2 GB/s a thread; pread copies it at 5-8 GB/s a thread and maps nothing (process_vm_readv of
// the process's own mapping, the first way tried, 4-6 GB/s, also faults the pages into the mapping).
// Remote files (a sparse stand-in in the cache) are made readable first (prepare_file_read).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace akview {

class CopyReader {
 public:
  // Opens each path read-only (a path that does not open reads nothing: read() is false).
  explicit CopyReader(const std::vector<std::string>& paths);
  ~CopyReader();
  CopyReader(const CopyReader&) = delete;
  CopyReader& operator=(const CopyReader&) = delete;

  // Bytes [offset, offset + out.size()) of file `file` into `out`; false when they could not all be
  // read (a file cut short, an I/O or fetch error): the caller then reads the mapping under the
  // fault guard, which says what went wrong. Safe on several threads at once.
  bool read(size_t file, uint64_t offset, std::span<uint8_t> out) const;

 private:
  std::vector<std::string> paths_;
  std::vector<int> fds_;
};

}   // namespace akview
