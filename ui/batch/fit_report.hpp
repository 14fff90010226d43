// `akview fit`: the report (the estimate at the asked context and a table over contexts), the
// option parsing shared by the command line and the TUI, and its printers (text, JSON).
#pragma once

#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/fit/fit_estimate.hpp"
#include "core/model.hpp"
#include "core/result.hpp"
#include "ui/batch/printers.hpp"

namespace akview {

struct FitReport {
  fit::FitEstimate estimate;
  std::vector<fit::FitTableRow> table;   // 4k, 8k, 32k, 128k and the trained context (those up to it)
};

// The KV cache types --kv-type takes (llama.cpp's --cache-type-k / -v choices), f16 second.
std::span<const std::string_view> fit_kv_types();
// --kv-type NAME (f16, bf16, f32, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl) and --gpu-mem "24" or "24,12"
// into a query; usage errors otherwise.
Result<fit::FitQuery> make_fit_query(uint64_t context, uint32_t batch, const std::string& kv_type,
                                     const std::string& gpu_mem);
Result<FitReport> make_fit_report(const Model& model, const fit::FitQuery& query);

nlohmann::json to_json(const FitReport& r);
void print_fit(std::FILE* out, const FitReport& r, OutputFormat format);

}   // namespace akview
