// The span sweep of region_writer.hpp.
#include "core/layout/region_writer.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace akview {

bool RegionWriter::emit(uint8_t depth, uint64_t offset, uint64_t size, RegionKind kind, std::string label,
                        std::string value) {
  return emit(Region{offset, size, depth, kind, std::move(label), std::move(value)});
}

bool RegionWriter::emit(Region region) {
  if (stopped_) return false;
  if (!sink_(region)) stopped_ = true;
  return !stopped_;
}

bool emit_spans(RegionWriter& writer, uint8_t depth, uint64_t begin, uint64_t end, std::vector<Span> spans,
                const SpanCallbacks& cb) {
  auto span_end = [](const Span& s) { return s.begin + s.size; };
  std::erase_if(spans, [&](const Span& s) { return s.begin > end || span_end(s) < begin || s.begin < begin; });
  std::stable_sort(spans.begin(), spans.end(), [&](const Span& a, const Span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.size < b.size;   // empty tensors first at a point
  });
  auto unclaimed = [&](uint64_t a, uint64_t b) {
    if (cb.unclaimed) return cb.unclaimed(a, b, depth);
    return writer.emit(depth, a, b - a, RegionKind::gap, "unclaimed bytes", fmt::format("{} bytes", b - a));
  };
  std::vector<size_t> active;   // spans covering `pos` (usually none or one)
  size_t next = 0;
  uint64_t pos = begin;
  while (!writer.stopped()) {
    // Spans starting here: empty ones are emitted at once, the others become active.
    while (next < spans.size() && spans[next].begin <= pos) {
      const Span& s = spans[next];
      if (s.size == 0) {
        Region r = cb.describe(s.id);
        r.offset = s.begin;
        r.size = 0;
        r.depth = depth;
        if (!writer.emit(std::move(r))) return false;
      } else {
        active.push_back(next);
      }
      ++next;
    }
    if (pos >= end) break;
    uint64_t stop = end;
    if (next < spans.size()) stop = std::min(stop, spans[next].begin);
    for (size_t a : active) stop = std::min(stop, span_end(spans[a]));
    if (active.empty()) {
      if (!unclaimed(pos, stop)) return false;
    } else if (active.size() == 1) {
      const Span& s = spans[active.front()];
      Region r = cb.describe(s.id);
      const bool whole = s.begin == pos && span_end(s) == stop;
      if (!whole) r.label += " (part)";
      r.offset = pos;
      r.size = stop - pos;
      r.depth = depth;
      if (!writer.emit(std::move(r))) return false;
      if (whole && cb.children && !cb.children(s.id, static_cast<uint8_t>(depth + 1))) return false;
    } else {
      std::string names;
      for (size_t a : active) {
        if (!names.empty()) names += " + ";
        names += cb.describe(spans[a].id).label;
      }
      const bool shared = cb.claimed_twice == RegionKind::shared;
      if (!writer.emit(depth, pos, stop - pos, cb.claimed_twice, std::move(names),
                       shared ? fmt::format("{} bytes shared by {} views", stop - pos, active.size())
                              : fmt::format("{} bytes claimed by {} structures", stop - pos, active.size())))
        return false;
    }
    std::erase_if(active, [&](size_t a) { return span_end(spans[a]) <= stop; });
    pos = stop;
  }
  return !writer.stopped();
}

}   // namespace akview
