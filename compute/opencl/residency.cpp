// The OpenCL weight-residency cache (residency.hpp).
#include "compute/opencl/residency.hpp"

#include <algorithm>

#include "core/fault_guard.hpp"

namespace akview::compute {

void ResidencyCache::set_budget(uint64_t device_mem_bytes) {
  budget_bytes_ = std::min<uint64_t>(device_mem_bytes ? device_mem_bytes / 2 : uint64_t{1} << 30, uint64_t{4} << 30);
}

uint64_t ResidencyCache::bytes() const {
  uint64_t n = 0;
  for (const auto& entry : entries_) n += entry.second.bytes;
  return n;
}

void ResidencyCache::clear() { entries_.clear(); }

Result<ResidencyCache::Kept> ResidencyCache::find_or_upload(const ClTarget& target, const TensorView& view,
                                                            const ClKernelRow& row) {
  if (view.source_id == 0) return Kept{};
  const Key key{view.source_id,     view.data.data(),   view.data.size(),  view.scales.data(),
                view.scales.size(), view.biases.data(), view.biases.size()};
  if (auto it = entries_.find(key); it != entries_.end()) {
    it->second.last_use = ++use_clock_;
    return Kept{&it->second, false};
  }
  const uint64_t bytes = view.data.size() + view.scales.size() + view.biases.size();
  if (bytes > budget_bytes_) return Kept{};
  while (!entries_.empty() && this->bytes() + bytes > budget_bytes_) {
    auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                   [](const auto& a, const auto& b) { return a.second.last_use < b.second.last_use; });
    entries_.erase(oldest);
  }
  auto plan = plan_chunks(view, target.max_alloc_bytes);
  if (!plan) return std::move(plan).error();
  Resident r;
  r.bytes = bytes;
  r.last_use = ++use_clock_;
  for (int64_t r0 = 0; r0 < view.n_rows; r0 += plan->chunk_rows) {
    AKV_TRY(check_view_mapped(view));
    const int64_t rows = std::min(plan->chunk_rows, view.n_rows - r0);
    auto chunk = make_chunk(target, view, row, *plan, r0, rows, CL_MEM_COPY_HOST_PTR);
    if (!chunk) return std::move(chunk).error();
    r.chunks.push_back(std::move(*chunk));
  }
  ++uploads_;
  return Kept{&entries_.emplace(key, std::move(r)).first->second, true};
}

}   // namespace akview::compute
