// Hostile variants of a valid file: every truncation and a few byte values at every position.
// Each must open or be refused with an error inside the file; never crash (run under ASan/UBSan).
#include <cstdio>

#include <gtest/gtest.h>

#include "core/formats/gguf.hpp"
#include "tests/gguf/gguf_test_util.hpp"

namespace akview::testing {
namespace {

void open_bytes(const TempDir& dir, const std::vector<uint8_t>& bytes, size_t& refused) {
  const std::string path = dir.file("mutant.gguf");
  // Unlinked first: rewriting a file in place makes ext4 flush it on close (slow here).
  std::remove(path.c_str());
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  if (!bytes.empty()) std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  auto model = open_model(path);
  if (model.ok()) {
    for (const auto& t : model->tensors) EXPECT_EQ(model->data(t).size(), t.nbytes);   // data inside the file
    for (const auto& m : model->meta)
      if (m.value.type == MetaType::array) {
        auto elems = read_gguf_array(*model, m, m.value, 64);
        EXPECT_TRUE(elems.ok()) << elems.error().to_string();
      }
    return;
  }
  ++refused;
  EXPECT_FALSE(model.error().message.empty());
  if (model.error().offset != kNoOffset) {
    EXPECT_LE(model.error().offset, bytes.size());
  }
}

GgufWriter mutation_model() {
  GgufWriter w = small_model();
  w.set("tokens", gguf_array(kGgufString, {gguf_string("a"), gguf_string("bc")}));
  w.set("nested", gguf_array(kGgufArray, {gguf_array(kGgufU16, {gguf_u16(1)})}));
  w.set("f", gguf_f32(1.5f));
  return w;
}

TEST(GgufMutation, EveryTruncationIsRefusedCleanly) {
  TempDir dir;
  const std::vector<uint8_t> full = mutation_model().bytes();
  size_t refused = 0;
  for (size_t n = 0; n < full.size(); ++n) {
    open_bytes(dir, std::vector<uint8_t>(full.begin(), full.begin() + n), refused);
  }
  EXPECT_EQ(refused, full.size());   // the last tensor's data ends at the end of the file
}

TEST(GgufMutation, ByteValuesAtEveryPosition) {
  TempDir dir;
  const std::vector<uint8_t> full = mutation_model().bytes();
  const uint64_t header = mutation_model().header().size();
  size_t refused = 0;
  for (size_t i = 0; i < header; ++i)
    for (uint8_t v : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      std::vector<uint8_t> bytes = full;
      if (bytes[i] == v) continue;
      bytes[i] = v;
      open_bytes(dir, bytes, refused);
    }
  EXPECT_GT(refused, header);   // most mutations of the header break a rule
}

}   // namespace
}   // namespace akview::testing
