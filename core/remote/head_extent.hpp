// How many leading bytes of a file hold its header, judged from the first bytes fetched, so a remote
// header comes in two requests: the first speculative range, then exactly (or nearly) the rest.
//  * SafeTensors: the 8-byte length prefix says it exactly (FORMATS.md §1).
//  * GGUF: its header has no length; the key/values and tensor infos are walked over the bytes at
//    hand, and where they run out the rest is estimated from what was read (the current array's
//    mean element size, ~72 bytes per tensor info). An estimate that falls short costs one more
//    request, never a wrong byte: reads past what was fetched are fetched when they happen.
//  * Anything else (JSON, zip, pickle): only the bytes at hand.
#pragma once

#include <cstdint>
#include <span>

namespace akview::remote {

struct HeadExtent {
  uint64_t bytes = 0;   // [0, bytes) is the header, as far as can be told (≤ file size)
  bool exact = false;   // the format said so (SafeTensors, or a GGUF header walked to its end)
};

HeadExtent estimate_head_extent(std::span<const uint8_t> head, uint64_t file_size);

}   // namespace akview::remote
