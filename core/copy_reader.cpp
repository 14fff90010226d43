// CopyReader: one read-only descriptor per file, pread in a loop (a read may return fewer bytes).
#include "core/copy_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "core/mapped_file.hpp"

namespace akview {

CopyReader::CopyReader(const std::vector<std::string>& paths) : paths_(paths) {
  fds_.reserve(paths.size());
  for (const std::string& p : paths) fds_.push_back(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
}

CopyReader::~CopyReader() {
  for (int fd : fds_)
    if (fd >= 0) ::close(fd);
}

bool CopyReader::read(size_t file, uint64_t offset, std::span<uint8_t> out) const {
  if (file >= fds_.size() || fds_[file] < 0) return false;
  if (!prepare_file_read(paths_[file], offset, out.size()).ok()) return false;
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fds_[file], out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}   // namespace akview
