// A byte a chunk of a remote file's mapping, zero until set, that costs memory only where set:
// calloc leaves an mmap'd block's pages untouched (the kernel's zero pages), where a vector writes
// every byte. A 4 GB shard has 2^18 chunks of 16 KiB; an open maps 163 of them and sets a few each.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <new>

#include "core/remote/remote_file.hpp"

namespace akview::remote {

class ChunkFlags {
 public:
  explicit ChunkFlags(uint64_t length)
      : p_(static_cast<uint8_t*>(std::calloc(static_cast<size_t>((length + kChunkBytes - 1) / kChunkBytes) + 1, 1))) {
    if (p_ == nullptr) throw std::bad_alloc();
  }
  ~ChunkFlags() { std::free(p_); }
  ChunkFlags(const ChunkFlags&) = delete;
  ChunkFlags& operator=(const ChunkFlags&) = delete;
  uint8_t& operator[](uint64_t chunk) { return p_[chunk]; }
  uint8_t operator[](uint64_t chunk) const { return p_[chunk]; }

 private:
  uint8_t* p_;
};

}   // namespace akview::remote
