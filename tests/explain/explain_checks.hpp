// Shared checks of the explain tests: a group's explanation against the decoder and a reference,
// the steps each family must show, and the bytes at the reported offset.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/decode/decode.hpp"
#include "core/explain/explain.hpp"
#include "core/model.hpp"
#include "tests/decode/oracle_helpers.hpp"

namespace akview::test {

// Step labels (substrings) that a family's step-through must contain.
inline std::vector<std::string> required_labels(const GroupExplanation& e, TypeId type) {
  const std::string key(e.family->key);
  if (key == "legacy") return {"d (f16)", "codes", "formula"};
  if (key == "kquant")
    return type == TypeId::q8_k ? std::vector<std::string>{"d (f32)", "codes", "formula"}
                                : std::vector<std::string>{"super-block scale", "sub-block", "codes", "formula"};
  if (key == "iq_lattice") {
    if (type == TypeId::iq1_s || type == TypeId::iq1_m) return {"grid indices", "grid values", "deltas", "formula"};
    return {"grid indices", "grid values", "signs", "formula"};
  }
  if (key == "iq_nonlinear") return {"codes", "levels", "formula"};
  if (key == "ternary") return {"d (f16)", "formula"};
  if (key == "fp4_block") return {"scale", "codes", "formula"};
  if (key == "mlx_affine" || (key == "ollama" && (type == TypeId::ollama_int4 || type == TypeId::ollama_int8)))
    return {"packed weight", "codes", "scales", "biases", "formula"};
  if (key == "mlx_fp" || key == "ollama") return {"packed weight", "codes", "scale (", "formula"};
  return {"element bytes", "to float32"};
}

// Checks one explanation: group geometry, the family's steps, that the formula shows the asked
// element's value, and the values against `want` (the group's reference values) bit for bit.
inline void check_explanation(const GroupExplanation& e, TypeId type, const float* want, const std::string& what) {
  ASSERT_NE(e.family, nullptr) << what;
  ASSERT_EQ(e.values.size(), e.group_n) << what;
  ASSERT_GT(e.group_n, 0u) << what;
  EXPECT_LE(e.group_col, e.col) << what;
  EXPECT_LT(e.col, e.group_col + static_cast<int64_t>(e.group_n)) << what;
  EXPECT_FALSE(e.bytes.empty()) << what;
  for (const auto& label : required_labels(e, type)) {
    bool found = false;
    for (const auto& s : e.steps) found = found || s.label.find(label) != std::string::npos;
    EXPECT_TRUE(found) << what << ": no step labelled '" << label << "'";
  }
  size_t bad = 0;
  for (size_t k = 0; k < e.values.size(); ++k) {
    if (same_bits(e.values[k], want[k])) continue;
    if (bad++ < 3)
      ADD_FAILURE() << what << " column " << e.group_col + static_cast<int64_t>(k) << ": explain " << e.values[k]
                    << " want " << want[k];
  }
  EXPECT_EQ(bad, 0u) << what;
}

// The bytes reported are the file's bytes at the reported (absolute) offset.
inline void check_bytes_in_file(const Model& m, const Tensor& t, const GroupExplanation& e, const std::string& what) {
  auto span = m.files[t.file].map.range(e.bytes_offset, e.bytes.size());
  ASSERT_EQ(span.size(), e.bytes.size()) << what << ": offset " << e.bytes_offset << " outside the file";
  EXPECT_TRUE(std::equal(span.begin(), span.end(), e.bytes.begin()))
      << what << ": bytes differ from the file at the offset";
  EXPECT_GE(e.bytes_offset, t.offset) << what;
  EXPECT_LE(e.bytes_offset + e.bytes.size(), t.offset + t.nbytes) << what;
}

}   // namespace akview::test
