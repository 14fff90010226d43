// The sharded opener parses shard headers on several threads, beside the index, and joins them in
// the index's order: the model (files, tensors, shapes, metadata, notes) and the first error must be
// those of reading the shards one by one (add_safetensors_file in order), for any number of threads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/formats/format.hpp"
#include "core/formats/safetensors_file.hpp"
#include "core/formats/safetensors_index.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/st_writer.hpp"

namespace akview {
namespace {

using testing::StTensor;
using testing::StWriteOptions;
using testing::TempDir;

constexpr int kThreadCounts[] = {1, 2, 3, 8};

std::string shard_name(size_t i, size_t n) { return fmt::format("model-{:05d}-of-{:05d}.safetensors", i + 1, n); }

// `n` shards of a few tensors each, some with names that need JSON escapes (kept as interned
// strings, not views into the header), metadata in every shard.
std::vector<std::vector<StTensor>> many_shards(size_t n) {
  std::vector<std::vector<StTensor>> shards(n);
  for (size_t s = 0; s < n; ++s)
    for (int k = 0; k < 5; ++k) {
      std::string name = fmt::format("layers.{}.w{}", s, k);
      if (k == 3 && s % 4 == 1) name += "\"quoted\\";
      shards[s].push_back(StTensor{name,
                                   k % 2 ? "F16" : "F32",
                                   {static_cast<int64_t>(k + 1), static_cast<int64_t>(s % 3 + 1)},
                                   std::vector<uint8_t>((k + 1) * (s % 3 + 1) * (k % 2 ? 2 : 4), uint8_t(s + k))});
    }
  return shards;
}

// Writes the shards (each with its own metadata) under `names`, and the index mapping each
// tensor to its shard; returns the index's path.
std::string write_set(const TempDir& dir, const std::vector<std::vector<StTensor>>& shards,
                      const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::string>> weight_map;
  uint64_t total = 0;
  for (size_t s = 0; s < shards.size(); ++s) {
    StWriteOptions o;
    o.metadata = {{"format", "pt"}, {"shard", std::to_string(s)}};
    EXPECT_TRUE(testing::write_safetensors(dir.file(names[s]), shards[s], o));
    for (const auto& t : shards[s]) weight_map.emplace_back(t.name, names[s]);
    total += testing::st_data_bytes(shards[s]);
  }
  testing::StIndexOptions index;
  index.total_size = total;
  EXPECT_TRUE(testing::write_text(dir.file("model.safetensors.index.json"), testing::st_index_json(weight_map, index)));
  return dir.file("model.safetensors.index.json");
}

// What reading the shards one by one gives: the index as file 0, then each shard appended by
// add_safetensors_file in name order (as the opener orders them).
Result<Model> read_one_by_one(const std::string& index_path, std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  Model m;
  auto map = MappedFile::open(index_path);
  if (!map) return std::move(map).error();
  m.files.push_back(SourceFile{index_path, std::move(*map), "index", 0, 0});
  const std::string dir = index_path.substr(0, index_path.find_last_of('/') + 1);
  for (size_t i = 0; i < names.size(); ++i) {
    auto f = add_safetensors_file(m, dir + names[i], fmt::format("shard {}/{}", i + 1, names.size()));
    if (!f) return std::move(f).error();
  }
  return m;
}

// Shard-side contents equal element by element (the index's own metadata comes first in `got`).
void expect_same_shards(const Model& got, const Model& want) {
  ASSERT_EQ(got.files.size(), want.files.size());
  for (size_t f = 1; f < got.files.size(); ++f) {
    EXPECT_EQ(got.files[f].path, want.files[f].path);
    EXPECT_EQ(got.files[f].role, want.files[f].role);
    EXPECT_EQ(got.files[f].header_bytes, want.files[f].header_bytes);
    EXPECT_EQ(got.files[f].data_offset, want.files[f].data_offset);
  }
  ASSERT_EQ(got.tensors.size(), want.tensors.size());
  for (size_t k = 0; k < got.tensors.size(); ++k) {
    const Tensor &a = got.tensors[k], &b = want.tensors[k];
    SCOPED_TRACE(fmt::format("tensor {} ({})", k, b.name));
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.file, b.file);
    EXPECT_EQ(a.offset, b.offset);
    EXPECT_EQ(a.nbytes, b.nbytes);
    EXPECT_EQ(a.flags, b.flags);
    const auto sa = got.shape(a), sb = want.shape(b);
    EXPECT_EQ(std::vector<int64_t>(sa.begin(), sa.end()), std::vector<int64_t>(sb.begin(), sb.end()));
    EXPECT_EQ(got.find(a.name), &a);
  }
  ASSERT_GE(got.meta.size(), want.meta.size());
  const size_t index_meta = got.meta.size() - want.meta.size();
  for (size_t k = 0; k < want.meta.size(); ++k) {
    const MetaEntry &a = got.meta[index_meta + k], &b = want.meta[k];
    EXPECT_EQ(a.key, b.key);
    EXPECT_EQ(a.value.str, b.value.str);
    EXPECT_EQ(a.file, b.file);
    EXPECT_EQ(a.offset, b.offset);
    EXPECT_EQ(a.source, b.source);
  }
  ASSERT_EQ(got.notes.size(), want.notes.size());
  for (size_t k = 0; k < want.notes.size(); ++k) EXPECT_EQ(got.notes[k].message, want.notes[k].message);
}

// The set opens, for every thread count, as reading its shards one by one does.
void expect_opens_as_one_by_one(const std::string& index, const std::vector<std::string>& names) {
  auto want = read_one_by_one(index, names);
  ASSERT_TRUE(want.ok()) << want.error().to_string();
  for (int threads : kThreadCounts) {
    SCOPED_TRACE(fmt::format("{} threads", threads));
    auto got = open_safetensors_index(index, {}, threads);
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    expect_same_shards(*got, *want);
  }
}

void expect_same_error(const Result<Model>& got, const Error& want) {
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, want.code);
  EXPECT_EQ(got.error().file, want.file);
  EXPECT_EQ(got.error().offset, want.offset);
  EXPECT_EQ(got.error().message, want.message);
}

TEST(ShardedParallelOpen, ManyShardsEqualReadingThemOneByOne) {
  TempDir dir;
  const size_t n = 40;
  const auto shards = many_shards(n);
  std::vector<std::string> names;
  for (size_t s = 0; s < n; ++s) names.push_back(shard_name(s, n));
  const std::string index = write_set(dir, shards, names);
  expect_opens_as_one_by_one(index, names);
}

// Shards the index names otherwise than NAME-0000i-of-0000n (not guessed from the folder) are parsed
// once the index has named them; a guessed file the index does not name is no part of the model.
TEST(ShardedParallelOpen, ShardsNamedOtherwiseAndStrayFilesBeside) {
  TempDir dir;
  const auto shards = many_shards(6);
  const std::vector<std::string> names = {"a.safetensors",  shard_name(1, 6), "weights-b.safetensors",
                                          shard_name(3, 6), "c.safetensors",  shard_name(5, 6)};
  const std::string index = write_set(dir, shards, names);
  // A broken file named as a shard, which the index does not name.
  ASSERT_TRUE(testing::write_text(dir.file(shard_name(6, 9)), "not a safetensors file"));
  expect_opens_as_one_by_one(index, names);
}

// The guessed shards are joined as soon as they are parsed, before the index says which it names: a
// well-formed shard beside them that the index does not name undoes that join (it is no part of the
// model, its tensors neither).
TEST(ShardedParallelOpen, AWellFormedShardTheIndexDoesNotNameIsLeftOut) {
  TempDir dir;
  const auto shards = many_shards(4);
  std::vector<std::string> names;
  for (size_t s = 0; s < 4; ++s) names.push_back(shard_name(s, 4));
  const std::string index = write_set(dir, shards, names);
  ASSERT_TRUE(testing::write_safetensors(dir.file(shard_name(6, 9)), many_shards(7)[6]));
  expect_opens_as_one_by_one(index, names);
}

// Errors in two shards: the first in file order is the open's, whatever thread finished first.
TEST(ShardedParallelOpen, FirstBrokenShardInFileOrderIsTheError) {
  TempDir dir;
  const size_t n = 30;
  auto shards = many_shards(n);
  shards[7][2].dtype = "F15";   // an unknown dtype in shard 8
  std::vector<std::string> names;
  for (size_t s = 0; s < n; ++s) names.push_back(shard_name(s, n));
  const std::string index = write_set(dir, shards, names);
  // Shard 24 cut short (its data section ends early): a second error, later in file order.
  StWriteOptions cut;
  cut.missing_data_bytes = 4;
  ASSERT_TRUE(testing::write_safetensors(dir.file(names[23]), shards[23], cut));
  auto want = read_one_by_one(index, names);
  ASSERT_FALSE(want.ok());
  EXPECT_EQ(want.error().file, dir.file(names[7]));
  for (int threads : kThreadCounts) {
    SCOPED_TRACE(fmt::format("{} threads", threads));
    expect_same_error(open_safetensors_index(index, {}, threads), want.error());
  }
}

// A header that repeats a tensor name (its shards' names are checked once, by the model's name
// index): the error of reading the shards one by one, file, offset and all; also where the
// repeated name needs escapes, and where the same shard's layout is broken too (the repeat first).
TEST(ShardedParallelOpen, NameRepeatedInOneShardIsThatShardsError) {
  const size_t n = 12;
  auto plain = [](std::vector<std::vector<StTensor>>& s) { s[5].push_back(s[5][0]); };
  auto escaped = [](std::vector<std::vector<StTensor>>& s) { s[5].push_back(s[5][3]); };   // shard 6: "…\"quoted\\"
  auto with_layout = [](std::vector<std::vector<StTensor>>& s) {
    s[9].push_back(s[9][1]);
    s[9][2].nbytes = 1;   // and a data size that disagrees with the shape
    s[9][2].bytes.clear();
  };
  for (auto* change : {+plain, +escaped, +with_layout}) {
    TempDir dir;
    auto shards = many_shards(n);
    change(shards);
    std::vector<std::string> names;
    for (size_t s = 0; s < n; ++s) names.push_back(shard_name(s, n));
    // The index names every tensor once; the shard's header names one twice.
    std::vector<std::pair<std::string, std::string>> weight_map;
    for (size_t s = 0; s < n; ++s) {
      StWriteOptions o;
      o.sort = false;
      ASSERT_TRUE(testing::write_safetensors(dir.file(names[s]), shards[s], o));
      for (size_t k = 0; k < 5; ++k) weight_map.emplace_back(shards[s][k].name, names[s]);
    }
    const std::string index = dir.file("model.safetensors.index.json");
    ASSERT_TRUE(testing::write_text(index, testing::st_index_json(weight_map, {})));
    auto want = read_one_by_one(index, names);
    ASSERT_FALSE(want.ok());
    EXPECT_EQ(want.error().code, ErrorCode::duplicate_tensor) << want.error().to_string();
    for (int threads : kThreadCounts) {
      SCOPED_TRACE(fmt::format("{} threads", threads));
      expect_same_error(open_safetensors_index(index, {}, threads), want.error());
    }
  }
}

// The index's own errors come before any shard's: a name the weight_map repeats, also when the
// index breaks further on and when shards are broken too.
TEST(ShardedParallelOpen, IndexRepeatedNameComesBeforeShardErrors) {
  TempDir dir;
  auto shards = many_shards(5);
  shards[2][1].dtype = "F15";   // a shard the index names
  std::vector<std::string> names;
  for (size_t s = 0; s < 5; ++s) names.push_back(shard_name(s, 5));
  const std::string index = write_set(dir, shards, names);
  const std::string dup = fmt::format(
      R"({{"metadata": {{}}, "weight_map": {{"layers.0.w0": "{}", "layers.0.w1": "{}", "layers.0.w0": "{}")", names[0],
      names[0], names[2]);
  const uint64_t second = dup.rfind("\"layers.0.w0\"");
  for (const std::string& text : {dup + "}}", dup + ", 7}}"}) {
    ASSERT_TRUE(testing::write_text(index, text));
    for (int threads : kThreadCounts) {
      SCOPED_TRACE(fmt::format("{} threads, index {}", threads, text));
      auto got = open_safetensors_index(index, {}, threads);
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.error().code, ErrorCode::duplicate_key) << got.error().to_string();
      EXPECT_EQ(got.error().file, index);
      EXPECT_EQ(got.error().offset, second);
    }
  }
}

// The names guessed as shards before the index is read.
TEST(ShardedParallelOpen, ShardNames) {
  EXPECT_TRUE(is_safetensors_shard_name("model-00001-of-00163.safetensors"));
  EXPECT_TRUE(is_safetensors_shard_name("diffusion_pytorch_model-2-of-3.safetensors"));
  EXPECT_FALSE(is_safetensors_shard_name("model.safetensors"));
  EXPECT_FALSE(is_safetensors_shard_name("model-00001-of-00163.safetensors.index.json"));
  EXPECT_FALSE(is_safetensors_shard_name("model-0000a-of-00163.safetensors"));
  EXPECT_FALSE(is_safetensors_shard_name("model-00001-of-.safetensors"));
  EXPECT_FALSE(is_safetensors_shard_name("model--of-00002.safetensors"));
}

}   // namespace
}   // namespace akview
