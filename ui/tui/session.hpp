// One opened model as the TUI holds it: the Model, its name map, the summary for the title bar, the
// size and mtime of its files at open (to notice changes on disk) and the value statistics filled
// in by the worker. Shared (shared_ptr) between the view and the jobs that read it; jobs only read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/names/name_map.hpp"
#include "ui/batch/reports.hpp"

namespace akview::tui {

// The few numbers the Tensors table shows per tensor once the worker computed them.
struct ValueSummary {
  enum class State : uint8_t { pending, done, failed } state = State::pending;
  float min = 0, max = 0, std = 0;
  uint8_t spark[8] = {};   // histogram bins scaled to 0..8 (the sparkline's eighths)
};

struct FileStamp {
  std::string path;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

struct ModelSession {
  Model model;
  InfoReport info;                 // title bar: files, size, tensors, parameters, type mix
  std::vector<FileStamp> stamps;   // at open
  // Built on the worker after the first frame; null until then.
  std::shared_ptr<const NameMap> names;
  std::vector<uint32_t> entry_of;   // tensor index -> names->entries index (kNone: unmapped/companion)
  // Value statistics per tensor (sized on the first result; UI thread only).
  std::vector<ValueSummary> values;
  // Bumped when `values` or `names` change, so views re-sort what depends on them.
  uint64_t values_version = 0;
  uint64_t names_version = 0;
  // The name form the Tensors pane shows (`c` toggles it); Groups and Compute show the same.
  bool show_canonical = true;

  std::optional<NameMapEntry> entry(uint32_t tensor) const {
    if (names && tensor < entry_of.size() && entry_of[tensor] != kNone) return names->entries[entry_of[tensor]];
    return std::nullopt;
  }
  // The canonical name of a mapped tensor, else empty (no entry built: for loops over every tensor).
  std::string_view canonical(uint32_t tensor) const {
    return names && tensor < entry_of.size() && entry_of[tensor] != kNone ? names->entries.canonical(entry_of[tensor])
                                                                          : std::string_view();
  }
  // The name shown for `tensor`: canonical when chosen and mapped, else native.
  std::string_view shown_name(uint32_t tensor) const {
    if (show_canonical)
      if (const std::string_view c = canonical(tensor); !c.empty()) return c;
    return model.tensors[tensor].name;
  }
  const ValueSummary* value(uint32_t tensor) const {
    return tensor < values.size() && values[tensor].state != ValueSummary::State::pending ? &values[tensor] : nullptr;
  }
};

// Stamps of every file of `model` now (size and mtime).
std::vector<FileStamp> stamp_files(const Model& model);
// True when any file's size or mtime differs from `stamps` (or it is gone).
bool files_changed(const std::vector<FileStamp>& stamps);
// Builds the session around an opened model (info report, stamps; no name map yet).
std::shared_ptr<ModelSession> make_session(Model model);
// Builds the name map and the tensor -> entry index (on the worker).
void attach_names(ModelSession& session, std::shared_ptr<const NameMap> names);

}   // namespace akview::tui
