// Shared helpers of the decode tests: the oracle manifest, reference files, views over mapped files.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/mapped_file.hpp"
#include "core/tensor_view.hpp"
#include "core/types.hpp"
#include "tests/common/oracle_data.hpp"

namespace akview::test {

inline std::string oracle_path(const std::string& rel) { return std::string(AKVIEW_ORACLES_DIR) + "/" + rel; }

inline const nlohmann::json& manifest() {
  static const nlohmann::json m = akview::testing::oracle_json("manifest.json");
  return m;
}

// A rows x cols f32 view over `values` (which must outlive it).
inline TensorView f32_view(const std::vector<float>& values, int64_t rows, int64_t cols) {
  TensorView v;
  v.type = TypeId::f32;
  v.n_rows = rows;
  v.n_cols = cols;
  v.row_bytes = static_cast<uint64_t>(cols) * 4;
  v.data = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()), values.size() * 4);
  return v;
}

inline std::vector<float> read_f32_file(const std::string& rel) {
  std::ifstream in(oracle_path(rel), std::ios::binary | std::ios::ate);
  const auto size = static_cast<size_t>(in.tellg());
  std::vector<float> v(size / 4);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
  return v;
}

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// rows x cols of a numpy-order shape (cols = innermost; a 0-d tensor is 1 x 1).
inline std::pair<int64_t, int64_t> rows_cols(const nlohmann::json& shape) {
  if (shape.empty()) return {1, 1};
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i].get<int64_t>();
  return {rows, shape.back().get<int64_t>()};
}

// A plain (non-composite) view over bytes [offset, offset+nbytes) of a mapped file.
inline TensorView plain_view(const MappedFile& f, TypeId type, uint64_t offset, uint64_t nbytes,
                             const nlohmann::json& shape) {
  TensorView v;
  v.type = type;
  auto [rows, cols] = rows_cols(shape);
  v.n_rows = rows;
  v.n_cols = cols;
  v.data = f.range(offset, nbytes);
  const auto& info = type_info(type);
  v.row_bytes = static_cast<uint64_t>(cols) / info.block_elems * info.block_bytes;
  return v;
}

inline bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

struct TypeTally {
  int tensors = 0;
  uint64_t elements = 0;
  uint64_t exact = 0;
  uint64_t within = 0;
  uint64_t bad = 0;
};

}   // namespace akview::test
