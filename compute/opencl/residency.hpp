// The weights the OpenCL backend keeps on the device between runs: one entry per view, keyed by the
// mapping its bytes come from (so a file opened again is a new entry), within a byte budget (half
// the device's memory, at most 4 GiB); the least recently used entries go first.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "compute/opencl/buffers.hpp"

namespace akview::compute {

// A view's weights on the device: its chunks (in the order of a ChunkPlan's rows), its bytes and
// when it was last used.
struct Resident {
  std::vector<Chunk> chunks;
  uint64_t bytes = 0, last_use = 0;
};

// Not thread-safe: the backend calls it under its own lock (upload_count excepted).
class ResidencyCache {
 public:
  // `device_mem_bytes` sets the budget (0: unknown, 1 GiB).
  void set_budget(uint64_t device_mem_bytes);

  // The kept copy of the view's weights, uploaded now when missing (`uploaded`); null when the view
  // cannot be kept (bytes of unknown lifetime, source_id 0, or more than the budget): matvec then
  // reads in place.
  struct Kept {
    const Resident* resident = nullptr;
    bool uploaded = false;
  };
  Result<Kept> find_or_upload(const ClTarget& target, const TensorView& view, const ClKernelRow& row);

  uint64_t bytes() const;                                     // kept now
  uint64_t upload_count() const { return uploads_.load(); }   // since the process started
  void clear();                                               // drops every entry (the context is going)

 private:
  using Key = std::tuple<uint64_t, const uint8_t*, size_t, const uint8_t*, size_t, const uint8_t*, size_t>;
  std::map<Key, Resident> entries_;
  uint64_t budget_bytes_ = uint64_t{1} << 30;
  uint64_t use_clock_ = 0;
  std::atomic<uint64_t> uploads_{0};
};

}   // namespace akview::compute
