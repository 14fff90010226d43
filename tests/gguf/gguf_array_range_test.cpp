// read_gguf_array_range: pages of an array match the whole decode, the elements before the page are
// skipped (lengths still checked), and a page past the end or over broken bytes never crashes.
#include <string>

#include <gtest/gtest.h>

#include "core/formats/gguf.hpp"
#include "tests/gguf/gguf_test_util.hpp"

namespace akview::testing {
namespace {

std::vector<GgufValue> numbered_strings(int n) {
  std::vector<GgufValue> out;
  for (int i = 0; i < n; ++i) out.push_back(gguf_string("tok" + std::to_string(i)));
  return out;
}

TEST(GgufArrayRange, StringPagesMatchTheWholeDecode) {
  TempDir dir;
  GgufWriter w = small_model();
  w.set("tokens", gguf_array(kGgufString, numbered_strings(1000)));
  auto model = write_and_open(dir, w);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  const MetaEntry* e = model->find_meta("tokens");
  ASSERT_NE(e, nullptr);
  for (uint64_t first : {0ull, 1ull, 499ull, 990ull}) {
    auto page = read_gguf_array_range(*model, *e, e->value, first, 20);
    ASSERT_TRUE(page.ok()) << page.error().to_string();
    ASSERT_EQ(page->size(), std::min<uint64_t>(20, 1000 - first));
    for (size_t k = 0; k < page->size(); ++k) EXPECT_EQ((*page)[k].str, "tok" + std::to_string(first + k));
  }
  auto past = read_gguf_array_range(*model, *e, e->value, 1000, 20);
  ASSERT_TRUE(past.ok());
  EXPECT_TRUE(past->empty());
  auto far = read_gguf_array_range(*model, *e, e->value, ~uint64_t{0}, ~uint64_t{0});
  ASSERT_TRUE(far.ok());
  EXPECT_TRUE(far->empty());
}

TEST(GgufArrayRange, FixedWidthAndNestedElements) {
  TempDir dir;
  GgufWriter w = small_model();
  std::vector<GgufValue> ints;
  for (int i = 0; i < 300; ++i) ints.push_back(gguf_i32(-i));
  w.set("ints", gguf_array(kGgufI32, ints));
  w.set("nested",
        gguf_array(kGgufArray, {gguf_array(kGgufString, {gguf_string("a"), gguf_string("bc")}),
                                gguf_array(kGgufU8, {gguf_u8(7)}), gguf_array(kGgufString, {gguf_string("last")})}));
  auto model = write_and_open(dir, w);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  const MetaEntry* ints_e = model->find_meta("ints");
  auto page = read_gguf_array_range(*model, *ints_e, ints_e->value, 297, 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 3u);
  EXPECT_EQ((*page)[0].num.i, -297);
  EXPECT_EQ((*page)[2].num.i, -299);
  const MetaEntry* nested = model->find_meta("nested");
  auto tail = read_gguf_array_range(*model, *nested, nested->value, 2, 5);
  ASSERT_TRUE(tail.ok()) << tail.error().to_string();
  ASSERT_EQ(tail->size(), 1u);
  auto inner = read_gguf_array(*model, *nested, (*tail)[0], 5);
  ASSERT_TRUE(inner.ok());
  ASSERT_EQ(inner->size(), 1u);
  EXPECT_EQ((*inner)[0].str, "last");
}

// A string length in the skipped part that runs past the array is an error naming its offset.
TEST(GgufArrayRange, BrokenLengthInTheSkippedPartIsAnError) {
  TempDir dir;
  GgufWriter w = small_model();
  w.set("tokens", gguf_array(kGgufString, numbered_strings(10)));
  auto model = write_and_open(dir, w);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  const MetaEntry* e = model->find_meta("tokens");
  MetaValue forged = e->value;
  forged.elems_bytes = 3 * (8 + 4) + 4;   // the range ends inside element 3
  auto bad = read_gguf_array_range(*model, *e, forged, 5, 2);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().offset, kNoOffset);
  MetaValue fixed = e->value;
  fixed.elem_type = MetaType::u64;
  fixed.count = ~uint64_t{0};   // skipping would overflow the byte count
  auto overflow = read_gguf_array_range(*model, *e, fixed, ~uint64_t{0} - 1, 1);
  EXPECT_FALSE(overflow.ok());
}

}   // namespace
}   // namespace akview::testing
