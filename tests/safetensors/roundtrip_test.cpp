// Round trips through the writer: every dtype, the reference order, and sharded sets with an index
// (a complete set, a missing shard, an index/shard disagreement, a tensor in two shards).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/formats/format.hpp"
#include "core/formats/safetensors.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/st_writer.hpp"

namespace akview {
namespace {

using testing::StTensor;
using testing::TempDir;

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + 7 * i);
  return v;
}

// One tensor of every dtype in the type table that SafeTensors knows.
std::vector<StTensor> every_dtype() {
  std::vector<StTensor> out;
  uint8_t seed = 1;
  for (const TypeInfo& t : all_types()) {
    if (t.st_name.empty()) continue;
    const int64_t elems = 4 * t.block_elems;   // whole bytes even for F4/F6
    out.push_back({"t." + std::string(t.name),
                   std::string(t.st_name),
                   {2, elems / 2},
                   pattern(static_cast<size_t>(elems / t.block_elems * t.block_bytes), seed++)});
  }
  return out;
}

TEST(SafetensorsRoundTrip, EveryDtypeReadsBackItsBytes) {
  TempDir dir;
  const auto tensors = every_dtype();
  ASSERT_GE(tensors.size(), 22u);
  const std::string path = dir.file("all.safetensors");
  ASSERT_TRUE(testing::write_safetensors(path, tensors));
  auto m = open_model(path);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  ASSERT_EQ(m->tensors.size(), tensors.size());
  for (const auto& t : tensors) {
    SCOPED_TRACE(t.name);
    const Tensor* got = m->find(t.name);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(type_info(got->type).st_name, t.dtype);
    EXPECT_EQ(std::vector<int64_t>(m->shape(*got).begin(), m->shape(*got).end()), t.shape);
    auto data = m->data(*got);
    EXPECT_EQ(std::vector<uint8_t>(data.begin(), data.end()), t.bytes);
  }
  // The writer's order is the reference's: data offsets follow dtype order descending.
  std::vector<const Tensor*> by_offset;
  for (const auto& t : m->tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  EXPECT_EQ(by_offset.front()->type, TypeId::u64);
  EXPECT_EQ(by_offset.back()->type, TypeId::boolean);
}

// Names are views into the mapped header until Model::pack_names copies them into a block of their
// own (the TUI, after its first frame, then drops the header's pages); either way every name finds
// its tensor (the index holds tensor numbers and hashes: packing leaves it valid).
TEST(SafetensorsRoundTrip, NamesStayInTheHeaderUnlessPacked) {
  TempDir dir;
  const auto tensors = every_dtype();
  const std::string path = dir.file("all.safetensors");
  ASSERT_TRUE(testing::write_safetensors(path, tensors));
  for (const bool pack : {false, true}) {
    auto m = open_model(path);
    ASSERT_TRUE(m.ok()) << m.error().to_string();
    if (pack) m->pack_names();
    const MappedFile& map = m->files.front().map;
    for (const Tensor& t : m->tensors) {
      const auto* p = reinterpret_cast<const uint8_t*>(t.name.data());
      EXPECT_EQ(p >= map.data() && p < map.data() + map.size(), !pack) << t.name;
      EXPECT_EQ(m->find(t.name), &t) << t.name;
    }
  }
}

std::vector<std::vector<StTensor>> three_shards() {
  std::vector<std::vector<StTensor>> shards(3);
  for (int i = 0; i < 9; ++i)
    shards[i % 3].push_back({"layers." + std::to_string(i) + ".weight",
                             i % 2 ? "F16" : "F32",
                             {2, 3},
                             pattern(i % 2 ? 12 : 24, static_cast<uint8_t>(i))});
  return shards;
}

TEST(SafetensorsRoundTrip, ShardedSetOpensThroughItsIndex) {
  TempDir dir;
  const auto shards = three_shards();
  const auto names = testing::write_sharded_safetensors(dir.path(), shards);
  ASSERT_EQ(names.size(), 3u);
  for (const std::string& path : {dir.path(), dir.file("model.safetensors.index.json")}) {
    auto m = open_model(path);
    ASSERT_TRUE(m.ok()) << m.error().to_string();
    EXPECT_EQ(m->format, "safetensors-sharded");
    ASSERT_EQ(m->files.size(), 4u);
    EXPECT_EQ(m->files[0].role, "index");
    EXPECT_EQ(m->files[1].role, "shard 1/3");
    EXPECT_EQ(m->files[3].role, "shard 3/3");
    ASSERT_EQ(m->tensors.size(), 9u);
    for (size_t s = 0; s < shards.size(); ++s)
      for (const auto& t : shards[s]) {
        const Tensor* got = m->find(t.name);
        ASSERT_NE(got, nullptr) << t.name;
        EXPECT_EQ(m->files[got->file].path, dir.file(names[s]));
        auto data = m->data(*got);
        EXPECT_EQ(std::vector<uint8_t>(data.begin(), data.end()), t.bytes);
      }
    EXPECT_TRUE(m->notes.empty());
    ASSERT_NE(m->find_meta("total_size"), nullptr);
  }
}

TEST(SafetensorsRoundTrip, MissingShardNamesIndexAndShard) {
  TempDir dir;
  const auto names = testing::write_sharded_safetensors(dir.path(), three_shards());
  std::filesystem::remove(dir.file(names[1]));
  auto m = open_model(dir.path());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, ErrorCode::missing_file);
  EXPECT_EQ(m.error().file, dir.file("model.safetensors.index.json"));
  EXPECT_NE(m.error().offset, kNoOffset);
  EXPECT_NE(m.error().message.find(names[1]), std::string::npos) << m.error().to_string();
}

// Rewrites the index with `weight_map` (total_size from the shards).
void write_index(const TempDir& dir, const std::vector<std::pair<std::string, std::string>>& weight_map,
                 std::optional<uint64_t> total) {
  testing::StIndexOptions o;
  o.total_size = total;
  ASSERT_TRUE(testing::write_text(dir.file("model.safetensors.index.json"), testing::st_index_json(weight_map, o)));
}

std::vector<std::pair<std::string, std::string>> weight_map_of(const std::vector<std::vector<StTensor>>& shards,
                                                               const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::string>> wm;
  for (size_t s = 0; s < shards.size(); ++s)
    for (const auto& t : shards[s]) wm.emplace_back(t.name, names[s]);
  return wm;
}

TEST(SafetensorsRoundTrip, IndexAndShardsMustAgree) {
  TempDir dir;
  const auto shards = three_shards();
  const auto names = testing::write_sharded_safetensors(dir.path(), shards);
  auto wm = weight_map_of(shards, names);
  const std::string index = dir.file("model.safetensors.index.json");

  // Index points a tensor at the wrong shard.
  auto wrong = wm;
  wrong[0].second = names[2];
  write_index(dir, wrong, std::nullopt);
  auto r = open_model(dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::shard_mismatch);
  EXPECT_NE(r.error().to_string().find(names[0]), std::string::npos) << r.error().to_string();
  EXPECT_NE(r.error().to_string().find(names[2]), std::string::npos) << r.error().to_string();

  // A shard tensor the index does not list.
  auto fewer = wm;
  fewer.pop_back();
  write_index(dir, fewer, std::nullopt);
  r = open_model(dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::shard_mismatch);
  EXPECT_NE(r.error().message.find("not in the index"), std::string::npos) << r.error().to_string();

  // The index lists a tensor no shard holds.
  auto more = wm;
  more.emplace_back("ghost.weight", names[1]);
  write_index(dir, more, std::nullopt);
  r = open_model(dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::shard_mismatch);
  EXPECT_EQ(r.error().file, index);
  EXPECT_NE(r.error().message.find("ghost.weight"), std::string::npos);
}

TEST(SafetensorsRoundTrip, TensorInTwoShardsIsRejected) {
  TempDir dir;
  auto shards = three_shards();
  shards[1].push_back(shards[0][0]);   // the same tensor in shard 1 and shard 2
  const auto names = testing::write_sharded_safetensors(dir.path(), shards);
  auto wm = weight_map_of(shards, names);
  // The index names it once, in shard 1.
  wm.erase(std::find(wm.begin(), wm.end(), std::make_pair(shards[0][0].name, names[1])));
  write_index(dir, wm, std::nullopt);
  auto r = open_model(dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::shard_mismatch);
  EXPECT_NE(r.error().message.find("two shards"), std::string::npos) << r.error().to_string();
}

TEST(SafetensorsRoundTrip, TotalSizeDisagreementIsAWarning) {
  TempDir dir;
  const auto shards = three_shards();
  const auto names = testing::write_sharded_safetensors(dir.path(), shards);
  write_index(dir, weight_map_of(shards, names), 12345);
  auto m = open_model(dir.path());
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  ASSERT_EQ(m->notes.size(), 1u);
  EXPECT_FALSE(m->notes[0].fails_check);
  EXPECT_NE(m->notes[0].message.find("12345"), std::string::npos);
}

TEST(SafetensorsRoundTrip, SparseTerabyteFileOpensWithoutTouchingData) {
  TempDir dir;
  testing::StWriteOptions o;
  o.sparse = true;
  std::vector<StTensor> huge = {{"big", "BF16", {1 << 20, 1 << 19}, {}, uint64_t{1} << 40}};
  const std::string path = dir.file("tb.safetensors");
  ASSERT_TRUE(testing::write_safetensors(path, huge, o));
  auto m = open_model(path);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->tensors[0].nbytes, uint64_t{1} << 40);
  EXPECT_EQ(m->files[0].map.size(), m->files[0].data_offset + (uint64_t{1} << 40));
}

}   // namespace
}   // namespace akview
