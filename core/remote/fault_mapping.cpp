// userfaultfd behind remote mappings, and the choice between it and signals (see fault_mapping.hpp).
#include "core/remote/fault_mapping.hpp"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/remote/chunk_flags.hpp"
#include "core/remote/fetch_failures.hpp"
#include "core/remote/http.hpp"
#include "core/remote/signal_mapping.hpp"

namespace akview::remote {
namespace {

constexpr uint64_t kMaxCopyBytes = 16ull << 20;

uint64_t page_size() {
  static const uint64_t p = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return p;
}
uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

class Mapping;

}   // namespace

namespace {

// The process's one userfaultfd and the thread that serves its faults.
class FaultServer {
 public:
  static FaultServer& get() {
    static FaultServer* s = new FaultServer();   // never destroyed: the thread outlives static teardown
    return *s;
  }
  const std::string& unavailable() const { return unavailable_; }
  int fd() const { return fd_; }
  void add(const std::shared_ptr<Mapping>& m) {
    std::lock_guard lock(mutex_);
    mappings_.push_back(m);
  }
  // Called by a mapping's destructor: by then its entry has expired (and find() skips it).
  void remove_expired() {
    std::lock_guard lock(mutex_);
    std::erase_if(mappings_, [](const std::weak_ptr<Mapping>& w) { return w.expired(); });
  }
  // Registers [addr, addr + len) for missing-page faults.
  bool register_range(uint8_t* addr, uint64_t len) {
    uffdio_register reg{};
    reg.range.start = reinterpret_cast<uint64_t>(addr);
    reg.range.len = len;
    reg.mode = UFFDIO_REGISTER_MODE_MISSING;
    return ioctl(fd_, UFFDIO_REGISTER, &reg) == 0;
  }

 private:
  FaultServer() {
    // As root (or where vm.unprivileged_userfaultfd allows it) every fault; else user-mode faults
    // only, which is what akview's reads are.
    fd_ = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
    if (fd_ < 0) fd_ = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | 1 /* UFFD_USER_MODE_ONLY */));
    if (fd_ < 0) {
      unavailable_ = fmt::format("userfaultfd is not available here ({})", std::strerror(errno));
      return;
    }
    uffdio_api api{};
    api.api = UFFD_API;
    api.features = UFFD_FEATURE_THREAD_ID;   // the faulting thread, for FetchFailureScope
    bool agreed = ioctl(fd_, UFFDIO_API, &api) == 0;
    if (!agreed) {
      // A kernel without the feature refuses the handshake, and an fd takes one handshake only.
      ::close(fd_);
      fd_ = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
      if (fd_ < 0)
        fd_ = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | 1 /* UFFD_USER_MODE_ONLY */));
      api = uffdio_api{};
      api.api = UFFD_API;
      agreed = fd_ >= 0 && ioctl(fd_, UFFDIO_API, &api) == 0;
    }
    if (!agreed) {
      unavailable_ = fmt::format("userfaultfd refused its API handshake ({})", std::strerror(errno));
      if (fd_ >= 0) ::close(fd_);
      fd_ = -1;
      return;
    }
    std::thread([this] { serve(); }).detach();
  }
  void serve();
  std::shared_ptr<Mapping> find(uint64_t address);

  int fd_ = -1;
  std::string unavailable_;
  std::mutex mutex_;
  // Weak: a fault being served holds its mapping alive (find() locks it), so a mapping dropped by
  // its MappedFile meanwhile is freed after the fault, not under it.
  std::vector<std::weak_ptr<Mapping>> mappings_;
};

// One remote file's mapping; the MappedFile's hooks.
class Mapping final : public MappingHooks {
 public:
  Mapping(std::shared_ptr<RemoteFile> file, uint8_t* base, uint64_t length)
      : file_(std::move(file)), base_(base), length_(length), installed_(length) {}
  ~Mapping() override {
    FaultServer::get().remove_expired();
    munmap(base_, length_);
  }
  uint64_t begin() const { return reinterpret_cast<uint64_t>(base_); }
  uint64_t end() const { return begin() + length_; }
  RemoteFile& file() { return *file_; }

  // Serves a fault of thread `tid` at `offset`: fetch, then copy what was fetched from it on into
  // the mapping. A failure is zeros for a thread in a FetchFailureScope, SIGBUS for any other.
  void serve(uint64_t offset, pid_t tid) {
    if (FaultScopes::get().failed(tid)) {   // its open failed already: no more tries
      zero_page(offset);
      return;
    }
    auto span = file_->fetch_for_read(offset);
    if (!span) {
      if (FaultScopes::get().record(tid, span.error())) zero_page(offset);
      else poison(offset);
      return;
    }
    if (install(span->first, span->second)) return;
    // Where the stand-in cannot be mapped (the process is out of mappings): copied.
    // From the faulting page on (readers go forward: a header parse, a tensor's rows), at most
    // kMaxCopyBytes. Pages before it were copied by earlier faults, or are read less often than
    // they would cost: each page already present is one more failed UFFDIO_COPY (EEXIST).
    const uint64_t page = offset / page_size() * page_size();
    const uint64_t b = page;
    const uint64_t e = std::min({length_, round_up(span->second, page_size()), b + kMaxCopyBytes});
    // One buffer for every mapping (only the server thread serves faults), grown to the largest
    // copy, never freed (the thread outlives static teardown); not zeroed: pread fills it, and the
    // tail past the file's end is zeroed here.
    static uint8_t* buffer = nullptr;
    static uint64_t buffer_bytes = 0;
    if (buffer_bytes < e - b) {
      delete[] buffer;
      buffer = new uint8_t[e - b];
      buffer_bytes = e - b;
    }
    const uint64_t file_end = std::min(e, file_->size());
    std::memset(buffer + (file_end - b), 0, e - file_end);
    uint64_t done = 0;
    while (b + done < file_end) {
      ssize_t n = pread(file_->fd(), buffer + done, file_end - b - done, static_cast<off_t>(b + done));
      if (n <= 0) break;
      done += static_cast<uint64_t>(n);
    }
    if (b + done < file_end) {
      Error e = make_error(ErrorCode::io, file_->standin_path(), b + done,
                           fmt::format("cannot read the cache file: {}", std::strerror(errno)));
      if (FaultScopes::get().record(tid, e)) zero_page(offset);
      else poison(offset);
      return;
    }
    copy(buffer, b, e);
  }

  // The stand-in's fetched bytes [b, e) (whole chunks; e may be the file's end) mapped over the
  // reservation, read-only, with one mmap(MAP_FIXED), its pages filled in at once (MAP_POPULATE):
  // the page cache's pages, so no copy of them and no page of memory of their own, and a thread
  // sees each page either missing (it faults, and waits) or whole. Then every thread waiting on a
  // page of the range is woken; the mapped range is no longer watched by userfaultfd, so its
  // pages fault back from the cache file after release_pages. False where the mapping failed (the
  // reservation is restored and the caller copies instead).
  bool install(uint64_t b, uint64_t e) {
    const uint64_t mapped_end = std::min(length_, round_up(e, page_size()));
    {
      std::lock_guard lock(mutex_);
      bool all = true;
      for (uint64_t c = b / kChunkBytes; c * kChunkBytes < mapped_end; ++c) all = all && installed_[c];
      if (!all) {
        if (mmap(base_ + b, mapped_end - b, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, file_->fd(),
                 static_cast<off_t>(b)) == MAP_FAILED) {
          // A failed MAP_FIXED may have unmapped the range: the reservation again, watched again.
          mmap(base_ + b, mapped_end - b, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
          FaultServer::get().register_range(base_ + b, mapped_end - b);
          return false;
        }
        for (uint64_t c = b / kChunkBytes; c * kChunkBytes < mapped_end; ++c) installed_[c] = 1;
      }
    }
    uffdio_range wake{begin() + b, mapped_end - b};
    ioctl(FaultServer::get().fd(), UFFDIO_WAKE, &wake);
    return true;
  }

  // Pages of [b, e) that are already present are skipped (EEXIST); the others are filled.
  void copy(const uint8_t* from, uint64_t b, uint64_t e) {
    uint64_t at = b;
    while (at < e) {
      uffdio_copy c{};
      c.dst = begin() + at;
      c.src = reinterpret_cast<uint64_t>(from + (at - b));
      c.len = e - at;
      c.mode = 0;
      if (ioctl(FaultServer::get().fd(), UFFDIO_COPY, &c) == 0) return;
      if (c.copy > 0) {
        at += static_cast<uint64_t>(c.copy);
        continue;
      }
      if (errno == EAGAIN) continue;
      if (errno == EEXIST || c.copy == -EEXIST) {   // that page is there already: go on after it
        at += page_size();
        continue;
      }
      return;   // the mapping went away (ENOENT / ESRCH): nothing to wake
    }
  }

  // The faulting page, zeros: for a reader in a FetchFailureScope, whose open fails anyway.
  void zero_page(uint64_t offset) {
    uffdio_zeropage z{};
    z.range.start = begin() + offset / page_size() * page_size();
    z.range.len = page_size();
    while (ioctl(FaultServer::get().fd(), UFFDIO_ZEROPAGE, &z) != 0 && errno == EAGAIN) z.zeropage = 0;
  }

  // A chunk whose bytes cannot be had: an empty file mapped over it makes its reads raise SIGBUS.
  void poison(uint64_t offset) {
    const uint64_t b = offset / kChunkBytes * kChunkBytes;
    const uint64_t e = std::min(length_, round_up(std::min(b + kChunkBytes, file_->size()), page_size()));
    std::lock_guard lock(mutex_);
    if (empty_fd_ < 0) empty_fd_ = memfd_create("akview-unfetched", MFD_CLOEXEC);
    if (empty_fd_ >= 0) mmap(base_ + b, e - b, PROT_READ, MAP_SHARED | MAP_FIXED, empty_fd_, 0);
    poisoned_.emplace_back(b, e);
    installed_[b / kChunkBytes] = 0;
    uffdio_range wake{begin() + b, e - b};
    ioctl(FaultServer::get().fd(), UFFDIO_WAKE, &wake);
  }

  Status prepare(uint64_t offset, uint64_t length) override {
    restore_poisoned();
    return file_->ensure(offset, length);
  }

  Error fault_error(uint64_t offset) override {
    Error e = unfetched_error(*file_, offset);
    restore_poisoned();
    return e;
  }

  // Chunks poisoned by a failed fetch become fetchable again (after the reader got its error).
  void restore_poisoned() {
    std::lock_guard lock(mutex_);
    for (auto [b, e] : poisoned_) {
      for (uint64_t c = b / kChunkBytes; c * kChunkBytes < e; ++c) installed_[c] = 0;
      mmap(base_ + b, e - b, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
      FaultServer::get().register_range(base_ + b, e - b);
    }
    poisoned_.clear();
  }

 private:
  std::shared_ptr<RemoteFile> file_;
  uint8_t* base_;
  uint64_t length_;
  std::mutex mutex_;
  int empty_fd_ = -1;
  std::vector<std::pair<uint64_t, uint64_t>> poisoned_;
  ChunkFlags installed_;   // per chunk: the stand-in is mapped there (install)
};

std::shared_ptr<Mapping> FaultServer::find(uint64_t address) {
  std::lock_guard lock(mutex_);
  for (const auto& w : mappings_)
    if (auto m = w.lock(); m && address >= m->begin() && address < m->end()) return m;
  return nullptr;
}

void FaultServer::serve() {
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, -1) <= 0) continue;
    uffd_msg msg{};
    ssize_t n = read(fd_, &msg, sizeof msg);
    if (n != static_cast<ssize_t>(sizeof msg) || msg.event != UFFD_EVENT_PAGEFAULT) continue;
    const uint64_t address = msg.arg.pagefault.address;
    const std::shared_ptr<Mapping> m = find(address);
    if (!m) {   // raced with an unmap: wake whoever waits, the retry finds no mapping
      uffdio_range wake{address / page_size() * page_size(), page_size()};
      ioctl(fd_, UFFDIO_WAKE, &wake);
      continue;
    }
    m->serve(address - m->begin(), static_cast<pid_t>(msg.arg.pagefault.feat.ptid));
  }
}

}   // namespace

namespace {

// userfaultfd's mapping of `file`; nullopt where userfaultfd is not to be had (`why` says why).
std::optional<Result<MappedFile>> map_by_userfaultfd(const std::shared_ptr<RemoteFile>& file,
                                                     const std::string& display_path, std::string& why) {
  FaultServer& server = FaultServer::get();
  if (!server.unavailable().empty()) {
    why = server.unavailable();
    return std::nullopt;
  }
  const uint64_t length = round_up(file->size(), page_size());
  void* p = mmap(nullptr, length, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return make_error(ErrorCode::io, display_path, kNoOffset, fmt::format("cannot map: {}", std::strerror(errno)));
  auto* base = static_cast<uint8_t*>(p);
  auto mapping = std::make_shared<Mapping>(file, base, length);
  if (!server.register_range(base, length)) {
    why = fmt::format("userfaultfd cannot watch the mapping ({})", std::strerror(errno));
    return std::nullopt;   // the mapping is unmapped with `mapping`
  }
  server.add(mapping);
  const int stat_fd = fcntl(file->fd(), F_DUPFD_CLOEXEC, 0);
  return MappedFile::adopt(display_path, base, file->size(), stat_fd, mapping);
}

// AKVIEW_REMOTE_FAULTS: "auto" (or unset), "userfaultfd" or "signals"; "" for any other value.
std::string fault_mechanism_asked() {
  const char* v = std::getenv("AKVIEW_REMOTE_FAULTS");
  const std::string asked = v && *v ? v : "auto";
  return asked == "auto" || asked == "userfaultfd" || asked == "signals" ? asked : "";
}

// Says once, in AKVIEW_HTTP_TRACE's lines, which mechanism serves remote mappings.
void trace_mechanism(const std::string& what) {
  static std::once_flag once;
  std::call_once(once, [&] { trace_phase("remote mappings: " + what); });
}

}   // namespace

Result<MappedFile> map_remote_file(std::shared_ptr<RemoteFile> file, const std::string& display_path) {
  const std::string asked = fault_mechanism_asked();
  if (asked.empty())
    return make_error(ErrorCode::unsupported, display_path, kNoOffset,
                      "AKVIEW_REMOTE_FAULTS must be auto, userfaultfd or signals");
  if (file->size() == 0) return MappedFile::adopt(display_path, nullptr, 0, -1, nullptr);
  std::string why;
  if (asked != "signals") {
    if (auto mapped = map_by_userfaultfd(file, display_path, why)) {
      trace_mechanism("userfaultfd");
      return std::move(*mapped);
    }
    if (asked == "userfaultfd")
      return make_error(ErrorCode::unsupported, display_path, kNoOffset, why + " (AKVIEW_REMOTE_FAULTS=userfaultfd)");
  }
  trace_mechanism(asked == "signals" ? "signals (AKVIEW_REMOTE_FAULTS=signals)" : "signals (" + why + ")");
  return map_by_signals(std::move(file), display_path);
}

}   // namespace akview::remote
