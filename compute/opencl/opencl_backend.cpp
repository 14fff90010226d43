// The OpenCL backend: kernels from compute/kernels/*.cl (kernel_table.hpp says which runs which type),
// built at run time for the device found through the ICD loader (device_choice.hpp: a GPU if there
// is one, else the first device, e.g. PoCL's CPU device; program.hpp builds them). Weights stay
// mmapped and are read in place (buffers.hpp: CL_MEM_USE_HOST_PTR, zero copy on PoCL) unless the
// residency cache (residency.hpp) keeps a device copy; dispatch.hpp launches the kernel. A type
// without a kernel runs on the cpu backend, with a note saying so. Everything is built on first use
// and rebuilt when another device is selected.
#include <algorithm>
#include <climits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compute/backends.hpp"
#include "compute/devices.hpp"
#include "compute/opencl/device_choice.hpp"
#include "compute/opencl/device_info.hpp"
#include "compute/opencl/dispatch.hpp"
#include "compute/opencl/program.hpp"
#include "compute/opencl/residency.hpp"
#include "core/decode/decode.hpp"
#include "core/fault_guard.hpp"

namespace akview::compute {
namespace {

class OpenClBackend final : public Backend {
 public:
  ~OpenClBackend() override { release(); }

  // Drops the cached weights, the program and the device; the next use initialises again.
  void release() {
    resident_.clear();   // buffers of the program's context, released before it
    program_.reset();
    device_ = {};
    state_ = Status();
    initialised_ = false;
  }

  // See select_opencl_device (devices.hpp).
  Status select(int index) {
    std::lock_guard lock(mutex_);
    std::lock_guard init_lock(init_mutex_);
    if (index < -1)
      return make_error(ErrorCode::usage, "", kNoOffset,
                        fmt::format("opencl: bad device index {} (use 0..N-1, or -1 for automatic)", index));
    if (index >= 0) {
      auto api = opencl_api();
      if (!api) return make_error(ErrorCode::unsupported, "", kNoOffset, "opencl unavailable: " + api.error().message);
      AKV_TRY(check_device_index(**api, index));
    }
    release();
    requested_ = index;
    return {};
  }
  int requested() const { return requested_; }
  // The global index of the device in use (-1 when none).
  int used_index() const {
    init();
    return state_.ok() ? used_index_ : -1;
  }

  std::string_view name() const override { return "opencl"; }

  Availability availability() const override {
    init();
    if (!state_) return {false, state_.error().message};
    return {true, fmt::format("{} ({}, {})", device_.name, device_.type, device_.version)};
  }

  bool supports(const TensorView& view) const override { return find_cl_kernel(view) != nullptr; }

  bool can_run(const TensorView& view) const override { return supports(view) || cpu_backend().supports(view); }

  std::string fallback_note(const TensorView& view) const override {
    if (supports(view)) return {};
    return fmt::format("{}: no OpenCL kernel, ran on cpu", type_info(view.type).name);
  }

  // The weights stay on the device once uploaded (residency.hpp).
  Result<bool> upload(const TensorView& view) override {
    std::lock_guard lock(mutex_);
    init();
    AKV_TRY(ready());
    AKV_TRY(validate_view(view));
    const ClKernelRow* row = find_cl_kernel(view);
    if (!row || view.n_rows == 0 || view.n_cols == 0) return false;
    AKV_TRY(check_view_mapped(view));
    auto kept = resident_.find_or_upload(target(), view, *row);
    if (!kept) return std::move(kept).error();
    return kept->uploaded;
  }

  Status matvec(const TensorView& view, const float* x, float* y) override {
    std::lock_guard lock(mutex_);   // before init(): the order select() takes them, so a concurrent
    init();                         // select cannot release the kernels between the checks and the launch
    AKV_TRY(ready());
    AKV_TRY(validate_view(view));   // core: type decodable, spans cover rows / groups
    const ClKernelRow* row = find_cl_kernel(view);
    if (row) AKV_TRY(check_view_mapped(view));   // the file has not shrunk since it was opened
    if (!row) return cpu_backend().matvec(view, x, y);
    if (view.n_rows == 0) return {};
    if (view.n_cols == 0) {   // empty rows: y = 0, as on the other backends (no zero-size buffers)
      std::fill_n(y, view.n_rows, 0.0f);
      return {};
    }
    if (view.n_cols > INT_MAX)
      return make_error(ErrorCode::unsupported, "", kNoOffset, "opencl: row longer than 2^31-1 elements");
    auto kept = resident_.find_or_upload(target(), view, *row);
    if (!kept) return std::move(kept).error();
    return dispatch_matvec(*program_, target(), *row, view, kept->resident, x, y);
  }

  uint64_t upload_count() const { return resident_.upload_count(); }
  int lanes() const {
    std::lock_guard lock(mutex_);
    init();
    return state_ && program_ ? program_->lanes() : 0;
  }
  uint64_t cached_bytes() const {
    std::lock_guard lock(mutex_);
    return resident_.bytes();
  }

 private:
  Status ready() const {
    if (state_) return {};
    return make_error(ErrorCode::unsupported, "", kNoOffset, "opencl unavailable: " + state_.error().message);
  }

  ClTarget target() const { return {api_, program_->context(), max_alloc_}; }

  void init() const {
    std::lock_guard lock(init_mutex_);
    if (initialised_) return;
    auto* self = const_cast<OpenClBackend*>(this);
    self->state_ = self->initialise();
    initialised_ = true;
  }

  Status initialise() {
    auto api = opencl_api();
    if (!api) return std::move(api).error();
    api_ = *api;
    used_index_ = -1;
    auto choice = choose_device(*api_, requested_);
    if (!choice) return std::move(choice).error();
    used_index_ = choice->index;
    device_ = describe_device(*api_, choice->id);
    max_alloc_ = device_.max_alloc_bytes ? device_.max_alloc_bytes : (uint64_t{128} << 20);
    resident_.set_budget(device_.global_mem_bytes);
    auto program = ClProgram::build(*api_, choice->id, row_lanes(*api_, choice->id));
    if (!program) return std::move(program).error();
    program_ = std::move(*program);
    return {};
  }

  mutable std::mutex init_mutex_;   // guards initialised_ and the state initialise() fills
  mutable bool initialised_ = false;
  int requested_ = -1;   // select_opencl_device's index (-1: automatic)
  int used_index_ = -1;
  mutable std::mutex mutex_;
  const OpenClApi* api_ = nullptr;
  Status state_;   // why the backend is unavailable, once initialised
  OpenClDevice device_;
  uint64_t max_alloc_ = 0;
  std::unique_ptr<ClProgram> program_;
  ResidencyCache resident_;   // weights kept on the device (mutex_)
};

OpenClBackend& instance() {
  static OpenClBackend b;
  return b;
}

}   // namespace

Backend& opencl_backend() { return instance(); }
uint64_t opencl_upload_count() { return instance().upload_count(); }
uint64_t opencl_cached_bytes() { return instance().cached_bytes(); }
int opencl_row_lanes() { return instance().lanes(); }
bool opencl_has_gpu() {
  auto api = opencl_api();
  return api && chooses_gpu(**api, instance().requested());
}
Status select_opencl_device(int index) { return instance().select(index); }
int selected_opencl_device() { return instance().requested(); }

Result<std::vector<OpenClPlatform>> opencl_enumerate() {
  auto api = opencl_api();
  if (!api) return std::move(api).error();
  return list_platforms(**api, instance().used_index());
}

}   // namespace akview::compute
