// Bytes of a file mapping of this process copied into a buffer by the kernel, for whole-tensor passes
// (value statistics). On a virtual machine whose page tables are shadowed, user code's first touch of
// each 4 KiB page of a mapping costs microseconds (a fresh process reads a cached file through its
// mapping at 1-1.6 GB/s a thread). pread from the file the mapping shows (the same device and inode,
// found in /proc/self/maps) reads the page cache without touching the mapping at all (about 11 GB/s a
// thread here), and leaves nothing of it resident; where there is no such file (a remote model's
// mapping, bytes on the heap) process_vm_readv of our own pid copies through the mapping (4-9 GB/s).
#pragma once

#include <cstddef>
#include <cstdint>

namespace akview::decode {

class KernelCopy {
 public:
  // `inside`: an address in the mapping the later reads lie in.
  explicit KernelCopy(const uint8_t* inside);
  ~KernelCopy();
  KernelCopy(const KernelCopy&) = delete;
  KernelCopy& operator=(const KernelCopy&) = delete;

  // [p, p + len) into out; false when the kernel could not copy it all (the caller then reads the
  // bytes in place, where a fault is reported). Safe to call from several threads at once.
  bool read(const uint8_t* p, size_t len, uint8_t* out) const;
  bool reads_file() const { return fd_ >= 0; }

 private:
  int fd_ = -1;                     // the mapped file, opened again read-only; -1: process_vm_readv
  uintptr_t start_ = 0, end_ = 0;   // the mapping's range (fd_ >= 0)
  uint64_t offset_ = 0;             // the file offset at start_
};

}   // namespace akview::decode
