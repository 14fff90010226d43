// Detection by content through a table of formats (sniff, open); see format_table.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/result.hpp"

namespace akview {

// What detection knows about a path before any format opens it.
struct Probe {
  std::string path;
  bool is_dir = false;
  uint64_t size = 0;                  // file size (0 for directories)
  std::vector<uint8_t> head;          // up to the first 4 KiB of a file (read with pread)
  std::vector<std::string> entries;   // directory entry names (sorted), for directories
  bool has_entry(std::string_view name) const;
};

struct OpenOptions {
  // Progress in [0,1] for long opens (huge indexes, split sets); may be empty.
  std::function<void(double)> progress;
  const std::atomic<bool>* cancel = nullptr;
  // Copy the tensor names into one block of their own (Model::pack_names), so the header's mapped
  // pages can be dropped while the model stays open (the TUI). Batch commands read the names where
  // they are: a million-tensor listing saves a 20 MB copy.
  bool pack_names = false;
};

struct FormatEntry {
  std::string_view name;                                     // "gguf", "safetensors", ...
  std::string_view description;                              // for `akview --formats` and errors
  bool (*sniff)(const Probe& probe);
  Result<Model> (*open)(const Probe& probe, const OpenOptions& options);   // nullptr: recognised only
};

std::span<const FormatEntry> format_table();
Result<Probe> probe_path(const std::string& path);
// Detects the format of `path` (file or directory) by content and opens it.
Result<Model> open_model(const std::string& path, const OpenOptions& options = {});

}  // namespace akview
