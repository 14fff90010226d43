// Emitting regions in order: a thin wrapper over the sink that stops once the sink says stop, and
// the sweep that lays out a set of possibly gapped or overlapping spans (tensor data, zip records,
// storages) so that the regions it emits cover their parent exactly once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/layout/region.hpp"

namespace akview {

class RegionWriter {
 public:
  explicit RegionWriter(const RegionSink& sink) : sink_(sink) {}
  // Emits one region; false once the sink has asked to stop (every later call is ignored).
  bool emit(uint8_t depth, uint64_t offset, uint64_t size, RegionKind kind, std::string label = {},
            std::string value = {});
  bool emit(Region region);
  bool stopped() const { return stopped_; }

 private:
  const RegionSink& sink_;
  bool stopped_ = false;
};

// A structure that claims bytes [begin, begin + size); `id` is the caller's (a tensor index).
struct Span {
  uint64_t begin = 0;
  uint64_t size = 0;
  uint32_t id = 0;
};

struct SpanCallbacks {
  // The region of span `id` (kind, label, value; offset/size/depth are set by the sweep).
  std::function<Region(uint32_t id)> describe;
  // Emits the children of span `id` at `depth`, called only when the span was emitted whole.
  std::function<bool(uint32_t id, uint8_t depth)> children;
  // Emits the region(s) for bytes [begin, end) that no span claims (default: one gap region).
  std::function<bool(uint64_t begin, uint64_t end, uint8_t depth)> unclaimed;
  // Bytes two or more spans claim: an overlap (a finding), or `shared` where the spans are views
  // that may read the same bytes (the tensors of one PyTorch storage).
  RegionKind claimed_twice = RegionKind::overlap;
};

// Emits the regions covering [begin, end) at `depth`: each span whole (then its children), the
// bytes no span claims through `unclaimed`, and bytes claimed by two or more spans as one region of
// kind `claimed_twice` (a span cut by one is emitted in parts, without children). Zero-size spans
// become zero-size regions at their offset. Spans are sorted here; parts outside [begin, end)
// are ignored. Memory is the span list only: labels are made as regions are emitted.
bool emit_spans(RegionWriter& writer, uint8_t depth, uint64_t begin, uint64_t end, std::vector<Span> spans,
                const SpanCallbacks& callbacks);

}   // namespace akview
