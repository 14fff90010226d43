// The OpenCL backend: kernels from compute/kernels/*.cl (one per storage type, embedded at build
// time), built at run time for the device found through the ICD loader (a GPU if there is one,
// else the first device, e.g. PoCL's CPU device; PoCL caches the build in $POCL_CACHE_DIR).
// Weights stay mmapped: buffers are CL_MEM_USE_HOST_PTR over the mapped bytes (zero copy on PoCL),
// in chunks of rows that respect CL_DEVICE_MAX_MEM_ALLOC_SIZE (2 GiB on PoCL). A type without a
// kernel runs on the cpu backend, with a note saying so.
#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <map>
#include <tuple>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compute/backends.hpp"
#include "compute/devices.hpp"
#include "compute/opencl_kernels.hpp"
#include "core/decode/decode.hpp"
#include "core/fault_guard.hpp"
#include "compute/opencl_loader.hpp"

namespace akview::compute {
namespace {

enum class ArgLayout : uint8_t { plain, affine };

struct ClKernelRow {
  TypeId type;
  const char* kernel;
  ArgLayout layout = ArgLayout::plain;
};
constexpr std::array kClKernels = {
    ClKernelRow{TypeId::f32, "mv_f32"},       ClKernelRow{TypeId::f16, "mv_f16"},
    ClKernelRow{TypeId::bf16, "mv_bf16"},     ClKernelRow{TypeId::q4_0, "mv_q4_0"},
    ClKernelRow{TypeId::q4_1, "mv_q4_1"},     ClKernelRow{TypeId::q5_0, "mv_q5_0"},
    ClKernelRow{TypeId::q5_1, "mv_q5_1"},     ClKernelRow{TypeId::q8_0, "mv_q8_0"},
    ClKernelRow{TypeId::iq4_nl, "mv_iq4_nl"}, ClKernelRow{TypeId::q2_k, "mv_q2_k"},
    ClKernelRow{TypeId::q3_k, "mv_q3_k"},     ClKernelRow{TypeId::q4_k, "mv_q4_k"},
    ClKernelRow{TypeId::q5_k, "mv_q5_k"},     ClKernelRow{TypeId::q6_k, "mv_q6_k"},
    ClKernelRow{TypeId::iq4_xs, "mv_iq4_xs"},
    ClKernelRow{TypeId::mlx_affine, "mv_affine", ArgLayout::affine},
    ClKernelRow{TypeId::ollama_int4, "mv_affine", ArgLayout::affine},
    ClKernelRow{TypeId::ollama_int8, "mv_affine", ArgLayout::affine},
};

// Scalar companion types as the kernels number them (common.cl ld_scalar).
int cl_scalar_code(TypeId t) { return t == TypeId::f16 ? 0 : t == TypeId::bf16 ? 1 : t == TypeId::f32 ? 2 : -1; }

constexpr size_t kLocalSize = 16;

// An OpenCL string query (size first, then the bytes) without its trailing NULs and newlines;
// query(size, buffer, &size_out) is one clGet*Info call.
template <class Query>
std::string cl_string(Query query) {
  size_t n = 0;
  if (query(0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (query(n, s.data(), nullptr) != CL_SUCCESS) return {};
  while (!s.empty() && (s.back() == '\0' || s.back() == '\n')) s.pop_back();
  return s;
}
std::string info_string(const OpenClApi& api, cl_device_id d, cl_device_info what) {
  return cl_string([&](size_t n, void* p, size_t* out) { return api.GetDeviceInfo(d, what, n, p, out); });
}
std::string platform_string(const OpenClApi& api, cl_platform_id p, cl_platform_info what) {
  return cl_string([&](size_t n, void* buf, size_t* out) { return api.GetPlatformInfo(p, what, n, buf, out); });
}
template <typename T>
T info_value(const OpenClApi& api, cl_device_id d, cl_device_info what) {
  T v{};
  if (api.GetDeviceInfo(d, what, sizeof v, &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

OpenClDevice describe(const OpenClApi& api, cl_device_id d) {
  OpenClDevice dev;
  dev.name = info_string(api, d, CL_DEVICE_NAME);
  dev.vendor = info_string(api, d, CL_DEVICE_VENDOR);
  dev.version = info_string(api, d, CL_DEVICE_VERSION);
  dev.driver_version = info_string(api, d, CL_DRIVER_VERSION);
  const auto type = info_value<cl_device_type>(api, d, CL_DEVICE_TYPE);
  dev.type = (type & CL_DEVICE_TYPE_GPU) ? "GPU" : (type & CL_DEVICE_TYPE_CPU) ? "CPU" : (type & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator" : "other";
  dev.compute_units = info_value<cl_uint>(api, d, CL_DEVICE_MAX_COMPUTE_UNITS);
  dev.global_mem_bytes = info_value<cl_ulong>(api, d, CL_DEVICE_GLOBAL_MEM_SIZE);
  dev.max_alloc_bytes = info_value<cl_ulong>(api, d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  dev.max_work_group_size = info_value<size_t>(api, d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  dev.fp16 = info_string(api, d, CL_DEVICE_EXTENSIONS).find("cl_khr_fp16") != std::string::npos;
  return dev;
}

// A cl_mem released when it goes out of scope.
struct ClMem {
  const OpenClApi* api = nullptr;
  cl_mem mem = nullptr;
  ClMem() = default;
  ClMem(const OpenClApi* a, cl_mem m) : api(a), mem(m) {}
  ClMem(const ClMem&) = delete;
  ClMem& operator=(const ClMem&) = delete;
  ClMem(ClMem&& o) noexcept : api(o.api), mem(o.mem) { o.mem = nullptr; }
  ClMem& operator=(ClMem&& o) noexcept {
    std::swap(api, o.api);
    std::swap(mem, o.mem);
    return *this;
  }
  ~ClMem() {
    if (mem) api->ReleaseMemObject(mem);
  }
};

// Every device of every platform, in the global index order.
std::vector<cl_device_id> all_devices(const OpenClApi& api) {
  std::vector<cl_device_id> out;
  cl_uint n_platforms = 0;
  if (api.GetPlatformIDs(0, nullptr, &n_platforms) != CL_SUCCESS || n_platforms == 0) return out;
  std::vector<cl_platform_id> platforms(n_platforms);
  api.GetPlatformIDs(n_platforms, platforms.data(), nullptr);
  for (cl_platform_id p : platforms) {
    cl_uint n = 0;
    if (api.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) continue;
    std::vector<cl_device_id> devs(n);
    api.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, devs.data(), nullptr);
    out.insert(out.end(), devs.begin(), devs.end());
  }
  return out;
}

class OpenClBackend final : public Backend {
 public:
  ~OpenClBackend() override { release(); }

  // Drops the context, queue, program and kernels; the next use initialises again.
  void release() {
    if (api_) {
      for (auto& k : kernels_)
        if (k) api_->ReleaseKernel(k);
      if (program_) api_->ReleaseProgram(program_);
      if (queue_) api_->ReleaseCommandQueue(queue_);
      if (context_) api_->ReleaseContext(context_);
    }
    resident_.clear();   // buffers of the context released below
    kernels_ = {};
    program_ = nullptr;
    queue_ = nullptr;
    context_ = nullptr;
    device_ = {};
    ready_ = false;
    why_.clear();
    initialised_ = false;
  }

  // See select_opencl_device (devices.hpp).
  Status select(int index) {
    std::lock_guard lock(mutex_);
    std::lock_guard init_lock(init_mutex_);
    if (index < -1) return make_error(ErrorCode::usage, "", kNoOffset, fmt::format("opencl: bad device index {} (use 0..N-1, or -1 for automatic)", index));
    if (index >= 0) {
      std::string error;
      const OpenClApi* api = opencl_api(&error);
      if (!api) return make_error(ErrorCode::unsupported, "", kNoOffset, "opencl unavailable: " + error);
      const auto devices = all_devices(*api);
      if (static_cast<size_t>(index) >= devices.size())
        return make_error(ErrorCode::usage, "", kNoOffset,
                          devices.empty() ? fmt::format("opencl: no device {}: no OpenCL device found", index)
                                          : fmt::format("opencl: no device {}: {} device(s) found, valid indices 0..{}", index, devices.size(), devices.size() - 1));
    }
    release();
    requested_ = index;
    return {};
  }
  int requested() const { return requested_; }
  // The global index of the device in use (-1 when none).
  int used_index() const {
    init();
    return ready_ ? used_index_ : -1;
  }

  std::string_view name() const override { return "opencl"; }

  Availability availability() const override {
    init();
    if (!ready_) return {false, why_};
    return {true, fmt::format("{} ({}, {})", device_.name, device_.type, device_.version)};
  }

  bool supports(const TensorView& view) const override { return find(view) != nullptr; }

  bool can_run(const TensorView& view) const override { return supports(view) || cpu_backend().supports(view); }

  std::string fallback_note(const TensorView& view) const override {
    if (supports(view)) return {};
    return fmt::format("{}: no OpenCL kernel, ran on cpu", type_info(view.type).name);
  }

  // The weights stay on the device once uploaded (keyed by the mapping they come from, so a file
  // opened again is a new entry), within a byte budget; the least recently used go first.
  Result<bool> upload(const TensorView& view) override {
    std::lock_guard lock(mutex_);
    init();
    if (!ready_) return make_error(ErrorCode::unsupported, "", kNoOffset, "opencl unavailable: " + why_);
    AKV_TRY(validate_view(view));
    const ClKernelRow* row = find(view);
    if (!row || view.n_rows == 0 || view.n_cols == 0) return false;
    AKV_TRY(check_view_mapped(view));
    bool uploaded = false;
    auto kept = resident(view, *row, uploaded);
    if (!kept) return std::move(kept).error();
    return uploaded;
  }

  Status matvec(const TensorView& view, const float* x, float* y) override {
    std::lock_guard lock(mutex_);   // before init(): the order select() takes them, so a concurrent
    init();                         // select cannot release the kernels between the checks and the launch
    if (!ready_) return make_error(ErrorCode::unsupported, "", kNoOffset, "opencl unavailable: " + why_);
    AKV_TRY(validate_view(view));   // core: type decodable, spans cover rows / groups
    const ClKernelRow* row = find(view);
    if (row) AKV_TRY(check_view_mapped(view));   // the file has not shrunk since it was opened
    if (!row) return cpu_backend().matvec(view, x, y);
    if (view.n_rows == 0) return {};
    if (view.n_cols == 0) {   // empty rows: y = 0, as on the other backends (no zero-size buffers)
      std::fill_n(y, view.n_rows, 0.0f);
      return {};
    }
    if (view.n_cols > INT_MAX) return make_error(ErrorCode::unsupported, "", kNoOffset, "opencl: row longer than 2^31-1 elements");
    cl_kernel k = kernels_[static_cast<size_t>(row - kClKernels.data())];
    bool uploaded = false;
    auto kept_or = resident(view, *row, uploaded);
    if (!kept_or) return std::move(kept_or).error();
    const Resident* kept = *kept_or;
    auto plan_or = plan_chunks(view);
    if (!plan_or) return std::move(plan_or).error();
    const Plan plan = *plan_or;

    cl_int err = CL_SUCCESS;
    ClMem xbuf(api_, api_->CreateBuffer(context_, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * static_cast<size_t>(view.n_cols), const_cast<float*>(x), &err));
    if (err != CL_SUCCESS) return cl_fail("clCreateBuffer(x)", err);

    // The kernels read the weights on the OpenCL runtime's own threads (PoCL: in this process), which
    // carry no SIGBUS guard and must not be jumped out of (they hold the runtime's locks). Kept
    // weights are the device's copy; weights read in place are protected only by the size
    // pre-check, repeated per chunk: a file cut while a chunk runs still ends the process
    // (core/fault_guard.hpp).
    size_t chunk_index = 0;
    for (int64_t r0 = 0; r0 < view.n_rows; r0 += plan.chunk_rows, ++chunk_index) {
      const int64_t rows = std::min(plan.chunk_rows, view.n_rows - r0);
      Chunk local;
      const Chunk* chunk = kept ? &kept->chunks[chunk_index] : &local;
      if (!kept) {
        if (r0 > 0) AKV_TRY(check_view_mapped(view));
        AKV_TRY(make_chunk(view, *row, plan, r0, rows, CL_MEM_USE_HOST_PTR, local));
      }
      ClMem ybuf(api_, api_->CreateBuffer(context_, CL_MEM_WRITE_ONLY, sizeof(float) * static_cast<size_t>(rows), nullptr, &err));
      if (err != CL_SUCCESS) return cl_fail("clCreateBuffer(y)", err);
      const cl_ulong w_bytes = static_cast<cl_ulong>(rows) * view.row_bytes;
      const cl_int n_rows = static_cast<cl_int>(rows), n_cols = static_cast<cl_int>(view.n_cols);
      cl_uint arg = 0;
      auto set = [&](size_t size, const void* value) {
        if (err == CL_SUCCESS) err = api_->SetKernelArg(k, arg, size, value);
        ++arg;
      };
      set(sizeof(cl_mem), &chunk->w.mem);
      set(sizeof(cl_ulong), &w_bytes);
      if (row->layout == ArgLayout::affine) {
        const cl_ulong s_bytes = static_cast<cl_ulong>(rows) * plan.s_row, b_bytes = static_cast<cl_ulong>(rows) * plan.b_row;
        set(sizeof(cl_mem), &chunk->s.mem);
        set(sizeof(cl_ulong), &s_bytes);
        set(sizeof(cl_mem), &chunk->b.mem);
        set(sizeof(cl_ulong), &b_bytes);
      }
      set(sizeof(cl_mem), &xbuf.mem);
      set(sizeof(cl_mem), &ybuf.mem);
      set(sizeof(cl_int), &n_rows);
      set(sizeof(cl_int), &n_cols);
      if (row->layout == ArgLayout::affine) {
        const cl_int bits = view.bits, gs = static_cast<cl_int>(view.group_size);
        const cl_int st = cl_scalar_code(view.scales_type), bt = cl_scalar_code(view.biases_type);
        set(sizeof(cl_int), &bits);
        set(sizeof(cl_int), &gs);
        set(sizeof(cl_int), &st);
        set(sizeof(cl_int), &bt);
      }
      if (err != CL_SUCCESS) return cl_fail("clSetKernelArg", err);
      // Global size rounded up to the work-group size; the kernels return for row >= rows.
      const size_t global = (static_cast<size_t>(rows) + kLocalSize - 1) / kLocalSize * kLocalSize, local_size = kLocalSize;
      err = api_->EnqueueNDRangeKernel(queue_, k, 1, nullptr, &global, &local_size, 0, nullptr, nullptr);
      if (err != CL_SUCCESS) return cl_fail("clEnqueueNDRangeKernel", err);
      err = api_->EnqueueReadBuffer(queue_, ybuf.mem, CL_TRUE, 0, sizeof(float) * static_cast<size_t>(rows), y + r0, 0, nullptr, nullptr);
      if (err != CL_SUCCESS) return cl_fail("clEnqueueReadBuffer", err);
    }
    return {};
  }

  uint64_t upload_count() const { return uploads_.load(); }
  uint64_t cached_bytes() const {
    std::lock_guard lock(mutex_);
    uint64_t n = 0;
    for (const auto& [key, r] : resident_) n += r.bytes;
    return n;
  }

 private:
  // Rows per launch: every buffer of a chunk stays under the device's max allocation.
  struct Plan {
    int64_t chunk_rows = 0;
    uint64_t s_row = 0, b_row = 0;   // scale and bias bytes per row (affine)
  };
  Result<Plan> plan_chunks(const TensorView& view) const {
    Plan p;
    const uint64_t groups_per_row = view.group_size ? static_cast<uint64_t>(view.n_cols / view.group_size) : 0;
    p.s_row = groups_per_row * type_info(view.scales_type).block_bytes;
    p.b_row = groups_per_row * type_info(view.biases_type).block_bytes;
    const uint64_t widest = std::max({view.row_bytes, p.s_row, p.b_row, uint64_t{1}});
    const uint64_t limit = std::min<uint64_t>(max_alloc_, uint64_t{1} << 40);
    if (widest > limit) return make_error(ErrorCode::unsupported, "", kNoOffset, "opencl: one row is larger than the device's max allocation");
    p.chunk_rows = static_cast<int64_t>(std::min<uint64_t>({limit / widest, static_cast<uint64_t>(view.n_rows), uint64_t{INT_MAX} - kLocalSize}));
    return p;
  }

  // One chunk's buffers: over the caller's bytes (USE_HOST_PTR where aligned: read in place) or a
  // device copy (COPY_HOST_PTR: the upload).
  struct Chunk {
    ClMem w, s, b;
  };
  Status make_chunk(const TensorView& view, const ClKernelRow& row, const Plan& plan, int64_t r0, int64_t rows,
                    cl_mem_flags mode, Chunk& out) {
    cl_int err = CL_SUCCESS;
    out.w = host_buffer(view.data.data() + static_cast<uint64_t>(r0) * view.row_bytes, static_cast<uint64_t>(rows) * view.row_bytes, mode, err);
    if (err != CL_SUCCESS) return cl_fail("clCreateBuffer(weights)", err);
    if (row.layout == ArgLayout::affine) {
      cl_int e2 = CL_SUCCESS, e3 = CL_SUCCESS;
      out.s = host_buffer(view.scales.data() + static_cast<uint64_t>(r0) * plan.s_row, static_cast<uint64_t>(rows) * plan.s_row, mode, e2);
      out.b = host_buffer(view.biases.data() + static_cast<uint64_t>(r0) * plan.b_row, static_cast<uint64_t>(rows) * plan.b_row, mode, e3);
      if (e2 != CL_SUCCESS || e3 != CL_SUCCESS) return cl_fail("clCreateBuffer(scales/biases)", e2 != CL_SUCCESS ? e2 : e3);
    }
    return {};
  }

  // A view's weights kept on the device: its chunks, its bytes and when it was last used.
  struct Resident {
    std::vector<Chunk> chunks;
    uint64_t bytes = 0, last_use = 0;
  };
  using ResidentKey = std::tuple<uint64_t, const uint8_t*, size_t, const uint8_t*, size_t, const uint8_t*, size_t>;

  // The kept copy of the view's weights, uploaded now when missing (`uploaded`); null when the view
  // cannot be kept (bytes of unknown lifetime, or more than the budget): matvec then reads in place.
  Result<const Resident*> resident(const TensorView& view, const ClKernelRow& row, bool& uploaded) {
    uploaded = false;
    if (view.source_id == 0) return static_cast<const Resident*>(nullptr);
    const ResidentKey key{view.source_id, view.data.data(), view.data.size(), view.scales.data(), view.scales.size(),
                          view.biases.data(), view.biases.size()};
    if (auto it = resident_.find(key); it != resident_.end()) {
      it->second.last_use = ++use_clock_;
      return &it->second;
    }
    const uint64_t bytes = view.data.size() + view.scales.size() + view.biases.size();
    const uint64_t budget = std::min<uint64_t>(device_.global_mem_bytes ? device_.global_mem_bytes / 2 : uint64_t{1} << 30, uint64_t{4} << 30);
    if (bytes > budget) return static_cast<const Resident*>(nullptr);
    auto used = [&] {
      uint64_t n = 0;
      for (const auto& [k, r] : resident_) n += r.bytes;
      return n;
    };
    while (!resident_.empty() && used() + bytes > budget) {
      auto oldest = std::min_element(resident_.begin(), resident_.end(),
                                     [](const auto& a, const auto& b) { return a.second.last_use < b.second.last_use; });
      resident_.erase(oldest);
    }
    auto plan_or = plan_chunks(view);
    if (!plan_or) return std::move(plan_or).error();
    const Plan plan = *plan_or;
    Resident r;
    r.bytes = bytes;
    r.last_use = ++use_clock_;
    for (int64_t r0 = 0; r0 < view.n_rows; r0 += plan.chunk_rows) {
      AKV_TRY(check_view_mapped(view));
      Chunk c;
      AKV_TRY(make_chunk(view, row, plan, r0, std::min(plan.chunk_rows, view.n_rows - r0), CL_MEM_COPY_HOST_PTR, c));
      r.chunks.push_back(std::move(c));
    }
    ++uploads_;
    uploaded = true;
    return &resident_.emplace(key, std::move(r)).first->second;
  }

  const ClKernelRow* find(const TensorView& view) const {
    for (const auto& r : kClKernels) {
      if (r.type != view.type) continue;
      if (r.layout == ArgLayout::affine) {
        const bool ok = view.bits >= 2 && view.bits <= 8 && view.bits != 7 && view.group_size > 0 && view.group_size % 16 == 0 &&
                        cl_scalar_code(view.scales_type) >= 0 && !view.biases.empty() && cl_scalar_code(view.biases_type) >= 0 &&
                        view.global_scale.empty();
        if (!ok) return nullptr;
      }
      return &r;
    }
    return nullptr;
  }

  // `mode` CL_MEM_USE_HOST_PTR: zero copy over the caller's bytes when they are 4-byte aligned
  // (kernels read f32/f16 there), else a copy into a buffer the driver aligns; CL_MEM_COPY_HOST_PTR:
  // always the device's own copy.
  ClMem host_buffer(const uint8_t* p, uint64_t bytes, cl_mem_flags mode, cl_int& err) {
    err = CL_SUCCESS;
    if (bytes == 0) {   // an empty span: a one-byte dummy buffer, never read (w_bytes = 0)
      return ClMem(api_, api_->CreateBuffer(context_, CL_MEM_READ_ONLY, 1, nullptr, &err));
    }
    const bool aligned = reinterpret_cast<uintptr_t>(p) % 4 == 0;
    const cl_mem_flags flags = CL_MEM_READ_ONLY | (aligned && mode == CL_MEM_USE_HOST_PTR ? CL_MEM_USE_HOST_PTR : CL_MEM_COPY_HOST_PTR);
    return ClMem(api_, api_->CreateBuffer(context_, flags, static_cast<size_t>(bytes), const_cast<uint8_t*>(p), &err));
  }

  Error cl_fail(const char* what, cl_int err) const {
    return make_error(ErrorCode::unsupported, "", kNoOffset, fmt::format("opencl: {} failed: {}", what, cl_error_name(err)));
  }

  void init() const {
    std::lock_guard lock(init_mutex_);
    if (initialised_) return;
    const_cast<OpenClBackend*>(this)->initialise();
    initialised_ = true;
  }

  void initialise() {
    api_ = opencl_api(&why_);
    if (!api_) return;
    cl_uint n_platforms = 0;
    cl_int err = api_->GetPlatformIDs(0, nullptr, &n_platforms);
    if (err != CL_SUCCESS || n_platforms == 0) {
      why_ = err == CL_SUCCESS ? "no OpenCL platform (no ICD installed)" : "no OpenCL platform: clGetPlatformIDs returned " + cl_error_name(err);
      return;
    }
    const std::vector<cl_device_id> devices = all_devices(*api_);
    cl_device_id chosen = nullptr;
    used_index_ = -1;
    if (requested_ >= 0) {
      if (static_cast<size_t>(requested_) >= devices.size()) {
        why_ = fmt::format("no OpenCL device {} ({} found)", requested_, devices.size());
        return;
      }
      used_index_ = requested_;
    } else {
      // A GPU anywhere beats the first device of any kind.
      for (size_t i = 0; i < devices.size() && used_index_ < 0; ++i)
        if (info_value<cl_device_type>(*api_, devices[i], CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU) used_index_ = static_cast<int>(i);
      if (used_index_ < 0 && !devices.empty()) used_index_ = 0;
    }
    if (used_index_ >= 0) chosen = devices[static_cast<size_t>(used_index_)];
    if (!chosen) {
      why_ = "OpenCL platforms found, but no device";
      return;
    }
    device_ = describe(*api_, chosen);
    max_alloc_ = device_.max_alloc_bytes ? device_.max_alloc_bytes : (uint64_t{128} << 20);
    context_ = api_->CreateContext(nullptr, 1, &chosen, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) {
      why_ = "clCreateContext failed: " + cl_error_name(err);
      return;
    }
    queue_ = api_->CreateCommandQueue(context_, chosen, 0, &err);
    if (err != CL_SUCCESS) {
      why_ = "clCreateCommandQueue failed: " + cl_error_name(err);
      return;
    }
    // common.cl first: the helpers the other files use.
    std::vector<const char*> texts;
    std::vector<size_t> lengths;
    for (int pass = 0; pass < 2; ++pass)
      for (const auto& src : opencl_kernel_sources())
        if ((src.file == "common.cl") == (pass == 0)) {
          texts.push_back(src.text.data());
          lengths.push_back(src.text.size());
        }
    program_ = api_->CreateProgramWithSource(context_, static_cast<cl_uint>(texts.size()), texts.data(), lengths.data(), &err);
    if (err != CL_SUCCESS) {
      why_ = "clCreateProgramWithSource failed: " + cl_error_name(err);
      return;
    }
    err = api_->BuildProgram(program_, 1, &chosen, "-cl-mad-enable", nullptr, nullptr);
    if (err != CL_SUCCESS) {
      const std::string log = cl_string([&](size_t n, void* p, size_t* out) {
        return api_->GetProgramBuildInfo(program_, chosen, CL_PROGRAM_BUILD_LOG, n, p, out);
      });
      why_ = "kernel build failed: " + cl_error_name(err) + ": " + log.substr(0, 2000);
      return;
    }
    for (size_t i = 0; i < kClKernels.size(); ++i) {
      kernels_[i] = api_->CreateKernel(program_, kClKernels[i].kernel, &err);
      if (err != CL_SUCCESS) {
        why_ = fmt::format("clCreateKernel({}) failed: {}", kClKernels[i].kernel, cl_error_name(err));
        return;
      }
    }
    ready_ = true;
  }

  mutable std::mutex init_mutex_;   // guards initialised_ and the state initialise() fills
  mutable bool initialised_ = false;
  int requested_ = -1;               // select_opencl_device's index (-1: automatic)
  int used_index_ = -1;
  mutable std::mutex mutex_;
  const OpenClApi* api_ = nullptr;
  std::string why_;
  bool ready_ = false;
  OpenClDevice device_;
  uint64_t max_alloc_ = 0;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program program_ = nullptr;
  std::array<cl_kernel, kClKernels.size()> kernels_{};
  std::map<ResidentKey, Resident> resident_;   // weights kept on the device (mutex_)
  uint64_t use_clock_ = 0;
  std::atomic<uint64_t> uploads_{0};
};

OpenClBackend& instance() {
  static OpenClBackend b;
  return b;
}

}  // namespace

Backend& opencl_backend() { return instance(); }
uint64_t opencl_upload_count() { return instance().upload_count(); }
uint64_t opencl_cached_bytes() { return instance().cached_bytes(); }
// From the device list only: `auto` asks this for every run, and building the program (what
// availability() does) would cost every run on a machine whose only device is PoCL's CPU.
bool opencl_has_gpu() {
  std::string error;
  const OpenClApi* api = opencl_api(&error);
  if (!api) return false;
  const auto devices = all_devices(*api);
  auto is_gpu = [&](cl_device_id d) { return (info_value<cl_device_type>(*api, d, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU) != 0; };
  const int want = instance().requested();
  if (want >= 0) return static_cast<size_t>(want) < devices.size() && is_gpu(devices[static_cast<size_t>(want)]);
  return std::any_of(devices.begin(), devices.end(), is_gpu);
}
Status select_opencl_device(int index) { return instance().select(index); }
int selected_opencl_device() { return instance().requested(); }

bool opencl_enumerate(std::vector<OpenClPlatform>& out, std::string& error) {
  const OpenClApi* api = opencl_api(&error);
  if (!api) return false;
  cl_uint n = 0;
  cl_int err = api->GetPlatformIDs(0, nullptr, &n);
  if (err != CL_SUCCESS || n == 0) {
    error = err == CL_SUCCESS ? "no OpenCL platform (no ICD installed)" : "clGetPlatformIDs returned " + cl_error_name(err);
    return false;
  }
  std::vector<cl_platform_id> platforms(n);
  api->GetPlatformIDs(n, platforms.data(), nullptr);
  const int used = instance().used_index();
  int index = 0;
  for (cl_platform_id p : platforms) {
    OpenClPlatform plat;
    plat.name = platform_string(*api, p, CL_PLATFORM_NAME);
    plat.vendor = platform_string(*api, p, CL_PLATFORM_VENDOR);
    plat.version = platform_string(*api, p, CL_PLATFORM_VERSION);
    cl_uint nd = 0;
    err = api->GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd);
    if (err != CL_SUCCESS || nd == 0) {
      plat.error = err == CL_SUCCESS ? "no devices" : "clGetDeviceIDs returned " + cl_error_name(err);
    } else {
      std::vector<cl_device_id> devs(nd);
      api->GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devs.data(), nullptr);
      for (cl_device_id d : devs) {
        OpenClDevice dev = describe(*api, d);
        dev.index = index++;
        dev.used = dev.index == used;
        plat.devices.push_back(std::move(dev));
      }
    }
    out.push_back(std::move(plat));
  }
  return true;
}

}  // namespace akview::compute
