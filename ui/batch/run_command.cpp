// `akview run PATH [TENSOR...] [--layer N] [--filter RE]`: dequant + matvec on a backend, timed,
// with the error against the f64 reference and, with --ref, against another model's tensor of the
// same canonical name (quantized vs original).
#include <functional>
#include <optional>
#include <regex>
#include <unordered_map>

#include <fmt/format.h>

#include "core/diff.hpp"
#include "core/names/name_map.hpp"
#include "core/tensor_view.hpp"
#include "ui/batch/commands.hpp"

namespace akview {
namespace {

bool is_matrix(const Tensor& t) { return t.rank >= 2 && !(t.flags & kTensorCompanion); }

}   // namespace

Result<std::vector<uint32_t>> select_run_tensors(const Model& model, TensorFinder& finder, const RunQuery& query) {
  std::vector<uint32_t> picked;
  std::vector<bool> taken(model.tensors.size(), false);
  auto take = [&](uint32_t i) {
    if (!taken[i]) picked.push_back(i);
    taken[i] = true;
  };
  for (const auto& name : query.tensors) {
    auto i = finder.find(name);
    if (!i) return i.error();
    take(*i);
  }
  if (query.layer < 0 && query.filter.empty()) {
    if (query.tensors.empty())
      for (uint32_t i = 0; i < model.tensors.size(); ++i)
        if (is_matrix(model.tensors[i])) take(i);
    return picked;
  }
  std::optional<std::regex> re;
  if (!query.filter.empty()) {
    try {
      re.emplace(query.filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return make_error(ErrorCode::usage, "", kNoOffset,
                        fmt::format("bad --filter regex '{}': {}", query.filter, e.what()));
    }
  }
  for (const auto& e : finder.name_map().entries) {
    const Tensor& t = model.tensors[e.tensor];
    if (!is_matrix(t)) continue;
    if (query.layer >= 0 && e.layer != query.layer) continue;   // -1 when unmapped or not in a layer
    if (re && !std::regex_search(t.name.begin(), t.name.end(), *re) &&
        !(e.mapped && std::regex_search(e.canonical.begin(), e.canonical.end(), *re)))
      continue;
    take(e.tensor);
  }
  if (picked.empty())
    return make_error(ErrorCode::not_found, model.path, kNoOffset,
                      "no matrix matches the selection (--layer / --filter)");
  return picked;
}

Result<RunTableReport> make_run_report(const Model& model, const Model* ref, const RunQuery& query,
                                       const compute::RunCallbacks& callbacks,
                                       const std::function<void(const std::vector<std::string>&)>& on_start) {
  TensorFinder finder(model);
  auto picked = select_run_tensors(model, finder, query);
  if (!picked) return picked.error();
  RunTableReport report;
  report.path = model.path;
  std::vector<compute::NamedView> views;
  for (uint32_t i : *picked) {
    const Tensor& t = model.tensors[i];
    auto view = (t.flags & kTensorNonContiguous)
                    ? Result<TensorView>(make_error(ErrorCode::unsupported, model.files[t.file].path, t.offset,
                                                    "a non-contiguous view cannot be run; run its storage tensor"))
                    : make_tensor_view(model, t);
    if (!view) report.failures.push_back({std::string(t.name), view.error()});
    else views.push_back({std::string(t.name), *view});
  }
  if (on_start) {
    std::vector<std::string> names;
    for (const auto& v : views) names.push_back(v.name);
    on_start(names);
  }

  // --ref: each run's output against the same canonical tensor of `ref`, decoded by the reference.
  std::optional<NameMap> theirs;
  std::unordered_map<std::string_view, std::string_view> canonical_of;
  if (ref) {
    report.ref_path = ref->path;
    theirs = build_name_map(*ref);
    for (const auto& e : finder.name_map().entries)
      if (e.mapped) canonical_of[model.tensors[e.tensor].name] = e.canonical;
  }
  auto ref_tensor = [&](std::string_view canonical) -> const Tensor* {
    const uint32_t e = canonical.empty() ? kNone : theirs->find(canonical);
    return e != kNone ? &ref->tensors[theirs->entries[e].tensor] : nullptr;
  };
  // The rows of `ref` that hold run's tensor: its tensor of the same canonical name (or native name,
  // unmapped on both sides); for MoE, paired as core/diff pairs them, an expert's slice of a stacked
  // [experts, rows, cols] tensor, or each expert's tensor one after the other for a stacked one.
  auto ref_parts = [&](const compute::TensorRun& run, std::vector<compute::SecondPart>& parts) -> Status {
    std::string_view canonical;
    if (auto c = canonical_of.find(run.name); c != canonical_of.end()) canonical = c->second;
    auto add = [&](const Tensor& t, int64_t expert, int64_t experts) -> Status {
      auto view = make_tensor_view(*ref, t);
      if (!view) return std::move(view).error();
      const int64_t rows = experts > 0 ? view->n_rows / experts : view->n_rows;
      if (expert >= experts) return {};   // no such expert in ref: missing
      if (expert >= 0 && rows != run.n_rows)
        return make_error(ErrorCode::bad_shape, ref->path, t.offset,
                          fmt::format("tensor '{}': expert {} of '{}' has {} rows, {} here", run.name, expert, t.name,
                                      rows, run.n_rows));
      parts.push_back({*view, expert >= 0 ? expert * rows : 0, expert >= 0 ? (expert + 1) * rows : view->n_rows});
      return {};
    };
    const Tensor* other = ref_tensor(canonical);
    if (!other) other = ref->find(run.name);
    if (other) return add(*other, -1, 0);
    if (auto split = split_expert_key(canonical)) {
      if (const Tensor* stacked = ref_tensor(split->stacked); stacked && stacked->rank >= 3)
        return add(*stacked, split->expert, ref->shape(*stacked).front());
      return {};
    }
    const Tensor* mine = model.find(run.name);
    if (!mine || mine->rank < 3 || expert_key(canonical, 0).empty()) return {};
    const int64_t experts = model.shape(*mine).front();
    for (int64_t e = 0; e < experts; ++e) {
      const Tensor* t = ref_tensor(expert_key(canonical, e));
      if (!t) {   // an expert missing from ref: so is the stacked tensor
        parts.clear();
        return {};
      }
      AKV_TRY(add(*t, -1, 0));
    }
    return {};
  };
  auto compare_with_ref = [&](compute::TensorRun& run) {
    std::vector<compute::SecondPart> parts;
    if (Status s = ref_parts(run, parts); !s) return report.failures.push_back({run.name + " (--ref)", s.error()});
    if (parts.empty()) return report.ref_missing.push_back(run.name);
    auto cmp = compute::compare_with_second(run, parts);
    if (!cmp) report.failures.push_back({run.name + " (--ref)", cmp.error()});
  };

  compute::RunCallbacks each = callbacks;
  each.on_run = [&](compute::TensorRun& run) {
    if (ref) compare_with_ref(run);
    if (callbacks.on_run) callbacks.on_run(run);
    else report.runs.push_back(std::move(run));
  };
  compute::RunReport runs = compute::run_tensors(views, query.options, each);
  report.failures.insert(report.failures.end(), runs.failures.begin(), runs.failures.end());
  report.cancelled = runs.cancelled;
  return report;
}

}   // namespace akview
