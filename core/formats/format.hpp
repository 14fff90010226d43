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
};

struct FormatEntry {
  std::string_view name;          // "gguf", "safetensors", ...
  std::string_view description;   // for `akview --formats` and errors
  bool (*sniff)(const Probe& probe);
  Result<Model> (*open)(const Probe& probe, const OpenOptions& options);   // nullptr: recognised only
};

std::span<const FormatEntry> format_table();
Result<Probe> probe_path(const std::string& path);
// A probe of a file's bytes already mapped: its size and head, and no name, so the sniffers judge by
// content alone (the extension tie-breaks for too-broken files do not apply).
Probe probe_bytes(std::span<const uint8_t> bytes);
// The format table's entry that claims `probe` (the first whose sniffer does), or nullptr.
const FormatEntry* detect_format(const Probe& probe);

// Opens `path` as one model: a file or folder by the first format whose sniffer claims it, an Ollama
// `name:tag` through its manifest. Whether a folder holds several models is not asked here: that is
// the catalog's question, which open_model asks first. The catalog's own entries open through this.
Result<Model> open_one_model(const std::string& path, const OpenOptions& options = {});

// Opens what a person names (core/open_model.cpp, above the catalog): a remote address from its files
// laid out in the cache, a folder the catalog lists as several models refused with their names (a
// usage error; Ollama stores keep their own rule), anything else through open_one_model.
Result<Model> open_model(const std::string& path, const OpenOptions& options = {});

}   // namespace akview
