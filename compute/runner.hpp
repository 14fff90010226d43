// The runner behind the Compute pane and `akview run`: one tensor view or a list, an input vector
// (seeded normal, ones, or a raw f32 file), N timed repeats on a backend, GB/s of weight bytes,
// and the error against the f64 reference (and optionally against a second model's tensor).
// Data in, data out: no printing; progress and cancellation through callbacks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compute/metrics.hpp"
#include "core/result.hpp"
#include "core/tensor_view.hpp"

namespace akview::compute {

enum class InputKind : uint8_t { seeded_normal, ones, file };

struct InputSpec {
  InputKind kind = InputKind::seeded_normal;
  uint64_t seed = 0;
  std::string path;   // raw little-endian f32, exactly n_cols values
};

// "seed:N", "ones", or a path (anything else); a usage error for "seed:" without a number.
Result<InputSpec> parse_input_spec(std::string_view text);
// The input vector: N(0,1) from std::mt19937_64(seed) + Box-Muller (same bits on every platform),
// all ones, or the file's floats.
Result<std::vector<float>> make_input(const InputSpec& spec, int64_t n_cols);

struct RunOptions {
  std::string backend = "auto";   // auto | reference | cpu | blas | opencl
  int repeat = 3;                 // timed runs (after one untimed warm-up run)
  InputSpec input;
  bool compare_reference = true;   // also run the f64 reference and fill vs_reference
  int opencl_device = -1;          // `--device N`: global OpenCL device index (devices.hpp); -1: automatic
  bool x_quant = false;            // `--x-quant`: also run the ggml-equivalent path (xquant.hpp) and report it beside
};

struct NamedView {
  std::string name;
  TensorView view;
};

// The x-quant path's figures for one tensor (RunOptions::x_quant), beside the exact path's.
struct XQuantRun {
  std::string act;       // x's block type ("q8_K"); empty when the type has no x-quant path
  std::string variant;   // kernel variant ("avx512-vnni", "scalar")
  std::string note;      // why it did not run
  double min_seconds = 0, median_seconds = 0;
  double gbps_best = 0, gbps_median = 0;
  std::optional<ErrorStats> vs_reference;   // its y against the f64 reference with the f32 x
  std::vector<float> y;
};

struct TensorRun {
  std::string name;
  std::string type;      // type name ("q4_k", "mlx.affine")
  std::string backend;   // the backend that ran
  std::string device;    // what it ran on (the backend's availability detail: OpenCL device, threads)
  std::string note;      // e.g. "q1_0: no OpenCL kernel, ran on cpu"
  int64_t n_rows = 0, n_cols = 0;
  uint64_t weight_bytes = 0;
  int repeats = 0;
  double min_seconds = 0, median_seconds = 0;
  double gbps_best = 0, gbps_median = 0;   // weight bytes / time
  // Copying the weights to the backend's device before the runs (OpenCL keeps them there across
  // repeats and runs of the same tensor): nullopt when nothing was copied this run.
  std::optional<double> upload_seconds;
  std::optional<ErrorStats> vs_reference;
  std::string reference_error;           // why vs_reference is absent (reference failed)
  std::optional<ErrorStats> vs_second;   // filled by compare_with_second
  std::optional<XQuantRun> xquant;       // filled when RunOptions::x_quant
  std::vector<float> x, y;
};

struct RunProgress {
  size_t tensor_index = 0, tensor_count = 1;
  int step = 0, steps = 1;   // warm-up + repeats + reference
  std::string_view name;
};

struct RunCallbacks {
  std::function<void(const RunProgress&)> on_progress;   // called before each step
  std::function<bool()> cancelled;                       // polled between steps
  // run_tensors: each run as it finishes (to print it while the next one runs); when set, the
  // report's `runs` stay empty.
  std::function<void(TensorRun&)> on_run;
};

// Runs one view. A cancelled run returns ErrorCode::refused with the message "cancelled".
Result<TensorRun> run_tensor(const NamedView& tensor, const RunOptions& options, const RunCallbacks& callbacks = {},
                             size_t index = 0, size_t count = 1);

struct RunFailure {
  std::string name;
  Error error;
};
struct RunReport {
  std::vector<TensorRun> runs;
  std::vector<RunFailure> failures;
  bool cancelled = false;
};
// Runs every view in order; a failing tensor is recorded and the rest go on; stops on cancel, and
// after a failure with ErrorCode::truncated (the file changed while open).
RunReport run_tensors(std::span<const NamedView> tensors, const RunOptions& options,
                      const RunCallbacks& callbacks = {});

// `--ref PATH`: the error of run.y against another model's tensor (same canonical name, same
// logical shape) decoded by the reference with the same x. Fills run.vs_second and returns it.
Result<ErrorStats> compare_with_second(TensorRun& run, const TensorView& other);
// The same against rows of several tensors laid end to end (MoE: a stacked [experts, rows, cols]
// tensor against one tensor per expert, or one expert against its slice of a stacked tensor).
struct SecondPart {
  TensorView view;
  int64_t row_begin = 0, row_end = 0;
};
Result<ErrorStats> compare_with_second(TensorRun& run, std::span<const SecondPart> parts);

}   // namespace akview::compute
