// The batch command functions shared by `akview <command>` and the TUI: each builds a report
// from an opened Model. Printing lives in printers.hpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/result.hpp"
#include "ui/batch/reports.hpp"

namespace akview {

InfoReport make_info_report(const Model& model);

struct TensorQuery {
  std::string filter;            // ECMAScript regex searched in the native (and canonical) name
  bool invert = false;           // keep the tensors that do NOT match
  std::string sort = "file";     // file (storage order), name, type, shape, params, bytes, offset, bpw
  bool descending = false;
  bool companions = true;        // list scales/biases beneath their logical tensor
};
// Fails with ErrorCode::usage for a bad regex or sort column.
Result<std::vector<TensorRow>> make_tensor_rows(const Model& model, const TensorQuery& query);
TensorRow make_tensor_row(const Model& model, const Tensor& t);

// All metadata (arrays truncated to `max_array_elems`), or the one key asked for (arrays whole).
Result<std::vector<MetaRow>> make_meta_rows(const Model& model, const std::optional<std::string>& key,
                                            uint64_t max_array_elems = 16);

// Opens `path` and validates everything; every problem is a row, the report never fails.
CheckReport make_check_report(const std::string& path);

// Natural order: "layers.2" before "layers.10".
bool natural_less(std::string_view a, std::string_view b);

}  // namespace akview
