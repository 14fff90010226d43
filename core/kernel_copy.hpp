// Bytes of a model's mapping copied into a buffer by the kernel, for the passes that stream every byte
// of a model (value statistics, check's NaN/Inf scan and Ollama blob digests, diff's values). On this
// project's PVM guests (shadowed page tables) user code's first touch of each 4 KiB page of a mapping
// costs 2-3.6 us, so a fresh process reads a cached file through its mapping at 1-2 GB/s a thread. pread
// from the file the mapping shows (the same device and inode, found in /proc/self/maps) reads the page
// cache without touching the mapping at all (5-11 GB/s a thread there) and leaves nothing of it
// resident. On its Firecracker guests (Linux 6.18, the page cache in large folios) a mapping's first
// touches are cheap (4.9 GB in 3,760 faults, 0.03 s) and `stats` of a whole model ran as fast either
// way (2.5-2.75 s; through the mapping: 0.7 s more user time, 0.8 s less system time).
// Where there is no such file (a remote model's mapping, bytes on the heap) process_vm_readv of our own
// pid copies through the mapping (4-9 GB/s); it cannot wait for a remote fetch, so pages of a remote
// mapping that nothing has read yet fail the copy, and the caller reads them in place.
#pragma once

#include <cstddef>
#include <cstdint>

namespace akview {

class KernelCopy {
 public:
  // `inside`: an address in the mapping the later reads lie in.
  explicit KernelCopy(const uint8_t* inside);
  ~KernelCopy();
  KernelCopy(const KernelCopy&) = delete;
  KernelCopy& operator=(const KernelCopy&) = delete;

  // [p, p + len) into out; false when the kernel could not copy it all (a file cut short, an I/O
  // error, a remote page not fetched yet): the caller then reads the bytes in place under the fault
  // guard, which says what went wrong. Safe to call from several threads at once.
  bool read(const uint8_t* p, size_t len, uint8_t* out) const;
  bool reads_file() const { return fd_ >= 0; }

 private:
  int fd_ = -1;                     // the mapped file, opened again read-only; -1: process_vm_readv
  uintptr_t start_ = 0, end_ = 0;   // the mapping's range (fd_ >= 0)
  uint64_t offset_ = 0;             // the file offset at start_
};

}   // namespace akview
