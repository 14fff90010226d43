// Reads of mapped model data that survive the file changing underneath (truncated, shrunk, or
// rewritten in place by another process while akview holds it mapped).
//
// Two layers:
//  * A pre-check (check_mapped_range, check_view_mapped): one fstat of the file behind a range,
//    through the registry in mapped_file.hpp. It turns the common case, a file that shrank before
//    the read starts, into an ErrorCode::truncated error naming the file and the first missing byte.
//  * A SIGBUS guard (guard_reads) for the race the pre-check cannot close: the file shrinks while the
//    read is running. The guard is per thread: a process-wide SIGBUS handler (installed on first use)
//    jumps back into guard_reads on the faulting thread when that thread is inside a guard, and
//    otherwise hands the signal to the handler installed before it (ASan's) or to the default action,
//    so an unguarded fault still kills the process as it always did. The fault becomes an
//    ErrorCode::truncated error naming the file and offset of the faulting address.
//
// The guarded body is left by siglongjmp, which skips destructors and cannot release locks. So a
// body must only read the mapping and write into memory that already exists: no locks taken, no
// heap objects created, no allocation, nothing whose destructor matters, in any frame between
// guard_reads and the read (the raw decode / kernel / memcpy loops, not the code around them).
// Guards nest: a fault goes to the innermost guard on its thread.
//
// Threads: every thread that reads a mapping must arm its own guard (compute's thread-pool tasks
// each call guard_reads around their kernel; a fault in any task becomes the job's error). Threads
// akview does not own are not guarded: OpenBLAS's and PoCL's worker threads. The blas backend
// therefore runs OpenBLAS single-threaded inside guarded pool tasks; the OpenCL backend on PoCL
// (kernels read the mapping in place on PoCL's threads) gets the pre-check only, so a file that
// shrinks during an OpenCL kernel still ends the process with SIGBUS.
//
// Not covered: header parsing at open, and names/metadata strings, which point into the mapping
// and are read by printers after open (a file cut inside its header while a model is open).
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

#include "core/result.hpp"
#include "core/tensor_view.hpp"

namespace akview {

// Fails with ErrorCode::truncated when `bytes` lie in a live mapping whose file is now too short to
// back them; succeeds for ranges the file still covers and for memory that is not a mapping.
Status check_mapped_range(std::span<const uint8_t> bytes);
// check_mapped_range over every span of `view` (data, scales, biases, global scale).
Status check_view_mapped(const TensorView& view);

// Runs fn(context) with this thread's SIGBUS guard armed; a SIGBUS during it becomes the Error.
Status guard_reads_raw(void (*fn)(void*), void* context);

// Runs `body()` (see the rules above) with this thread's SIGBUS guard armed.
template <typename Body>
Status guard_reads(Body&& body) {
  using B = std::remove_reference_t<Body>;
  return guard_reads_raw([](void* p) { (*static_cast<B*>(p))(); }, const_cast<std::remove_const_t<B>*>(&body));
}

// Tests only: with the pre-check off, reads of a file truncated before they start reach the SIGBUS
// guard deterministically (the race the guard exists for, without the race). Process-wide.
void set_size_precheck_for_testing(bool enabled);

// memcpy of mapped bytes into `to` (which holds from.size() bytes): pre-checked and guarded.
Status copy_mapped(std::span<const uint8_t> from, uint8_t* to);

}   // namespace akview
