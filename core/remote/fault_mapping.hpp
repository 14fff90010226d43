// A remote file mapped into memory like a local one, its bytes fetched when they are first touched.
//
// The mapping is anonymous memory registered with userfaultfd (Linux): the first read of a page
// that holds nothing stops the reading thread and wakes one handler thread, which fetches the
// chunks the read-ahead policy picks (RemoteFile::fetch_for_read), or finds them in the cache
// when an earlier run fetched them, and maps the cache file's fetched bytes over those chunks
// (mmap(MAP_FIXED), as signal_mapping.hpp does: the page cache's pages, no copy; UFFDIO_COPY where
// the mapping fails), then wakes the reader, which goes on. So every
// format opener, decoder, pane and command reads a remote model through the pointers it reads a
// local one through, and only the bytes it touches cross the network.
//
// A fetch that fails (the network, a file changed on the server, a cancelled transfer) cannot hand
// its reader an error: the handler maps an empty file over the chunk, so the read raises SIGBUS,
// which core/fault_guard turns into the fetch's error on guarded reads (the hooks in
// mapped_file.hpp give its message and make the chunk fetchable again). Reads that core checks
// before they run (check_mapped_range: compute, decoders, copies) fetch their whole range first,
// in parallel requests, and fail cleanly. Reads that nothing guards — a format's header parse at
// open, which also leaves names and metadata pointing into the mapping — run inside a
// FetchFailureScope: there a fetch that fails fills the faulting page with zeros instead, the
// scope keeps the fetch's error, and the open returns that error (the model it parsed from zeros,
// with its mappings, is thrown away). So a header that cannot be fetched is a one-line error, and
// a model that opened has every header page it read in its mappings.
//
// Where userfaultfd is refused (Docker's default seccomp profile blocks the call; some kernels and
// sysctls refuse it), signals serve the same faults (signal_mapping.hpp): the mapping is reserved
// without access, a SIGSEGV handler hands a read of a page that holds nothing to a server thread,
// which fetches by the same policy and maps the fetched bytes of the cache file over the chunks, and
// the read restarts; failures end as above (SIGBUS outside a scope, zeros and the scope's error in
// one). AKVIEW_REMOTE_FAULTS picks: "auto" (the default: userfaultfd where it works, else signals),
// "userfaultfd" (an error where it is refused) or "signals"; AKVIEW_HTTP_TRACE=1 says which serves.
// Either way the kernel itself (a system call handed a pointer into the mapping: process_vm_readv,
// write) cannot wait for a fetch: pages nothing has read yet give it EFAULT, as userfaultfd's
// user-mode-only variant does. Reads that core checks first (check_mapped_range) are made present
// in the mapping by the check under signals, so a system call after the check sees the bytes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/mapped_file.hpp"
#include "core/remote/remote_file.hpp"
#include "core/result.hpp"

namespace akview::remote {

// The MappedFile of a remote file: reads fetch on first touch (see above).
Result<MappedFile> map_remote_file(std::shared_ptr<RemoteFile> file, const std::string& display_path);

// While one lives, this thread's reads of remote mappings whose bytes cannot be fetched read zeros
// and are recorded (see above); scopes nest (the innermost records). Faults of other threads are
// not affected. Where the kernel cannot name the faulting thread (UFFD_FEATURE_THREAD_ID, Linux
// 4.14), such reads raise SIGBUS as outside a scope.
class FetchFailureScope {
 public:
  FetchFailureScope();
  ~FetchFailureScope();
  FetchFailureScope(const FetchFailureScope&) = delete;
  FetchFailureScope& operator=(const FetchFailureScope&) = delete;
  // The first fetch that failed in the scope, if one did.
  std::optional<Error> failure() const;
  // `result`, or the scope's failure where a fetch failed (what was read then was zeros).
  template <typename T>
  Result<T> checked(Result<T> result) const {
    if (auto f = failure()) return *f;
    return result;
  }
  Status checked(Status status) const {
    if (auto f = failure()) return *f;
    return status;
  }

 private:
  friend class FaultScopes;
  pid_t tid_;
  FetchFailureScope* outer_;
  mutable std::mutex mutex_;
  std::optional<Error> failure_;
};

}   // namespace akview::remote
