// JsonWriter's numbers equal nlohmann's spelling byte for byte (the documented JSON is nlohmann's
// dump): whole doubles take a fast path (digits and ".0"), the rest go through nlohmann's to_chars.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ui/batch/json_writer.hpp"

namespace akview::testing {
namespace {

std::string written(const std::vector<double>& values) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  {
    JsonWriter w(f);
    w.begin_array();
    for (double v : values) w.value(v);
    w.end_array();
    w.end_document();
  }
  std::fclose(f);
  std::string out(buf, len);
  std::free(buf);
  return out;
}

TEST(JsonWriterNumbers, DoublesAreSpelledAsNlohmannSpellsThem) {
  std::vector<double> v = {0.0,
                           -0.0,
                           1.0,
                           -1.0,
                           32.0,
                           4.5,
                           0.1,
                           1e14,
                           1e15 - 1,
                           1e15,
                           -1e15,
                           1e16,
                           123456789012345.0,
                           999999999999999.0,
                           2.5e-8,
                           1e300,
                           -3.0,
                           std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::infinity(),
                           std::nan("")};
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20000; ++i) {
    const double scale = std::ldexp(1.0, static_cast<int>(rng() % 120) - 20);
    const double x = std::uniform_real_distribution<double>(-1, 1)(rng) * scale;
    v.push_back(x);
    v.push_back(std::trunc(x));   // whole numbers on both sides of 1e15
  }
  nlohmann::json expected = nlohmann::json::array();
  for (double x : v) expected.push_back(std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr));
  EXPECT_EQ(written(v), expected.dump(2) + "\n");
}

}   // namespace
}   // namespace akview::testing
