// Read-only mmap of a whole file, and the registry of live mappings (see mapped_file.hpp).
#include "core/mapped_file.hpp"

#include <atomic>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include <fmt/format.h>

namespace akview {
namespace {

// One row per live mapping. Looked up only from ordinary code (fault_guard's pre-check, and after
// its signal handler has jumped back), never from the handler itself, so a mutex is fine.
struct RegistryRow {
  const uint8_t* begin;
  uint64_t size;
  int fd;
  std::string path;
  std::shared_ptr<MappingHooks> hooks;
};

FileProvider g_provider;

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<RegistryRow>& registry() {
  static std::vector<RegistryRow> rows;
  return rows;
}

void register_mapping(const uint8_t* begin, uint64_t size, int fd, const std::string& path,
                      std::shared_ptr<MappingHooks> hooks = nullptr) {
  std::lock_guard lock(registry_mutex());
  registry().push_back({begin, size, fd, path, std::move(hooks)});
}

void unregister_mapping(const uint8_t* begin) {
  std::lock_guard lock(registry_mutex());
  auto& rows = registry();
  std::erase_if(rows, [begin](const RegistryRow& r) { return r.begin == begin; });
}

}   // namespace

std::optional<MappedLocation> locate_mapping(const void* address) {
  const auto* p = static_cast<const uint8_t*>(address);
  std::lock_guard lock(registry_mutex());
  for (const RegistryRow& r : registry()) {
    // Compare as integers: the address may belong to another object entirely.
    const auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(r.begin);
    if (a < b || a - b >= r.size) continue;
    MappedLocation loc{r.path, a - b, r.size, r.size, r.hooks};
    struct stat st {};
    if (r.fd >= 0 && fstat(r.fd, &st) == 0) loc.current_size = static_cast<uint64_t>(st.st_size);
    return loc;
  }
  return std::nullopt;
}

void set_file_provider(FileProvider provider) { g_provider = provider; }

Status prepare_file_read(const std::string& path, uint64_t offset, uint64_t length) {
  return g_provider.prepare ? g_provider.prepare(path, offset, length) : Status{};
}

void MappedFile::release() {
  if (data_ && size_) {
    unregister_mapping(data_);
    if (!owner_) munmap(const_cast<uint8_t*>(data_), size_);
  }
  owner_.reset();
  if (fd_ >= 0) ::close(fd_);
  data_ = nullptr;
  size_ = 0;
  fd_ = -1;
}

MappedFile::~MappedFile() { release(); }

// A move keeps the mapping's address, so its registry row stays right as it is.
MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(other.data_),
      size_(other.size_),
      id_(other.id_),
      fd_(other.fd_),
      owner_(std::move(other.owner_)) {
  other.data_ = nullptr;
  other.size_ = 0;
  other.id_ = 0;
  other.fd_ = -1;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    data_ = other.data_;
    size_ = other.size_;
    id_ = other.id_;
    fd_ = other.fd_;
    owner_ = std::move(other.owner_);
    other.data_ = nullptr;
    other.size_ = 0;
    other.id_ = 0;
    other.fd_ = -1;
  }
  return *this;
}

MappedFile MappedFile::adopt(std::string path, const uint8_t* data, uint64_t size, int stat_fd,
                             std::shared_ptr<MappingHooks> owner) {
  static std::atomic<uint64_t> next_adopted{uint64_t{1} << 62};   // apart from open()'s ids
  MappedFile f;
  f.path_ = std::move(path);
  f.id_ = next_adopted.fetch_add(1, std::memory_order_relaxed);
  f.data_ = data;
  f.size_ = data ? size : 0;
  f.fd_ = stat_fd;
  f.owner_ = std::move(owner);
  if (f.data_ && f.size_) register_mapping(f.data_, f.size_, f.fd_, f.path_, f.owner_);
  return f;
}

Result<MappedFile> MappedFile::open(const std::string& path) {
  if (g_provider.map)
    if (auto provided = g_provider.map(path)) return std::move(*provided);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(ErrorCode::io, path, kNoOffset, fmt::format("cannot open: {}", std::strerror(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return make_error(ErrorCode::io, path, kNoOffset, fmt::format("cannot stat: {}", std::strerror(e)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(ErrorCode::io, path, kNoOffset, "not a regular file");
  }
  static std::atomic<uint64_t> next_id{1};
  MappedFile f;
  f.path_ = path;
  f.id_ = next_id.fetch_add(1, std::memory_order_relaxed);
  f.size_ = static_cast<uint64_t>(st.st_size);
  if (f.size_ == 0) {
    ::close(fd);
    return f;
  }
  void* p = mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    int e = errno;
    ::close(fd);
    return make_error(ErrorCode::io, path, kNoOffset, fmt::format("cannot map: {}", std::strerror(e)));
  }
  f.data_ = static_cast<const uint8_t*>(p);
  f.fd_ = fd;
  register_mapping(f.data_, f.size_, fd, path);
  return f;
}

std::span<const uint8_t> MappedFile::range(uint64_t offset, uint64_t length) const {
  if (offset > size_ || length > size_ - offset) return {};
  return {data_ + offset, static_cast<size_t>(length)};
}

void MappedFile::release_pages() const {
  // The mapping is private and never written, so its pages are clean copies of the page cache (or,
  // for a remote file, of the cache's file): dropping them loses nothing, a later read faults them back in.
  if (data_ && size_ > 0) ::madvise(const_cast<uint8_t*>(data_), static_cast<size_t>(size_), MADV_DONTNEED);
}

}   // namespace akview
