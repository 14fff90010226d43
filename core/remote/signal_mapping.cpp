// Remote mappings served by a SIGSEGV handler and a server thread (see signal_mapping.hpp).
#include "core/remote/signal_mapping.hpp"

#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/remote/chunk_flags.hpp"
#include "core/remote/fetch_failures.hpp"
#include "core/signal_chain.hpp"

namespace akview::remote {
namespace {

uint64_t page_size() {
  static const uint64_t p = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return p;
}
uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// The address ranges the handler answers for. Constant-initialised atomics, read without a lock by
// the handler: a slot is published by storing `end`, then `begin`; withdrawn by clearing `begin`.
constexpr size_t kMaxRanges = 16384;
struct RangeSlot {
  std::atomic<uint64_t> begin{0};
  std::atomic<uint64_t> end{0};
};
RangeSlot g_ranges[kMaxRanges];
std::atomic<size_t> g_slots_used{0};   // slots at and past this one were never used
std::mutex g_slots_mutex;              // claims and releases (ordinary code only)

// What the handler asks the server, and the answers it waits for (a futex word on its stack).
enum Answer : uint32_t {
  kWaiting = 0,
  kServed = 1,    // the page was made readable (bytes, zeros, or an empty file that raises SIGBUS)
  kPresent = 2,   // nothing to do: the page was readable already (another thread's fault) or is not ours
  kRefused = 3,   // the page could not be mapped: the fault goes on to the previous handler
};
struct Request {
  uint64_t address;
  pid_t tid;
  std::atomic<uint32_t>* answer;
};
static_assert(sizeof(Request) <= PIPE_BUF, "one write() of a request is atomic");
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "the answer is a futex word");

std::atomic<int> g_request_fd{-1};   // the pipe's write end; -1 until the server runs
std::atomic<pid_t> g_server_tid{0};
struct sigaction g_previous {};   // what handled SIGSEGV before (the default action, or ASan's)
// The address of this thread's last fault answered kPresent: the same fault again is not a race
// with another thread but a write to the read-only mapping, which goes on to the previous handler.
thread_local uint64_t t_present_address = 0;

bool in_remote_range(uint64_t a) {
  const size_t n = g_slots_used.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t b = g_ranges[i].begin.load(std::memory_order_acquire);
    if (b != 0 && a >= b && a < g_ranges[i].end.load(std::memory_order_acquire)) return true;
  }
  return false;
}

bool write_request(int fd, const Request& r) {
  for (;;) {
    const long n = syscall(SYS_write, fd, &r, sizeof r);
    if (n == static_cast<long>(sizeof r)) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

void on_sigsegv(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const int fd = g_request_fd.load(std::memory_order_acquire);
  if (info != nullptr && info->si_code == SEGV_ACCERR && fd >= 0) {
    const auto address = reinterpret_cast<uint64_t>(info->si_addr);
    const auto tid = static_cast<pid_t>(syscall(SYS_gettid));
    if (tid != g_server_tid.load(std::memory_order_relaxed) && in_remote_range(address) &&
        t_present_address != address) {
      std::atomic<uint32_t> answer{kWaiting};
      if (write_request(fd, Request{address, tid, &answer})) {
        while (answer.load(std::memory_order_acquire) == kWaiting)
          syscall(SYS_futex, reinterpret_cast<uint32_t*>(&answer), FUTEX_WAIT_PRIVATE, kWaiting, nullptr, nullptr, 0);
        const uint32_t a = answer.load(std::memory_order_acquire);
        if (a == kServed || a == kPresent) {
          t_present_address = a == kPresent ? address : 0;
          errno = saved_errno;
          return;   // the access restarts
        }
      }
    }
    t_present_address = 0;
  }
  // Not ours: whoever handled SIGSEGV before, else the default action.
  errno = saved_errno;
  if (call_previous_handler(g_previous, sig, info, context)) return;
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGSEGV, &dfl, nullptr);
  // A fault restarts into the default action (the process ends at the faulting access); a SIGSEGV
  // sent by someone is sent again, delivered when the handler returns.
  if (info == nullptr || info->si_code <= 0) raise(SIGSEGV);
}

class SignalMapping;

// The mappings the server serves (weak: a fault being served holds its mapping alive).
struct Mappings {
  std::mutex mutex;
  std::vector<std::weak_ptr<SignalMapping>> list;
};
Mappings& mappings() {
  static Mappings* m = new Mappings();   // never destroyed: the server thread outlives static teardown
  return *m;
}
std::shared_ptr<SignalMapping> find_mapping(uint64_t address);

// One remote file's mapping; the MappedFile's hooks.
class SignalMapping final : public MappingHooks {
 public:
  SignalMapping(std::shared_ptr<RemoteFile> file, uint8_t* base, uint64_t length)
      : file_(std::move(file)), base_(base), length_(length), chunks_(length) {}
  ~SignalMapping() override {
    release_slot();
    {
      std::lock_guard lock(mappings().mutex);
      std::erase_if(mappings().list, [](const std::weak_ptr<SignalMapping>& w) { return w.expired(); });
    }
    munmap(base_, length_);
    if (empty_fd_ >= 0) ::close(empty_fd_);
  }
  uint64_t begin() const { return reinterpret_cast<uint64_t>(base_); }
  uint64_t end() const { return begin() + length_; }

  // Publishes the range to the handler; false when the table is full.
  bool claim_slot() {
    std::lock_guard lock(g_slots_mutex);
    for (size_t i = 0; i < kMaxRanges; ++i) {
      if (g_ranges[i].begin.load(std::memory_order_relaxed) != 0) continue;
      g_ranges[i].end.store(end(), std::memory_order_release);
      g_ranges[i].begin.store(begin(), std::memory_order_release);
      if (g_slots_used.load(std::memory_order_relaxed) < i + 1) g_slots_used.store(i + 1, std::memory_order_release);
      slot_ = i;
      return true;
    }
    return false;
  }

  // Serves a fault of thread `tid` at `offset` (the server thread).
  Answer serve(uint64_t offset, pid_t tid) {
    if (present(offset)) return kPresent;
    if (FaultScopes::get().failed(tid))   // its open failed already: no more tries
      return zero_page(offset) ? kServed : kRefused;
    auto span = file_->fetch_for_read(offset);
    if (!span) {
      if (FaultScopes::get().record(tid, span.error())) return zero_page(offset) ? kServed : kRefused;
      return poison(offset) ? kServed : kRefused;
    }
    return install(span->first, span->second) ? kServed : kRefused;
  }

  Status prepare(uint64_t offset, uint64_t length) override {
    restore_poisoned();
    AKV_TRY(file_->ensure(offset, length));
    // Mapped now, so a system call handed these bytes after the check reads them.
    const uint64_t end = std::min(file_->size(), offset + length);
    uint64_t c = offset / kChunkBytes;
    while (c * kChunkBytes < end) {
      uint64_t e = c;
      while (e * kChunkBytes < end && file_->has(e * kChunkBytes, 1)) ++e;
      if (e > c) install(c * kChunkBytes, std::min(file_->size(), e * kChunkBytes));
      c = e + 1;
    }
    return {};
  }

  Error fault_error(uint64_t offset) override {
    Error e = unfetched_error(*file_, offset);
    restore_poisoned();
    return e;
  }

 private:
  enum State : uint8_t { kAbsent, kInstalled, kPoisoned };   // kAbsent is 0: what ChunkFlags starts at

  void release_slot() {
    std::lock_guard lock(g_slots_mutex);
    if (slot_ == kNoSlot) return;
    g_ranges[slot_].begin.store(0, std::memory_order_release);
    g_ranges[slot_].end.store(0, std::memory_order_release);
    slot_ = kNoSlot;
  }

  bool present(uint64_t offset) {
    std::lock_guard lock(mutex_);
    return chunks_[offset / kChunkBytes] != kAbsent || zero_pages_.count(offset / page_size()) != 0;
  }

  // The stand-in's bytes [b, e) (whole fetched chunks; e may be the file's end) mapped over the
  // reservation, read-only, in one call: other threads see each page without access or whole.
  bool install(uint64_t b, uint64_t e) {
    const uint64_t mapped_end = std::min(length_, round_up(e, page_size()));
    std::lock_guard lock(mutex_);
    bool all = true;
    for (uint64_t c = b / kChunkBytes; c * kChunkBytes < mapped_end; ++c) all = all && chunks_[c] == kInstalled;
    if (all) return true;
    if (mmap(base_ + b, mapped_end - b, PROT_READ, MAP_PRIVATE | MAP_FIXED, file_->fd(), static_cast<off_t>(b)) ==
        MAP_FAILED)
      return false;
    for (uint64_t c = b / kChunkBytes; c * kChunkBytes < mapped_end; ++c) chunks_[c] = kInstalled;
    zero_pages_.erase(zero_pages_.lower_bound(b / page_size()), zero_pages_.lower_bound(mapped_end / page_size()));
    return true;
  }

  // The faulting page, zeros: for a reader in a FetchFailureScope, whose open fails anyway.
  bool zero_page(uint64_t offset) {
    const uint64_t page = offset / page_size() * page_size();
    std::lock_guard lock(mutex_);
    if (mmap(base_ + page, page_size(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
      return false;
    zero_pages_.insert(offset / page_size());
    return true;
  }

  // A chunk whose bytes cannot be had: an empty file mapped over it makes its reads raise SIGBUS.
  bool poison(uint64_t offset) {
    const uint64_t b = offset / kChunkBytes * kChunkBytes;
    const uint64_t e = std::min(length_, round_up(std::min(b + kChunkBytes, file_->size()), page_size()));
    std::lock_guard lock(mutex_);
    if (empty_fd_ < 0) empty_fd_ = memfd_create("akview-unfetched", MFD_CLOEXEC);
    if (empty_fd_ < 0 || mmap(base_ + b, e - b, PROT_READ, MAP_SHARED | MAP_FIXED, empty_fd_, 0) == MAP_FAILED)
      return false;
    chunks_[b / kChunkBytes] = kPoisoned;
    poisoned_.emplace_back(b, e);
    return true;
  }

  // Chunks poisoned by a failed fetch become fetchable again (after the reader got its error).
  void restore_poisoned() {
    std::lock_guard lock(mutex_);
    for (auto [b, e] : poisoned_) {
      if (chunks_[b / kChunkBytes] != kPoisoned) continue;   // fetched and installed since
      mmap(base_ + b, e - b, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
      chunks_[b / kChunkBytes] = kAbsent;
    }
    poisoned_.clear();
  }

  static constexpr size_t kNoSlot = ~size_t{0};
  std::shared_ptr<RemoteFile> file_;
  uint8_t* base_;
  uint64_t length_;
  size_t slot_ = kNoSlot;
  std::mutex mutex_;                // the state below and the mmap calls that change it
  ChunkFlags chunks_;               // a State a chunk (kAbsent: 0)
  std::set<uint64_t> zero_pages_;   // page numbers mapped as zeros
  std::vector<std::pair<uint64_t, uint64_t>> poisoned_;
  int empty_fd_ = -1;
};

std::shared_ptr<SignalMapping> find_mapping(uint64_t address) {
  std::lock_guard lock(mappings().mutex);
  for (const auto& w : mappings().list)
    if (auto m = w.lock(); m && address >= m->begin() && address < m->end()) return m;
  return nullptr;
}

void serve(int read_fd) {
  g_server_tid.store(static_cast<pid_t>(syscall(SYS_gettid)), std::memory_order_relaxed);
  for (;;) {
    Request r{};
    size_t got = 0;
    while (got < sizeof r) {
      const ssize_t n = read(read_fd, reinterpret_cast<char*>(&r) + got, sizeof r - got);
      if (n > 0) got += static_cast<size_t>(n);
      else if (n < 0 && errno != EINTR) return;   // cannot happen: the write end is never closed
    }
    Answer a = kPresent;   // a mapping gone meanwhile: the retry finds no range and goes on
    if (const std::shared_ptr<SignalMapping> m = find_mapping(r.address)) a = m->serve(r.address - m->begin(), r.tid);
    r.answer->store(a, std::memory_order_release);
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(r.answer), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  }
}

// The pipe, the server thread and the handler, once; the reason where they cannot be had.
const std::string& start() {
  static const std::string* why = [] {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
      return new std::string(fmt::format("cannot make the fault pipe: {}", std::strerror(errno)));
    const int read_fd = p[0];
    std::thread([read_fd] { serve(read_fd); }).detach();
    struct sigaction sa {};
    sa.sa_sigaction = on_sigsegv;
    // SA_ONSTACK: an alternate stack, where one is set up (ASan does), serves a fault that hit a
    // stack overflow, which goes on to the previous handler.
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &g_previous) != 0)
      return new std::string(fmt::format("cannot handle SIGSEGV: {}", std::strerror(errno)));
    g_request_fd.store(p[1], std::memory_order_release);
    return new std::string();
  }();
  return *why;
}

}   // namespace

Result<MappedFile> map_by_signals(std::shared_ptr<RemoteFile> file, const std::string& display_path) {
  if (const std::string& why = start(); !why.empty())
    return make_error(ErrorCode::unsupported, display_path, kNoOffset,
                      why + ": remote models need it to read bytes as they are touched");
  if (file->size() == 0) return MappedFile::adopt(display_path, nullptr, 0, -1, nullptr);
  const uint64_t length = round_up(file->size(), page_size());
  void* p = mmap(nullptr, length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return make_error(ErrorCode::io, display_path, kNoOffset, fmt::format("cannot map: {}", std::strerror(errno)));
  auto mapping = std::make_shared<SignalMapping>(file, static_cast<uint8_t*>(p), length);
  {
    std::lock_guard lock(mappings().mutex);
    mappings().list.push_back(mapping);
  }
  if (!mapping->claim_slot())
    return make_error(ErrorCode::unsupported, display_path, kNoOffset,
                      fmt::format("more than {} remote files mapped at once", kMaxRanges));
  const int stat_fd = fcntl(file->fd(), F_DUPFD_CLOEXEC, 0);
  return MappedFile::adopt(display_path, static_cast<const uint8_t*>(p), file->size(), stat_fd, mapping);
}

}   // namespace akview::remote
