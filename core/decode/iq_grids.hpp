// ggml's IQ lattice grids and sign table (data in iq_grids.cpp). FORMATS.md §2.7 "IQ1_S / IQ1_M / IQ2_* / IQ3_*".
#pragma once

#include <cstdint>

namespace akview::decode::iq {

extern const uint64_t kIq2xxsGrid[256];   // 8 unsigned magnitudes per entry
extern const uint64_t kIq2xsGrid[512];
extern const uint64_t kIq2sGrid[1024];
extern const uint32_t kIq3xxsGrid[256];   // 4 unsigned magnitudes per entry
extern const uint32_t kIq3sGrid[512];
extern const uint64_t kIq1sGrid[2048];   // 8 int8 values in {-1, 0, +1} per entry
extern const uint8_t kSignsIq2xs[128];   // 7 sign bits + an 8th making the parity even
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};   // IQ4_NL / IQ4_XS

inline uint8_t grid_byte(uint64_t entry, int j) { return static_cast<uint8_t>(entry >> (8 * j)); }

}   // namespace akview::decode::iq
