// A remote file mapped into memory like a local one, its bytes fetched when they are first touched.
//
// The mapping is anonymous memory registered with userfaultfd (Linux): the first read of a page
// that holds nothing stops the reading thread and wakes one handler thread, which fetches the
// chunks the read-ahead policy picks (RemoteFile::fetch_for_read), or reads them from the cache
// when an earlier run fetched them, and copies them in (UFFDIO_COPY); the reader goes on. So every
// format opener, decoder, pane and command reads a remote model through the pointers it reads a
// local one through, and only the bytes it touches cross the network.
//
// A fetch that fails (the network, a file changed on the server, a cancelled transfer) cannot hand
// its reader an error: the handler maps an empty file over the chunk, so the read raises SIGBUS,
// which core/fault_guard turns into the fetch's error on guarded reads (the hooks in
// mapped_file.hpp give its message and make the chunk fetchable again). Reads that core checks
// before they run (check_mapped_range: compute, decoders, copies) fetch their whole range first,
// in parallel requests, and fail cleanly.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/mapped_file.hpp"
#include "core/remote/remote_file.hpp"
#include "core/result.hpp"

namespace akview::remote {

// The MappedFile of a remote file: reads fetch on first touch (see above).
Result<MappedFile> map_remote_file(std::shared_ptr<RemoteFile> file, const std::string& display_path);

}   // namespace akview::remote
