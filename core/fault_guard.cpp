// The per-thread SIGBUS guard and the size pre-check (see fault_guard.hpp).
#include "core/fault_guard.hpp"

#include <algorithm>
#include <atomic>
#include <csetjmp>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "core/mapped_file.hpp"
#include "core/signal_chain.hpp"

namespace akview {
namespace {

// Constant-initialised thread-local PODs: safe to touch from the signal handler (no TLS init call).
thread_local sigjmp_buf* t_jump = nullptr;   // innermost armed guard of this thread
thread_local const void* t_fault_address = nullptr;

struct sigaction g_previous {};
std::atomic<bool> g_precheck{true};   // what was installed before us (default, or ASan's handler)

void on_sigbus(int sig, siginfo_t* info, void* context) {
  sigjmp_buf* jump = t_jump;
  if (jump != nullptr && info != nullptr && info->si_code > 0) {   // a real fault on a guarded thread
    t_jump = nullptr;
    t_fault_address = info->si_addr;
    siglongjmp(*jump, 1);
  }
  // Not ours: whoever handled SIGBUS before us, else the default action (the process dies with
  // SIGBUS as it would have without the guard).
  if (call_previous_handler(g_previous, sig, info, context)) return;
  signal(SIGBUS, SIG_DFL);
  raise(SIGBUS);
}

void install_handler() {
  struct sigaction sa {};
  sa.sa_sigaction = on_sigbus;
  // SA_NODEFER: SIGBUS stays unblocked while the handler runs, so jumping out of it needs no saved
  // signal mask (sigsetjmp(..., 0): no sigprocmask call per guard). SA_ONSTACK: an alternate stack,
  // where one is set up (ASan does), serves a fault that hit a stack overflow.
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, &g_previous);
}

Error fault_error(const void* address) {
  auto where = locate_mapping(address);
  if (where && where->hooks) return where->hooks->fault_error(where->offset);
  if (!where)
    return make_error(
        ErrorCode::truncated, "", kNoOffset,
        fmt::format("a read at address {} failed with SIGBUS (a mapped file changed while open)", address));
  return make_error(
      ErrorCode::truncated, where->path, where->offset,
      fmt::format(
          "the file changed while open: it is now {} bytes, it was {} when opened; this byte is gone (reopen it)",
          where->current_size, where->mapped_size));
}

}   // namespace

Status guard_reads_raw(void (*fn)(void*), void* context) {
  static const bool installed = (install_handler(), true);
  (void)installed;
  sigjmp_buf jump;
  sigjmp_buf* const outer = t_jump;
  if (sigsetjmp(jump, 0) == 0) {
    t_jump = &jump;
    fn(context);
    t_jump = outer;
    return {};
  }
  t_jump = outer;
  return fault_error(t_fault_address);
}

Status check_mapped_range(std::span<const uint8_t> bytes) {
  if (bytes.empty() || !g_precheck.load(std::memory_order_relaxed)) return {};
  auto where = locate_mapping(bytes.data());
  if (where && where->hooks) return where->hooks->prepare(where->offset, bytes.size());
  if (!where || where->current_size >= where->mapped_size) return {};
  const uint64_t end = where->offset + bytes.size();
  if (end <= where->current_size) return {};
  const uint64_t first_gone = std::max(where->offset, where->current_size);
  return make_error(ErrorCode::truncated, where->path, first_gone,
                    fmt::format("the file changed while open: it is now {} bytes, it was {} when opened; bytes "
                                "{:#x}..{:#x} are gone (reopen it)",
                                where->current_size, where->mapped_size, first_gone, end));
}

void set_size_precheck_for_testing(bool enabled) { g_precheck.store(enabled); }

Status check_view_mapped(const TensorView& view) {
  AKV_TRY(check_mapped_range(view.data));
  AKV_TRY(check_mapped_range(view.scales));
  AKV_TRY(check_mapped_range(view.biases));
  AKV_TRY(check_mapped_range(view.global_scale));
  return {};
}

Status copy_mapped(std::span<const uint8_t> from, uint8_t* to) {
  if (from.empty()) return {};
  AKV_TRY(check_mapped_range(from));
  return guard_reads([&] { std::memcpy(to, from.data(), from.size()); });
}

}   // namespace akview
