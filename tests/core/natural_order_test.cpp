// Natural order: digit runs compare by value; the byte keys of append_natural_key order names exactly
// as natural_less does (checked on fixed cases and on many random pairs with digits, zeros and dots).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/natural_order.hpp"

namespace akview::testing {
namespace {

std::string key(std::string_view name) {
  std::string k;
  append_natural_key(k, name);
  EXPECT_EQ(natural_key_size(name), k.size()) << name;   // buffers of many keys are sized by it
  return k;
}

TEST(NaturalOrder, DigitRunsCompareByValue) {
  EXPECT_TRUE(natural_less("layers.2.w", "layers.10.w"));
  EXPECT_FALSE(natural_less("layers.10.w", "layers.2.w"));
  EXPECT_TRUE(natural_less("a.9", "a.a"));
  EXPECT_TRUE(natural_less("x", "x.0"));
  EXPECT_LT(key("layers.2.w"), key("layers.10.w"));
  EXPECT_EQ(key("a01"), key("a1"));
  EXPECT_LT(key("n123456789"), key("n1234567890"));
}

TEST(NaturalOrder, KeysOrderLikeNaturalLessOnRandomNames) {
  std::mt19937 rng(7);
  const std::string alphabet = "0019.a_Z/:";
  auto random_name = [&] {
    std::string s(rng() % 14, ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    if (rng() % 8 == 0) s += std::string(9 + rng() % 4, '7');   // long digit runs
    return s;
  };
  for (int i = 0; i < 50000; ++i) {
    const std::string a = random_name(), b = random_name();
    const int by_key = key(a).compare(key(b));
    EXPECT_EQ(natural_less(a, b), by_key < 0) << "'" << a << "' vs '" << b << "'";
    EXPECT_EQ(natural_less(b, a), by_key > 0) << "'" << a << "' vs '" << b << "'";
  }
}

}   // namespace
}   // namespace akview::testing
