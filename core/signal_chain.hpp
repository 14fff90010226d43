// Handing a fault signal on to the handler that was installed before ours (the default action, or a
// sanitizer's): shared by core/fault_guard's SIGBUS handler and the remote mappings' SIGSEGV handler.
#pragma once

#include <csignal>

namespace akview {

// Calls `previous` for the signal where it is a handler; false where it is the default action or
// SIG_IGN (the caller then restores the default action itself). Async-signal-safe.
inline bool call_previous_handler(const struct sigaction& previous, int sig, siginfo_t* info, void* context) {
  if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(sig, info, context);
    return true;
  }
  if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
    return true;
  }
  return false;
}

}   // namespace akview
