// Remote mappings served by signals, for where userfaultfd is refused (fault_mapping.hpp chooses).
//
// The mapping starts as a reservation without access (PROT_NONE). A read of a page that holds
// nothing raises SIGSEGV; the handler (installed once, process-wide, before whatever handled SIGSEGV
// earlier: the default action, or ASan's, which it hands every other fault to) finds the address in
// a fixed table of remote ranges, writes a request (address, thread) to a pipe and waits on a futex
// word for the answer: only async-signal-safe calls, no lock, no allocation. One server thread reads
// the requests and does what userfaultfd's server does (RemoteFile::fetch_for_read: the same
// read-ahead, cache and failures), then maps the cache file's fetched bytes (the stand-in, which
// holds them at the same offsets) read-only over the fetched chunks with one mmap(MAP_FIXED), so
// another thread sees a page either without access (and faults, and waits) or whole — never half
// filled. The handler returns and the read restarts. Mapping the stand-in rather than copying keeps
// the bytes in the page cache: MappedFile::release_pages (MADV_DONTNEED) drops pages that read back
// from the cache file, and system calls handed a present page read it.
//
// A fetch that fails: outside a FetchFailureScope, an empty file is mapped over the chunk, so the
// restarted read raises SIGBUS (core/fault_guard turns it into the fetch's error on guarded reads;
// the chunk becomes fetchable again after); inside one, the page is mapped as zeros and the scope
// records the error. A write to the mapping (a bug) or a fault of the server thread itself is handed
// on to the previous handler, which ends the process as it would have.
//
// check_mapped_range (the hooks' prepare) fetches the range and maps it at once, so a system call
// after the check (diff's process_vm_readv) reads bytes, not EFAULT.
#pragma once

#include <memory>
#include <string>

#include "core/mapped_file.hpp"
#include "core/remote/remote_file.hpp"
#include "core/result.hpp"

namespace akview::remote {

Result<MappedFile> map_by_signals(std::shared_ptr<RemoteFile> file, const std::string& display_path);

}   // namespace akview::remote
