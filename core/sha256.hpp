// SHA-256 (FIPS 180-4), streaming, for Ollama blob digests (FORMATS.md §4.1-4.2: blobs are named by
// the SHA-256 of their bytes). Small and dependency-free: the x86 SHA extensions where the CPU has
// them (chosen at run time; ~2 GB/s a core), else scalar rounds (~250 MB/s).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace akview {

class Sha256 {
 public:
  // cpu_extensions = false: the scalar rounds even where the CPU has the SHA extensions.
  explicit Sha256(bool cpu_extensions = true);
  void update(std::span<const uint8_t> bytes);
  std::array<uint8_t, 32> finish();   // the object is spent afterwards

 private:
  bool sha_ni_;
  void block(const uint8_t* p);              // the scalar rounds
  void blocks(const uint8_t* p, size_t n);   // n whole blocks, by the fastest path
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t used_ = 0;
  uint64_t total_ = 0;
};

// Whether this CPU's SHA extensions do the hashing (false: the scalar rounds).
bool sha256_uses_cpu_extensions();

std::string sha256_hex(std::span<const uint8_t> bytes);
std::string to_hex(std::span<const uint8_t> bytes);

}   // namespace akview
