// Transparent huge pages for the large tables an open fills (a million-tensor SafeTensors header
// makes ~50 MB of Tensor rows): where THP is in `madvise` mode, asking for them turns tens of
// thousands of first-touch page faults into a few dozen. A hint only: failure changes nothing.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

namespace akview {

inline void advise_huge_pages(const void* p, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}   // namespace akview
