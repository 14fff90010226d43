// The runner (see runner.hpp): input vectors, timed repeats, GB/s and error against the reference.
#include "compute/runner.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "compute/backend.hpp"
#include "compute/devices.hpp"
#include "compute/reference.hpp"
#include "compute/xquant.hpp"

namespace akview::compute {
namespace {

Error cancelled_error() { return make_error(ErrorCode::refused, "", kNoOffset, "cancelled"); }

struct Timed {
  double min_seconds = 0, median_seconds = 0;
};
// Runs fn `repeats` times (each preceded by next_step, which may cancel); min and median seconds.
template <class Step, class Fn>
Result<Timed> time_repeats(int repeats, Step&& next_step, Fn&& fn) {
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    if (!next_step()) return cancelled_error();
    const auto t0 = std::chrono::steady_clock::now();
    AKV_TRY(fn());
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return Timed{seconds.front(), seconds[seconds.size() / 2]};
}

}   // namespace

Result<InputSpec> parse_input_spec(std::string_view text) {
  InputSpec spec;
  if (text == "ones") {
    spec.kind = InputKind::ones;
    return spec;
  }
  if (text.starts_with("seed:")) {
    const std::string_view digits = text.substr(5);
    uint64_t seed = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seed);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
      return make_error(ErrorCode::usage, "", kNoOffset,
                        fmt::format("--x {}: expected seed:N with N an unsigned integer", text));
    spec.kind = InputKind::seeded_normal;
    spec.seed = seed;
    return spec;
  }
  spec.kind = InputKind::file;
  spec.path = std::string(text);
  return spec;
}

Result<std::vector<float>> make_input(const InputSpec& spec, int64_t n_cols) {
  if (n_cols < 0) return make_error(ErrorCode::bad_shape, "", kNoOffset, "negative input length");
  std::vector<float> x(static_cast<size_t>(n_cols));
  switch (spec.kind) {
    case InputKind::ones: std::fill(x.begin(), x.end(), 1.0f); return x;
    case InputKind::seeded_normal: {
      // Box-Muller on 53-bit uniforms: the standard library's normal_distribution differs
      // between implementations, this does not.
      std::mt19937_64 rng(spec.seed);
      auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; };
      for (size_t i = 0; i < x.size(); i += 2) {
        const double r = std::sqrt(-2.0 * std::log(uniform())), t = 2.0 * M_PI * uniform();
        x[i] = static_cast<float>(r * std::cos(t));
        if (i + 1 < x.size()) x[i + 1] = static_cast<float>(r * std::sin(t));
      }
      return x;
    }
    case InputKind::file: {
      std::ifstream in(spec.path, std::ios::binary | std::ios::ate);
      if (!in) return make_error(ErrorCode::io, spec.path, kNoOffset, "cannot open the input vector file");
      const auto size = static_cast<uint64_t>(in.tellg());
      if (size != static_cast<uint64_t>(n_cols) * sizeof(float))
        return make_error(ErrorCode::size_mismatch, spec.path, kNoOffset,
                          fmt::format("input vector holds {} bytes, the tensor needs {} f32 values ({} bytes)", size,
                                      n_cols, n_cols * 4));
      in.seekg(0);
      in.read(reinterpret_cast<char*>(x.data()), static_cast<std::streamsize>(size));
      if (!in) return make_error(ErrorCode::io, spec.path, kNoOffset, "cannot read the input vector file");
      return x;
    }
  }
  return make_error(ErrorCode::usage, "", kNoOffset, "unknown input kind");
}

Result<TensorRun> run_tensor(const NamedView& tensor, const RunOptions& options, const RunCallbacks& callbacks,
                             size_t index, size_t count) {
  const TensorView& view = tensor.view;
  if (options.opencl_device != selected_opencl_device()) AKV_TRY(select_opencl_device(options.opencl_device));
  auto picked = pick_backend(options.backend, view);
  if (!picked) return std::move(picked).error();
  Backend& backend = **picked;
  auto x = make_input(options.input, view.n_cols);
  if (!x) return std::move(x).error();

  TensorRun run;
  run.name = tensor.name;
  run.type = std::string(type_info(view.type).name);
  run.backend = std::string(backend.name());
  run.device = backend.availability().reason;
  run.note = backend.fallback_note(view);
  run.n_rows = view.n_rows;
  run.n_cols = view.n_cols;
  run.weight_bytes = weight_bytes(view);
  run.x = std::move(*x);
  run.y.assign(static_cast<size_t>(std::max<int64_t>(view.n_rows, 0)), 0.0f);

  const int repeats = std::max(1, options.repeat);
  const bool xq = options.x_quant && xquant_supports(view);
  const int steps = 1 + repeats + (xq ? 1 + repeats : 0) + (options.compare_reference ? 1 : 0);
  int step = 0;
  auto next_step = [&]() -> bool {
    if (callbacks.cancelled && callbacks.cancelled()) return false;
    if (callbacks.on_progress) callbacks.on_progress(RunProgress{index, count, step, steps, tensor.name});
    ++step;
    return true;
  };
  auto gbps = [&](double s) { return s > 0 ? static_cast<double>(run.weight_bytes) / s / 1e9 : 0.0; };

  // The upload (a backend that keeps the weights on its device copies them once, timed on its own),
  // the warm-up (first touch of the mapping, OpenCL kernel compile), then the timed runs.
  if (!next_step()) return cancelled_error();
  const auto t_upload = std::chrono::steady_clock::now();
  auto uploaded = backend.upload(view);
  if (!uploaded) return std::move(uploaded).error();
  if (*uploaded)
    run.upload_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_upload).count();
  AKV_TRY(backend.matvec(view, run.x.data(), run.y.data()));
  auto timed = time_repeats(repeats, next_step, [&] { return backend.matvec(view, run.x.data(), run.y.data()); });
  if (!timed) return std::move(timed).error();
  run.repeats = repeats;
  run.min_seconds = timed->min_seconds;
  run.median_seconds = timed->median_seconds;
  run.gbps_best = gbps(run.min_seconds);
  run.gbps_median = gbps(run.median_seconds);

  if (options.x_quant) {
    XQuantRun q;
    if (xq) {
      q.act = std::string(act_quant_name(*act_quant_for(view.type)));
      q.variant = std::string(xquant_variant(view));
      q.y.assign(run.y.size(), 0.0f);
      if (!next_step()) return cancelled_error();
      AKV_TRY(xquant_matvec(view, run.x.data(), q.y.data()));
      auto t = time_repeats(repeats, next_step, [&] { return xquant_matvec(view, run.x.data(), q.y.data()); });
      if (!t) return std::move(t).error();
      q.min_seconds = t->min_seconds;
      q.median_seconds = t->median_seconds;
      q.gbps_best = gbps(q.min_seconds);
      q.gbps_median = gbps(q.median_seconds);
    } else {
      q.note = run.type + ": no x-quant path (ggml quantizes x only for its block types)";
    }
    run.xquant = std::move(q);
  }

  if (options.compare_reference) {
    if (!next_step()) return cancelled_error();
    std::vector<double> ref(run.y.size());
    Status s = reference_matvec(view, run.x.data(), ref.data());
    if (s.ok()) {
      run.vs_reference = compare_outputs(run.y, ref);
      if (run.xquant && !run.xquant->act.empty()) run.xquant->vs_reference = compare_outputs(run.xquant->y, ref);
    } else {
      run.reference_error = s.error().to_string();
    }
  }
  return run;
}

RunReport run_tensors(std::span<const NamedView> tensors, const RunOptions& options, const RunCallbacks& callbacks) {
  RunReport report;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (callbacks.cancelled && callbacks.cancelled()) {
      report.cancelled = true;
      break;
    }
    auto r = run_tensor(tensors[i], options, callbacks, i, tensors.size());
    if (r) {
      if (callbacks.on_run) callbacks.on_run(*r);
      else report.runs.push_back(std::move(*r));
    } else if (r.error().code == ErrorCode::refused && r.error().message == "cancelled") {
      report.cancelled = true;
      break;
    } else {
      const bool file_changed = r.error().code == ErrorCode::truncated;
      report.failures.push_back({tensors[i].name, std::move(r).error()});
      if (file_changed) break;   // the model's file shrank under it (core/fault_guard.hpp): the rest would fail alike
    }
  }
  return report;
}

Result<ErrorStats> compare_with_second(TensorRun& run, const TensorView& other) {
  const SecondPart whole{other, 0, other.n_rows};
  return compare_with_second(run, std::span<const SecondPart>(&whole, 1));
}

Result<ErrorStats> compare_with_second(TensorRun& run, std::span<const SecondPart> parts) {
  int64_t rows = 0;
  bool fits = true;
  for (const SecondPart& p : parts) {
    fits = fits && p.view.n_cols == run.n_cols && 0 <= p.row_begin && p.row_begin <= p.row_end &&
           p.row_end <= p.view.n_rows;
    rows += p.row_end - p.row_begin;
  }
  if (!fits || rows != run.n_rows) {
    const TensorView& other = parts.empty() ? TensorView{} : parts.front().view;
    return make_error(ErrorCode::bad_shape, "", kNoOffset,
                      parts.size() == 1
                          ? fmt::format("tensor '{}': shape [{}, {}] in the second model, [{}, {}] here", run.name,
                                        other.n_rows, other.n_cols, run.n_rows, run.n_cols)
                          : fmt::format("tensor '{}': {} rows of {} in {} parts of the second model, [{}, {}] here",
                                        run.name, rows, other.n_cols, parts.size(), run.n_rows, run.n_cols));
  }
  if (run.x.size() != static_cast<size_t>(run.n_cols))
    return make_error(ErrorCode::bad_shape, "", kNoOffset, "run holds no input vector");
  std::vector<double> ref(static_cast<size_t>(run.n_rows));
  int64_t at = 0;
  for (const SecondPart& p : parts) {
    AKV_TRY(reference_matvec_rows(p.view, p.row_begin, p.row_end, run.x.data(), ref.data() + at));
    at += p.row_end - p.row_begin;
  }
  run.vs_second = compare_outputs(run.y, ref);
  return *run.vs_second;
}

}   // namespace akview::compute
