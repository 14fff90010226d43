// The compute backend interface and the registry table: every backend runs y = W x for one
// core::TensorView (dequantize + matvec, f32 activations) and is measured against `reference`.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "core/tensor_view.hpp"

namespace akview::compute {

struct Availability {
  bool available = false;
  std::string reason;   // why not (empty when available); for OpenCL also which device is used
};

// One backend. Instances are process-wide singletons (see the registry below); matvec is
// thread-safe (a backend serialises its own calls where it keeps scratch state).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual Availability availability() const = 0;
  // True when this backend has its own kernel for the view (type, bits, scale types).
  virtual bool supports(const TensorView& view) const = 0;
  // True when matvec will succeed on this view, possibly by handing it to another backend.
  virtual bool can_run(const TensorView& view) const { return supports(view); }
  // Non-empty when matvec on this view is handed to another backend ("q1_0: no OpenCL kernel, ran on cpu").
  virtual std::string fallback_note(const TensorView& view) const { return {}; }
  // y[0..n_rows) = W x, x holds n_cols floats. Never crashes on input: a bad view is an Error.
  virtual Status matvec(const TensorView& view, const float* x, float* y) = 0;
  // Puts the view's weights where matvec reads them, for backends that keep a device copy (OpenCL
  // keeps it across repeats and runs of the same tensor): the runner calls it before timing, so the
  // upload is timed on its own. True when it copied something now; false when the weights were
  // there already or the backend reads them in place.
  virtual Result<bool> upload(const TensorView& view) { return false; }
};

// The registry: one row per backend, in the order `akview devices` lists them.
struct BackendRow {
  std::string_view name;          // "reference", "cpu", "blas", "opencl"
  std::string_view description;   // one line for `akview devices`
  Backend& (*instance)();
};
std::span<const BackendRow> backend_table();

// Looks a backend up by name; nullptr when unknown.
Backend* find_backend(std::string_view name);

// `auto`: an OpenCL GPU if there is one and it has a kernel for the type, else cpu (which runs
// every decodable type; blas and opencl on PoCL measured slower).
// Measured order (bench/matvec_bench.cpp, 2 vCPUs, PoCL CPU device): cpu > opencl(CPU) > blas.
Result<Backend*> pick_backend(std::string_view name, const TensorView& view);

// Bytes of weight data a matvec reads (packed weight + scales + biases + global scale).
uint64_t weight_bytes(const TensorView& view);

}   // namespace akview::compute
