// Sizes, counts, shapes and offsets as akview writes them, in the batch printers and the TUI alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace akview {

std::string format_bytes(uint64_t bytes);                      // "1.50 MiB"
std::string format_count(uint64_t n);                          // "1.2B", "40.9K"
std::string format_shape(const std::vector<int64_t>& shape);   // "[4096, 14336]"
std::string format_offset(uint64_t offset);                    // "0x1f40"

}   // namespace akview
