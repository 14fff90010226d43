// `akview fit PATH`: the estimate at the asked context, then the same at each context of the
// table (fit/fit_estimate.hpp).
#include <charconv>
#include <sstream>

#include <fmt/format.h>

#include "ui/batch/fit_report.hpp"

namespace akview {

namespace {
constexpr std::string_view kKvTypes[] = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"};
}   // namespace

std::span<const std::string_view> fit_kv_types() { return kKvTypes; }

Result<fit::FitQuery> make_fit_query(uint64_t context, uint32_t batch, const std::string& kv_type,
                                     const std::string& gpu_mem) {
  fit::FitQuery q;
  q.context = context;
  q.batch = batch;
  bool known = false;
  for (std::string_view name : kKvTypes) known = known || kv_type == name;
  auto type = known ? type_from_name(kv_type) : std::nullopt;
  if (!type)
    return make_error(
        ErrorCode::usage, "", kNoOffset,
        fmt::format("--kv-type {}: expected one of f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1", kv_type));
  q.kv_type = *type;
  std::stringstream in(gpu_mem);
  for (std::string item; std::getline(in, item, ',');) {
    double gib = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), gib);
    if (ec != std::errc() || end != item.data() + item.size() || !(gib > 0) || gib > 1e6)
      return make_error(ErrorCode::usage, "", kNoOffset,
                        fmt::format("--gpu-mem '{}': expected GiB per GPU, e.g. 24 or 24,12", gpu_mem));
    q.gpu_gib.push_back(gib);
  }
  return q;
}

Result<FitReport> make_fit_report(const Model& model, const fit::FitQuery& query) {
  auto e = fit::estimate_fit(model, query);
  if (!e) return std::move(e).error();
  auto table = fit::fit_table(model, query, *e);
  if (!table) return std::move(table).error();
  return FitReport{std::move(*e), std::move(*table)};
}

}   // namespace akview
