// KernelCopy (kernel_copy.hpp): pread from the mapped file when /proc/self/maps names an ordinary file
// whose device and inode match the one opened again, in a loop (a read may return fewer bytes), else
// process_vm_readv.
#include "core/kernel_copy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "core/mapped_file.hpp"

namespace akview {

KernelCopy::KernelCopy(const uint8_t* inside) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(inside);
  // A mapping made elsewhere (a remote file's) serves its bytes through its faults: never the file.
  if (auto where = locate_mapping(inside); where && where->hooks) return;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uintptr_t start = 0, end = 0;
    uint64_t offset = 0, inode = 0;
    unsigned major_dev = 0, minor_dev = 0;
    char perms[8] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &start, &end, perms,
                    &offset, &major_dev, &minor_dev, &inode, &path_at) < 7)
      continue;
    if (at < start || at >= end) continue;
    if (inode == 0 || path_at <= 0 || static_cast<size_t>(path_at) >= line.size() || line[path_at] != '/') break;
    const std::string path = line.substr(static_cast<size_t>(path_at));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == inode &&
        major(st.st_dev) == major_dev && minor(st.st_dev) == minor_dev) {
      fd_ = fd;
      start_ = start;
      end_ = end;
      offset_ = offset;
    } else if (fd >= 0) {
      ::close(fd);
    }
    break;
  }
}

KernelCopy::~KernelCopy() {
  if (fd_ >= 0) ::close(fd_);
}

bool KernelCopy::read(const uint8_t* p, size_t len, uint8_t* out) const {
  if (len == 0) return true;
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  if (fd_ >= 0 && at >= start_ && len <= end_ - at) {
    size_t done = 0;
    while (done < len) {
      const ssize_t n = ::pread(fd_, out + done, len - done, static_cast<off_t>(offset_ + (at - start_) + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;   // an error, or the file is shorter now: copy through the mapping
      done += static_cast<size_t>(n);
    }
    if (done == len) return true;
  }
  iovec local{out, len}, remote{const_cast<uint8_t*>(p), len};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

}   // namespace akview
