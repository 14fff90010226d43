// Shared helpers of the CLI tests: the oracle directory (tests/oracles), JSON and binary file readers, and a
// per-test temporary directory (tests/common/temp_dir.hpp) for the files the binary writes.
#pragma once

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/common/oracle_data.hpp"
#include "tests/common/temp_dir.hpp"

namespace akview::testing {

inline const std::string kOracles = AKVIEW_ORACLES_DIR;

// A missing file is an error naming it (MissingTestData), not a parse error about empty input.
inline nlohmann::json load_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw MissingTestData("missing test data: " + path);
  return nlohmann::json::parse(in);
}

inline std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::vector<float> read_f32(const std::string& path) {
  auto b = read_bytes(path);
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), v.size() * 4);
  return v;
}

}   // namespace akview::testing
