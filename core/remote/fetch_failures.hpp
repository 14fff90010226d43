// What a read of a remote mapping gets when its bytes cannot be fetched, whichever mechanism serves
// its faults (fault_mapping.hpp: userfaultfd, or signals where that is refused): the registry of the
// threads inside a FetchFailureScope, which the fault server looks the faulting thread up in, and
// the error a guarded read that faulted reports.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>

#include "core/remote/fault_mapping.hpp"
#include "core/remote/remote_file.hpp"
#include "core/result.hpp"

namespace akview::remote {

// Which threads are inside a FetchFailureScope (innermost first).
class FaultScopes {
 public:
  static FaultScopes& get();
  void push(FetchFailureScope* scope);
  void pop(FetchFailureScope* scope);
  // Records `e` for thread `tid`'s innermost scope; false when it has none.
  bool record(pid_t tid, const Error& e);
  // Whether thread `tid`'s innermost scope has seen a failure already (its later faults need no try).
  bool failed(pid_t tid);

 private:
  std::mutex mutex_;
  std::map<pid_t, FetchFailureScope*> by_thread_;
};

// The error of a guarded read of `file` at `offset` that faulted because its bytes could not be
// fetched: the file's last failure (ErrorCode::changed for a file changed on the server, "cancelled"
// for a cancelled transfer, else ErrorCode::network).
Error unfetched_error(const RemoteFile& file, uint64_t offset);

}   // namespace akview::remote
