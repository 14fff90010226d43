// Shared helpers for the provider tests: the oracle manifest and raw reference files.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/common/oracle_data.hpp"

namespace akview::test {

inline std::string oracle(const std::string& rel) { return std::string(AKVIEW_ORACLES_DIR) + "/" + rel; }

inline const nlohmann::json& manifest() {
  static const nlohmann::json m = akview::testing::oracle_json("manifest.json");
  return m;
}

// The manifest's entry of the SafeTensors oracle model `name`.
inline const nlohmann::json& st_model(const std::string& name) {
  for (const auto& m : manifest()["safetensors"]["models"])
    if (m["name"] == name) return m;
  throw std::runtime_error("no model " + name);
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

template <typename T>
std::vector<T> read_values(const std::string& path) {
  auto b = read_file(path);
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

inline float widen_f16(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) bits = sign;
    else {
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while (!(man & 0x400));
      bits = sign | uint32_t(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
    }
  } else if (exp == 31) bits = sign | 0x7f800000u | man << 13;
  else bits = sign | (exp + 112) << 23 | man << 13;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline float widen_bf16(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}   // namespace akview::test
