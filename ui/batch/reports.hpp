// Reports: what batch commands return (data, never text). Printers (text/JSON/CSV) and the TUI
// render them; see printers.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compute/devices.hpp"
#include "compute/runner.hpp"
#include "core/decode/groups.hpp"
#include "core/decode/stats.hpp"
#include "core/diff.hpp"
#include "core/model.hpp"
#include "core/names/model_config.hpp"

namespace akview {

// Rows made one at a time: a source calls the sink once per row, in order, and holds no row after
// the sink returns; it may be run again (a text table measures its columns in a first pass). A
// source that fails (a file truncated underneath) stops there and says why.
template <typename Row>
using RowSink = std::function<void(const Row&)>;
template <typename Row>
using RowStream = std::function<Status(const RowSink<Row>&)>;

// A source whose rows come from numbered positions (tensors in the model's or a sorted order): it
// makes the rows of any range [begin, end) of them, so a printer can make a long listing's ranges on
// two threads and write them in order. stream() is the whole range as a RowStream.
template <typename Row>
struct RangedRows {
  size_t positions = 0;
  std::function<Status(size_t begin, size_t end, const RowSink<Row>&)> range;
  RowStream<Row> stream() const {
    return [n = positions, f = range](const RowSink<Row>& sink) { return f(0, n, sink); };
  }
};

// A source over rows already made (the TUI's and the tests' vectors).
template <typename Row>
RowStream<Row> rows_of(const std::vector<Row>& rows) {
  return [&rows](const RowSink<Row>& sink) {
    for (const auto& r : rows) sink(r);
    return Status();
  };
}

// Every row of a source, kept.
template <typename Row>
Result<std::vector<Row>> collect_rows(const RowStream<Row>& source) {
  std::vector<Row> rows;
  Status s = source([&](const Row& r) { rows.push_back(r); });
  if (!s) return std::move(s).error();
  return rows;
}

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
  std::string code;   // ErrorCode slug
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
  uint8_t bits = 0;          // composite types
  uint32_t group_size = 0;   // composite types
  bool companion = false;
  bool unsupported = false;
};

struct MetaRow {
  std::string key;
  std::string type;       // "UINT32", "STRING", "ARRAY[STRING]", "JSON"
  nlohmann::json value;   // arrays may be truncated: see `count`
  uint64_t count = 0;     // element count for arrays
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
  bool values_scanned = false;     // every tensor's values were scanned for NaN/Inf
  bool ok() const { return problems.empty(); }
};

struct DumpReport {
  std::string name;
  std::string type;
  std::vector<int64_t> shape;
  int64_t row_begin = 0, row_end = 0, n_cols = 0;
  std::vector<float> values;   // rows [row_begin, row_end) x n_cols when printed (no --out)
  std::string out_path;        // the file written, when --out was given
  uint64_t bytes_written = 0;
  std::string caveat;   // decoder assumption to state (e.g. unverified F4 nibble order)
};

struct GroupsReport {
  std::string name;
  std::string type;
  uint8_t bits = 0;
  uint32_t group_size = 0;
  int64_t row_begin = 0, row_end = 0, n_rows = 0;
  std::vector<QuantGroup> groups;
};

struct StatsRow {
  std::string name;
  std::string type;
  std::vector<int64_t> shape;
  TensorStats stats;
  std::string problem;   // why no stats (undecodable type), empty otherwise
  std::string caveat;
};

struct MapRow {
  std::string native;
  std::optional<std::string> canonical;
  std::string role;
  std::string note;
  int64_t layer = -1;
};

// Streamed: a row per non-companion tensor, mapped as it is made; the unmapped are those with no
// canonical name.
struct MapReport {
  std::string path;
  std::string arch;
  ModelConfig config;
  RowStream<MapRow> rows;
};

struct DiffRow {
  std::string key;
  bool canonical = true;
  std::optional<std::string> name_a, name_b;
  std::optional<std::string> type_a, type_b;
  std::optional<std::vector<int64_t>> shape_a, shape_b;
  bool shape_differs = false, type_differs = false;
  std::string note;
  std::optional<ValueError> error;
  std::string value_problem;
};

// Streamed: `pairs` makes the rows without values (cheap; the printer counts missing tensors and
// shape/type changes and measures columns from it), `rows` makes them with their value errors.
struct DiffTableReport {
  std::string path_a, path_b;
  RowStream<DiffRow> pairs;
  RowStream<DiffRow> rows;
};

struct RunTableReport {
  std::string path;
  std::string ref_path;   // --ref model, empty when none
  std::vector<compute::TensorRun> runs;
  std::vector<compute::RunFailure> failures;   // tensors that could not run (the rest did)
  std::vector<std::string> ref_missing;        // tensors with no counterpart in the --ref model
  bool cancelled = false;
};

}   // namespace akview
