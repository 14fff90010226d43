// Bytes of this process's memory (a file mapping) copied into a buffer by the kernel
// (process_vm_readv of our own pid). On a virtual machine whose page tables are shadowed, user code's
// first touch of each 4 KiB page of a mapping costs microseconds (a fresh process reads a cached file
// through its mapping at 1-1.6 GB/s a thread), where the kernel's copy of the same pages runs at
// 4-9 GB/s. Whole-tensor passes (value statistics) read their chunks this way.
#pragma once

#include <sys/uio.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace akview::decode {

// [p, p + len) copied into `out` (resized to len); false when the kernel could not copy it all (no such
// call, a range that faults): the caller then reads the bytes in place, where a fault is reported.
inline bool kernel_copy(const uint8_t* p, size_t len, std::vector<uint8_t>& out) {
  if (out.size() < len) out.resize(len);
  if (len == 0) return true;
  iovec local{out.data(), len}, remote{const_cast<uint8_t*>(p), len};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

}   // namespace akview::decode
