// `akview explain`: the report (one group's step-through, core/explain), the command function that
// builds it and its printer. Shared by the batch command and the TUI's Groups pane.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/explain/explain.hpp"
#include "core/model.hpp"
#include "core/result.hpp"
#include "ui/batch/printers.hpp"

namespace akview {

struct ExplainReport {
  std::string name;
  std::string type;   // the type's name (q4_k, mlx.affine)
  std::string file;   // the file holding the packed data (bytes.offset is in it)
  GroupExplanation explanation;
};

struct ExplainQuery {
  std::string tensor;
  int64_t row = 0, col = 0;   // logical row (all but the innermost dimension) and column
};

// The step-through of the group holding element (row, col); out_of_bounds naming the range when the
// element is outside the tensor.
Result<ExplainReport> make_explain_report(const Model& model, const ExplainQuery& query);

nlohmann::json to_json(const ExplainReport& r);
// Words of `text` wrapped into lines of at most `width` bytes (a longer word stands alone).
std::vector<std::string> wrap_words(std::string_view text, size_t width);
// A step's values on one line: "1 2 3 … (256 values)" after `max` numbers.
std::string step_values_line(const std::vector<double>& values, size_t max = 32);
// The family paragraph of an explanation as a step (label "family: ...", the paragraph and the
// tensor's bits per weight as its formula): the last step of the JSON, the last section of the text.
ExplainStep family_step(const GroupExplanation& e);
void print_explain(std::FILE* out, const ExplainReport& r, OutputFormat format);

}   // namespace akview
