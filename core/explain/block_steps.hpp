// Internal to core/explain: the helper every ggml block explainer writes its steps through, and the
// explainer signature of the per-type table in explain.cpp. Offsets in the steps are absolute
// (`origin` + offset in the block) with the offset inside the block beside them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/explain/explain.hpp"

namespace akview::explain {

// Shortest text that reads back as the same float ("0.09375", "-1.5e-05").
std::string num(double v);
// "3c 00 1f" (at most `max` bytes, then "…").
std::string hex_bytes(const uint8_t* p, size_t n, size_t max = 48);

class BlockSteps {
 public:
  BlockSteps(GroupExplanation& e, const uint8_t* block, uint64_t origin, int group, int elem)
      : e_(e), b_(block), origin_(origin), g_(group), j_(elem) {}

  const uint8_t* b() const { return b_; }
  int g() const { return g_; }   // group index inside the block
  int j() const { return j_; }   // the element asked for, inside the group

  // "@0x1f42 (+2)": where `offset` of the block lives.
  std::string at(size_t offset) const;
  void add(std::string label, std::string formula, std::vector<double> values = {});

  // One field read from the block, as a step "name: TYPE @… bytes … -> value"; returns the value.
  float f16(std::string_view name, size_t offset);
  float f32(std::string_view name, size_t offset);
  uint32_t u32(std::string_view name, size_t offset, std::string_view meaning);
  uint16_t u16(std::string_view name, size_t offset, std::string_view meaning);
  // A run of bytes shown raw (e.g. the 12 packed 6-bit scale bytes).
  void raw(std::string_view name, size_t offset, size_t n, std::string_view meaning);

  // The codes step: `meaning` says where element k's bits are; values are the codes.
  void codes(std::string_view label, std::string meaning, std::span<const int> codes);
  // The formula step: the general form, then element j's numbers.
  void formula(std::string_view general, std::string worked);

 private:
  GroupExplanation& e_;
  const uint8_t* b_;
  uint64_t origin_;
  int g_, j_;
};

// An explainer of one ggml block type: writes the steps of group `s.g()` and its values into `y`
// (group_n floats), with the decoder's float operations in the decoder's order.
using BlockExplainer = void (*)(BlockSteps& s, float* y);

// The explainers, by file.
void explain_q4_0(BlockSteps&, float*);
void explain_q4_1(BlockSteps&, float*);
void explain_q5_0(BlockSteps&, float*);
void explain_q5_1(BlockSteps&, float*);
void explain_q8_0(BlockSteps&, float*);
void explain_q8_1(BlockSteps&, float*);
void explain_q1_0(BlockSteps&, float*);
void explain_q2_0(BlockSteps&, float*);
void explain_q2_k(BlockSteps&, float*);
void explain_q3_k(BlockSteps&, float*);
void explain_q4_k(BlockSteps&, float*);
void explain_q5_k(BlockSteps&, float*);
void explain_q6_k(BlockSteps&, float*);
void explain_q8_k(BlockSteps&, float*);
void explain_iq2_xxs(BlockSteps&, float*);
void explain_iq2_xs(BlockSteps&, float*);
void explain_iq2_s(BlockSteps&, float*);
void explain_iq3_xxs(BlockSteps&, float*);
void explain_iq3_s(BlockSteps&, float*);
void explain_iq1_s(BlockSteps&, float*);
void explain_iq1_m(BlockSteps&, float*);
void explain_iq4_nl(BlockSteps&, float*);
void explain_iq4_xs(BlockSteps&, float*);
void explain_tq1_0(BlockSteps&, float*);
void explain_tq2_0(BlockSteps&, float*);
void explain_mxfp4(BlockSteps&, float*);
void explain_nvfp4(BlockSteps&, float*);

}   // namespace akview::explain

namespace akview::explain {

// The non-block forms: composite MLX / Ollama groups (explain_composite.cpp) and plain dtypes, one
// element (or one packed F4/F6 block) each (explain_plain.cpp). `e` has row, col and family set.
Status explain_composite(const TensorView& v, const SpanOrigins& origins, GroupExplanation& e);
Status explain_plain(const TensorView& v, const SpanOrigins& origins, GroupExplanation& e);

}   // namespace akview::explain
