// The type table: every ggml id 0..42 is a row or a removed id, names round-trip, block sizes
// agree with FORMATS.md §2.6 bits-per-weight, every safetensors dtype of the reference crate is known.
#include <gtest/gtest.h>

#include "core/types.hpp"

namespace akview {
namespace {

TEST(TypeTable, GgmlIdsAreCompleteAndRoundTrip) {
  int rows = 0;
  for (int id = 0; id < kGgmlTypeCount; ++id) {
    auto t = type_from_ggml(id);
    EXPECT_NE(t.has_value(), ggml_id_removed(id)) << id;
    if (t) {
      EXPECT_EQ(type_info(*t).ggml_id, id);
      ++rows;
    }
  }
  EXPECT_EQ(rows, 43 - 8);
  EXPECT_FALSE(type_from_ggml(43).has_value());
  EXPECT_FALSE(type_from_ggml(-1).has_value());
  EXPECT_FALSE(type_from_ggml(200).has_value());
}

TEST(TypeTable, BitsPerWeightMatchTheSpec) {
  const std::pair<const char*, double> kExpected[] = {
      {"q4_0", 4.5},     {"q4_1", 5.0},       {"q5_0", 5.5},      {"q5_1", 6.0},       {"q8_0", 8.5},
      {"q2_k", 2.625},   {"q3_k", 3.4375},    {"q4_k", 4.5},      {"q5_k", 5.5},       {"q6_k", 6.5625},
      {"q8_k", 9.125},   {"iq2_xxs", 2.0625}, {"iq2_xs", 2.3125}, {"iq3_xxs", 3.0625}, {"iq1_s", 1.5625},
      {"iq4_nl", 4.5},   {"iq3_s", 3.4375},   {"iq2_s", 2.5625},  {"iq4_xs", 4.25},    {"iq1_m", 1.75},
      {"tq1_0", 1.6875}, {"tq2_0", 2.0625},   {"mxfp4", 4.25},    {"nvfp4", 4.5},      {"q1_0", 1.125},
      {"q2_0", 2.25},    {"bf16", 16},        {"f4", 4},          {"f6_e2m3", 6}};
  for (const auto& [name, bpw] : kExpected) {
    auto t = type_from_name(name);
    ASSERT_TRUE(t.has_value()) << name;
    EXPECT_DOUBLE_EQ(type_bits_per_weight(*t), bpw) << name;
  }
}

TEST(TypeTable, EverySafetensorsDtypeIsKnown) {
  for (const char* d : {"BOOL",    "F4",          "F6_E2M3",     "F6_E3M2", "U8",  "I8",  "F8_E5M2", "F8_E4M3",
                        "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16",     "U16", "F16", "BF16",    "I32",
                        "U32",     "F32",         "C64",         "F64",     "I64", "U64"}) {
    auto t = type_from_st_dtype(d);
    ASSERT_TRUE(t.has_value()) << d;
    EXPECT_EQ(type_info(*t).st_name, d);
  }
  EXPECT_FALSE(type_from_st_dtype("f32").has_value());   // exact case, as the reference crate
  EXPECT_FALSE(type_from_st_dtype("F17").has_value());
}

}   // namespace
}   // namespace akview
