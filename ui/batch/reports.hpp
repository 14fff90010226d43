// Reports: what batch commands return (data, never text). Printers (text/JSON/CSV) and the TUI
// render them; see printers.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model.hpp"

namespace akview {

struct FileRow {
  std::string path;
  std::string role;
  uint64_t size = 0;
  uint64_t header_bytes = 0;
  uint64_t data_offset = 0;
};

struct TypeMixRow {
  std::string type;
  uint64_t tensors = 0;
  uint64_t parameters = 0;
  uint64_t bytes = 0;
};

struct NoteRow {
  std::string code;      // ErrorCode slug
  std::string file;
  uint64_t offset = kNoOffset;
  std::string message;
  bool fails_check = false;
};

struct InfoReport {
  std::string path;
  std::string format;
  std::string architecture;   // general.architecture or config model_type, when known
  std::string name;           // general.name, when known
  std::vector<FileRow> files;
  uint64_t tensors = 0;
  uint64_t parameters = 0;
  uint64_t bytes = 0;
  uint64_t metadata_keys = 0;
  std::vector<TypeMixRow> types;
  std::vector<NoteRow> notes;
};

struct TensorRow {
  std::string name;
  std::optional<std::string> canonical;
  std::string type;
  std::vector<int64_t> shape;
  uint64_t parameters = 0;
  uint64_t nbytes = 0;
  double bits_per_weight = 0;
  std::string file;
  uint64_t offset = 0;
  uint8_t bits = 0;           // composite types
  uint32_t group_size = 0;    // composite types
  bool companion = false;
  bool unsupported = false;
};

struct MetaRow {
  std::string key;
  std::string type;           // "UINT32", "STRING", "ARRAY[STRING]", "JSON"
  nlohmann::json value;       // arrays may be truncated: see `count`
  uint64_t count = 0;         // element count for arrays
  bool truncated = false;
  std::string source;
  std::string file;
  uint64_t offset = 0;
};

struct CheckReport {
  std::string path;
  std::string format;
  uint64_t files = 0;
  uint64_t tensors = 0;
  std::vector<NoteRow> problems;   // errors and fails_check notes: any makes the check fail
  std::vector<NoteRow> warnings;   // notes that do not fail the check
  bool ok() const { return problems.empty(); }
};

}  // namespace akview
