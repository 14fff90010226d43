// FetchFailureScope's registry and the error of an unfetched read (see fetch_failures.hpp).
#include "core/remote/fetch_failures.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <string>

namespace akview::remote {

FaultScopes& FaultScopes::get() {
  static FaultScopes* s = new FaultScopes();   // never destroyed: the fault servers use it
  return *s;
}

void FaultScopes::push(FetchFailureScope* scope) {
  std::lock_guard lock(mutex_);
  auto& top = by_thread_[scope->tid_];
  scope->outer_ = top;
  top = scope;
}

void FaultScopes::pop(FetchFailureScope* scope) {
  std::lock_guard lock(mutex_);
  if (scope->outer_) by_thread_[scope->tid_] = scope->outer_;
  else by_thread_.erase(scope->tid_);
}

bool FaultScopes::record(pid_t tid, const Error& e) {
  std::lock_guard lock(mutex_);
  auto it = by_thread_.find(tid);
  if (tid == 0 || it == by_thread_.end()) return false;
  std::lock_guard scope_lock(it->second->mutex_);
  if (!it->second->failure_) it->second->failure_ = e;
  return true;
}

bool FaultScopes::failed(pid_t tid) {
  std::lock_guard lock(mutex_);
  auto it = by_thread_.find(tid);
  if (tid == 0 || it == by_thread_.end()) return false;
  std::lock_guard scope_lock(it->second->mutex_);
  return it->second->failure_.has_value();
}

FetchFailureScope::FetchFailureScope() : tid_(static_cast<pid_t>(syscall(SYS_gettid))), outer_(nullptr) {
  FaultScopes::get().push(this);
}
FetchFailureScope::~FetchFailureScope() { FaultScopes::get().pop(this); }
std::optional<Error> FetchFailureScope::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

Error unfetched_error(const RemoteFile& file, uint64_t offset) {
  const std::string why = file.last_error();
  Error e = make_error(ErrorCode::network, file.identity().label, offset,
                       why.empty() ? "the bytes could not be fetched" : why);
  if (why.find("changed on the server") != std::string::npos) e.code = ErrorCode::changed;
  if (why.find(": cancelled") != std::string::npos) e.message = "cancelled";
  else if (!why.empty()) e.message = why;
  return e;
}

}   // namespace akview::remote
