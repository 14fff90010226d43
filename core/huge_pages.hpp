// Memory hints for the large tables an open fills (a million-tensor SafeTensors header makes ~50 MB
// of Tensor rows): transparent huge pages, which where THP is in `madvise` mode turn tens of
// thousands of first-touch page faults into a few dozen, and those first touches made on several
// threads before one thread fills a table. Hints only: failure changes nothing.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/parallel_chunks.hpp"

namespace akview {

inline void advise_huge_pages(const void* p, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// Faults in the pages of [p, p + bytes) that lie wholly inside it, writable, without writing them
// (MADV_POPULATE_WRITE, Linux 5.14): a table that is then filled on one thread has had its first
// touches made wherever this ran. A hint too: where the kernel lacks it, the fill faults them in.
inline void populate_pages(const void* p, size_t bytes) {
#if defined(MADV_POPULATE_WRITE)
  constexpr uintptr_t kPage = 4096;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kPage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)bytes;
#endif
}

// populate_pages in 2 MB pieces on `threads` threads: on the VMs this ran on a first touch of fresh
// memory cost ~2-7 us a 4 KiB page, so the join of a 163-shard model spent 50 ms of one thread
// faulting in its 24 MB of rows, 5-16 ms on three.
inline void populate_on_threads(const void* p, size_t bytes, int threads) {
  constexpr size_t kPiece = size_t{2} << 20;
  const auto* base = static_cast<const uint8_t*>(p);
  parallel_chunks((bytes + kPiece - 1) / kPiece, threads, [&](size_t k, int) {
    populate_pages(base + k * kPiece, std::min(kPiece, bytes - k * kPiece));
    return true;
  });
}

}   // namespace akview
