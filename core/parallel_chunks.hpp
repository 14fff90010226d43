// core's own small thread fan-out (core links no compute library): numbered chunks of one job run
// on several threads, the calling thread among them, each thread taking the next unclaimed chunk.
// Used by the whole-tensor passes (value statistics, diff value errors) so they read a tensor's
// bytes on every core, not one.
#pragma once

#include <cstddef>
#include <functional>

namespace akview {

// The threads this machine runs at once (std::thread::hardware_concurrency, at least 1).
int machine_threads();

// Calls work(chunk, worker) for every chunk in [0, n_chunks) on min(threads, n_chunks) threads
// (threads <= 0: machine_threads()); the calling thread is worker 0 and the only one that calls
// `on_caller_chunk(chunks_finished)` (after each chunk it finished), so progress callbacks keep
// running on the thread that asked. `work` returns false to stop: no thread starts another chunk.
// Returns false when some call stopped the job. One worker runs its chunks in increasing order.
bool parallel_chunks(size_t n_chunks, int threads, const std::function<bool(size_t chunk, int worker)>& work,
                     const std::function<void(size_t chunks_finished)>& on_caller_chunk = {});

}   // namespace akview
