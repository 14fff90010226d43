// The batch command functions shared by `akview <command>` and the TUI: each builds a report
// from an opened Model. Printing lives in printers.hpp.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/layout/block_fields.hpp"
#include "core/model.hpp"
#include "core/names/name_map.hpp"
#include "core/natural_order.hpp"   // natural_less, used by the tensor table
#include "core/result.hpp"
#include "ui/batch/reports.hpp"

namespace akview {

InfoReport make_info_report(const Model& model);

struct TensorQuery {
  std::string filter;          // ECMAScript regex searched in the native (and canonical) name
  bool invert = false;         // keep the tensors that do NOT match
  std::string sort = "file";   // file (the model's order, kept), name, type, shape, params, bytes, offset, bpw;
                               // every sort keeps each scale/bias companion right after its tensor
  bool descending = false;
  bool companions = true;   // list scales/biases beneath their logical tensor
};
// The rows, made one at a time as the source runs (it reads `model`, which must outlive it); any
// range of its positions can be made on its own, two at once (print_json_rows makes long ones so).
// Fails with ErrorCode::usage for a bad regex or sort column.
Result<RangedRows<TensorRow>> tensor_row_source(const Model& model, const TensorQuery& query);
Result<std::vector<TensorRow>> make_tensor_rows(const Model& model, const TensorQuery& query);
TensorRow make_tensor_row(const Model& model, const Tensor& t);

// All metadata (arrays truncated to `max_array_elems`), or the one key asked for (arrays whole).
// As a source: a row made (its arrays read) as the source reaches it; an unknown KEY fails here.
Result<RowStream<MetaRow>> meta_row_source(const Model& model, const std::optional<std::string>& key,
                                           uint64_t max_array_elems = 16);
Result<std::vector<MetaRow>> make_meta_rows(const Model& model, const std::optional<std::string>& key,
                                            uint64_t max_array_elems = 16);

// Opens `path` and validates everything; every problem is a row, the report never fails.
// `verify_digests`: also hash every Ollama blob against its manifest (reads all the data).
// `scan_values`: also scan every tensor's values for NaN/Inf (core/nonfinite_scan.hpp; reads all the data).
CheckReport make_check_report(const std::string& path, bool verify_digests = false, bool scan_values = false);

// Tensors by native name, else by canonical name (`layers.0.attention.q.weight`). The name map is
// built on the first canonical lookup and reused by the later ones (commands that take many names).
class TensorFinder {
 public:
  explicit TensorFinder(const Model& model);
  ~TensorFinder();
  Result<uint32_t> find(std::string_view name);
  const NameMap& name_map();

 private:
  const Model& model_;
  std::unique_ptr<NameMap> map_;
};
// One lookup (builds the name map only when the name is not native).
Result<uint32_t> find_tensor(const Model& model, std::string_view name);
// "A:B", ":B", "A:" or "A" (one row) against `n_rows`; usage error when malformed or out of range.
Result<std::pair<int64_t, int64_t>> parse_row_range(std::string_view text, int64_t n_rows);
// Logical rows x cols of a tensor (rows: all but the innermost dimension).
std::pair<int64_t, int64_t> tensor_rows_cols(const Model& model, const Tensor& t);

struct DumpQuery {
  std::string tensor;
  std::string rows;   // "A:B" (empty: all)
  std::string out;    // FILE.npy (NumPy) or any other name (raw little-endian f32); empty: values in the report
  uint64_t max_print_elems = uint64_t{1} << 24;
};
Result<DumpReport> make_dump(const Model& model, const DumpQuery& query);

struct GroupsQuery {
  std::string tensor;
  std::string rows;   // empty: all rows up to 64, else the first 16
};
Result<GroupsReport> make_groups_report(const Model& model, const GroupsQuery& query);
// The same with the groups listed as the stream reaches them (`report.groups` stays empty).
struct GroupsStream {
  GroupsReport report;
  RowStream<QuantGroup> groups;
};
Result<GroupsStream> groups_stream(const Model& model, const GroupsQuery& query);

// Value statistics of the named tensors (all non-companion tensors when `names` is empty), a row
// computed as the source reaches it. Names are resolved first (an unknown one fails here); a file
// that changed underneath (ErrorCode::truncated) fails the source.
Result<RowStream<StatsRow>> stats_row_source(const Model& model, const std::vector<std::string>& names,
                                             const StatsOptions& options = {});
Result<std::vector<StatsRow>> make_stats_rows(const Model& model, const std::vector<std::string>& names,
                                              const StatsOptions& options = {});

MapReport make_map_report(const Model& model);

// `layout`: the files to lay out for `path` (the one file it names, else every file of the model),
// and block `block` of a tensor by native or canonical name.
std::vector<uint32_t> layout_files(const Model& model, const std::string& path);
Result<BlockReport> make_block_report(const Model& model, const std::string& tensor, uint64_t block);

DiffTableReport make_diff_report(const Model& a, const Model& b, const DiffOptions& options);

struct RunQuery {
  std::vector<std::string> tensors;   // native or canonical names
  int64_t layer = -1;                 // every matrix of layers.N (canonical names)
  std::string filter;                 // regex over native and canonical names
  compute::RunOptions options;
};
// The tensors a run selects (matrices only: rank >= 2, not companions); every matrix when the query
// names none. `finder` is `model`'s; its name map is built here when the query needs it and can be
// reused by the caller.
Result<std::vector<uint32_t>> select_run_tensors(const Model& model, TensorFinder& finder, const RunQuery& query);
// Runs them; with `ref`, each output is also compared with the same canonical tensor of `ref`. With
// `callbacks.on_run` each run goes there as it finishes (its --ref comparison done) and the report
// keeps only the failures, the tensors missing from `ref` and whether it was cancelled; `on_start`,
// when set, gets the names about to run first (a streamed table sizes its columns from them).
Result<RunTableReport> make_run_report(const Model& model, const Model* ref, const RunQuery& query,
                                       const compute::RunCallbacks& callbacks = {},
                                       const std::function<void(const std::vector<std::string>&)>& on_start = {});

}   // namespace akview
