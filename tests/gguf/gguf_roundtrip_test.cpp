// Round trips through the fixture writer: every metadata value type (arrays included, nested and
// empty), tensors of several types, split sets of 3 parts opened from each part, and directories.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "core/formats/gguf.hpp"
#include "core/formats/gguf_meta.hpp"
#include "core/formats/gguf_split.hpp"
#include "tests/gguf/gguf_test_util.hpp"

namespace akview::testing {
namespace {

std::vector<MetaValue> elements(const Model& model, std::string_view key) {
  const MetaEntry* e = model.find_meta(key);
  EXPECT_NE(e, nullptr) << key;
  if (!e) return {};
  auto values = read_gguf_array(model, *e, e->value, 1000);
  EXPECT_TRUE(values.ok()) << values.error().to_string();
  return values.ok() ? *values : std::vector<MetaValue>{};
}

TEST(GgufRoundTrip, EveryValueType) {
  TempDir dir;
  GgufWriter w;
  w.set("u8", gguf_u8(250)).set("i8", gguf_i8(-128)).set("u16", gguf_u16(65535)).set("i16", gguf_i16(-32768));
  w.set("u32", gguf_u32(4294967295u)).set("i32", gguf_i32(std::numeric_limits<int32_t>::min()));
  w.set("f32", gguf_f32(-0.1f)).set("bool", gguf_bool(true)).set("str", gguf_string("caf\xc3\xa9 \"q\"\n"));
  w.set("u64", gguf_u64((uint64_t{1} << 63) + 3)).set("i64", gguf_i64(std::numeric_limits<int64_t>::min()));
  w.set("f64", gguf_f64(-1e300));
  w.set("arr.u64", gguf_array(kGgufU64, {gguf_u64(~uint64_t{0}), gguf_u64(0)}));
  w.set("arr.str", gguf_array(kGgufString, {gguf_string("a"), gguf_string(""), gguf_string("\xe6\x97\xa5")}));
  w.set("arr.empty", gguf_array(kGgufF32, {}));
  w.set("arr.empty_str", gguf_array(kGgufString, {}));
  w.set("arr.nested", gguf_array(kGgufArray, {gguf_array(kGgufString, {gguf_string("x")}),
                                              gguf_array(kGgufU8, {gguf_u8(1), gguf_u8(2)})}));
  w.set("after", gguf_i16(42));
  auto model = write_and_open(dir, w);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  ASSERT_EQ(model->meta.size(), w.kvs().size());
  auto get = [&](std::string_view k) { return model->find_meta(k)->value; };
  EXPECT_EQ(get("u8").num.u, 250u);
  EXPECT_EQ(get("i8").num.i, -128);
  EXPECT_EQ(get("u16").num.u, 65535u);
  EXPECT_EQ(get("i16").num.i, -32768);
  EXPECT_EQ(get("u32").num.u, 4294967295u);
  EXPECT_EQ(get("i32").num.i, std::numeric_limits<int32_t>::min());
  EXPECT_EQ(get("f32").num.f, static_cast<double>(-0.1f));
  EXPECT_EQ(get("bool").type, MetaType::boolean);
  EXPECT_EQ(get("bool").num.u, 1u);
  EXPECT_EQ(get("str").str, "caf\xc3\xa9 \"q\"\n");
  EXPECT_EQ(get("u64").num.u, (uint64_t{1} << 63) + 3);
  EXPECT_EQ(get("i64").num.i, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(get("f64").num.f, -1e300);
  EXPECT_EQ(get("after").num.i, 42);

  auto u64s = elements(*model, "arr.u64");
  ASSERT_EQ(u64s.size(), 2u);
  EXPECT_EQ(u64s[0].num.u, ~uint64_t{0});
  auto strs = elements(*model, "arr.str");
  ASSERT_EQ(strs.size(), 3u);
  EXPECT_EQ(strs[1].str, "");
  EXPECT_EQ(strs[2].str, "\xe6\x97\xa5");
  EXPECT_EQ(get("arr.str").elems_bytes, 3u * 8 + 1 + 0 + 3);
  EXPECT_TRUE(elements(*model, "arr.empty").empty());
  EXPECT_EQ(get("arr.empty").elem_type, MetaType::f32);
  EXPECT_TRUE(elements(*model, "arr.empty_str").empty());

  const MetaEntry* nested = model->find_meta("arr.nested");
  auto outer = elements(*model, "arr.nested");
  ASSERT_EQ(outer.size(), 2u);
  EXPECT_EQ(outer[0].elem_type, MetaType::string);
  EXPECT_EQ(outer[1].elem_type, MetaType::u8);
  auto inner = read_gguf_array(*model, *nested, outer[1], 10);
  ASSERT_TRUE(inner.ok());
  ASSERT_EQ(inner->size(), 2u);
  EXPECT_EQ((*inner)[1].num.u, 2u);
  auto inner_str = read_gguf_array(*model, *nested, outer[0], 10);
  ASSERT_TRUE(inner_str.ok());
  EXPECT_EQ((*inner_str)[0].str, "x");

  // meta_integer reads any integer width, and refuses what is not an integer.
  EXPECT_EQ(meta_integer(get("u16")), 65535);
  EXPECT_EQ(meta_integer(get("i8")), -128);
  EXPECT_FALSE(meta_integer(get("u64")).has_value());   // above INT64_MAX
  EXPECT_FALSE(meta_integer(get("f32")).has_value());
}

TEST(GgufRoundTrip, DecodingAScalarAsAnArrayIsAnError) {
  TempDir dir;
  GgufWriter w = small_model();
  auto model = write_and_open(dir, w);
  ASSERT_TRUE(model.ok());
  const MetaEntry* e = model->find_meta("llama.block_count");
  auto r = read_gguf_array(*model, *e, e->value, 10);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::schema);
  // A forged range outside the file is refused, not read.
  MetaValue forged = e->value;
  forged.type = MetaType::array;
  forged.elem_type = MetaType::u32;
  forged.count = uint64_t{1} << 40;
  forged.elems_offset = 16;
  forged.elems_bytes = uint64_t{1} << 42;
  auto f = read_gguf_array(*model, *e, forged, ~uint64_t{0});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code, ErrorCode::out_of_bounds);
}

TEST(GgufSplitName, ParsesTheSetPattern) {
  auto n = parse_gguf_split_name("some/dir/Model-Q4-00002-of-00003.gguf");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->dir, "some/dir/");
  EXPECT_EQ(n->base, "Model-Q4");
  EXPECT_EQ(n->part, 2u);
  EXPECT_EQ(n->count, 3u);
  EXPECT_EQ(gguf_split_path(*n, 3), "some/dir/Model-Q4-00003-of-00003.gguf");
  EXPECT_FALSE(parse_gguf_split_name("model.gguf").has_value());
  EXPECT_FALSE(parse_gguf_split_name("m-0002-of-0003.gguf").has_value());     // 4 digits
  EXPECT_FALSE(parse_gguf_split_name("m-00004-of-00003.gguf").has_value());   // part > count
  EXPECT_FALSE(parse_gguf_split_name("m-00000-of-00003.gguf").has_value());   // parts are 1-based
  EXPECT_FALSE(parse_gguf_split_name("m-00001-of-00003.bin").has_value());
}

GgufWriter split_model() {
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.set("general.name", gguf_string("split"));
  for (int i = 0; i < 7; ++i) w.add_tensor({"blk." + std::to_string(i) + ".w", i % 2 ? kGgmlF32 : kGgmlQ8_0, {32, 3}});
  return w;
}

TEST(GgufSplit, ThreePartsOpenFromEachPart) {
  TempDir dir;
  GgufWriter w = split_model();
  auto paths = write_gguf_split(dir.path(), "tiny", 3, w);
  ASSERT_EQ(paths.size(), 3u);
  for (const auto& path : paths) {
    SCOPED_TRACE(path);
    auto model = open_model(path);
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    EXPECT_EQ(model->format, "gguf-split");
    ASSERT_EQ(model->files.size(), 3u);
    for (uint32_t p = 0; p < 3; ++p) {
      EXPECT_EQ(model->files[p].role, "part " + std::to_string(p + 1) + "/3");
      EXPECT_EQ(model->files[p].path, paths[p]);
    }
    ASSERT_EQ(model->tensors.size(), 7u);
    // Tensors in set order, each offset relative to its own part's data section, made absolute.
    size_t per_part = 3;
    for (size_t i = 0; i < 7; ++i) {
      const Tensor& t = model->tensors[i];
      EXPECT_EQ(std::string(t.name), w.tensors()[i].name);
      EXPECT_EQ(t.file, i / per_part);
      const SourceFile& f = model->files[t.file];
      EXPECT_GE(t.offset, f.data_offset);
      EXPECT_EQ((t.offset - f.data_offset) % 32, 0u);
      EXPECT_EQ(model->data(t).size(), t.nbytes);
    }
    EXPECT_EQ(model->tensors[3].offset, model->files[1].data_offset);   // first tensor of part 2
    // The metadata of part 1 and the split keys of every part.
    ASSERT_NE(model->find_meta("general.name"), nullptr);
    size_t split_no = 0;
    for (const auto& m : model->meta) split_no += m.key == "split.no";
    EXPECT_EQ(split_no, 3u);
  }
}

TEST(GgufSplit, MissingPartNamesThePartAndTheSet) {
  TempDir dir;
  auto paths = write_gguf_split(dir.path(), "tiny", 3, split_model());
  ASSERT_EQ(paths.size(), 3u);
  std::remove(paths[1].c_str());
  auto model = open_model(paths[0]);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ErrorCode::missing_file);
  EXPECT_EQ(model.error().file, paths[1]);
  EXPECT_NE(model.error().message.find("part 2"), std::string::npos) << model.error().to_string();
  EXPECT_NE(model.error().message.find("tiny"), std::string::npos);
}

struct MismatchCase {
  const char* name;
  uint32_t part;
  std::function<void(GgufWriter&)> tweak;
  const char* message_part;
};

TEST(GgufSplit, DisagreementsAreShardMismatches) {
  const std::vector<MismatchCase> cases = {
      {"split.count", 2, [](GgufWriter& w) { w.set("split.count", gguf_u16(4)); }, "split.count = 4"},
      {"split.no", 3, [](GgufWriter& w) { w.set("split.no", gguf_u32(0)); }, "split.no = 0"},
      {"tensors.count", 2, [](GgufWriter& w) { w.set("split.tensors.count", gguf_i32(8)); }, "tiny-00001-of-00003"},
      {"total", 0, nullptr, "hold 7 tensors"},
      {"missing key", 3, [](GgufWriter& w) { w.remove("split.no"); }, "no split.no"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    GgufSplitOptions opts;
    if (c.part) {
      opts.tweak = [&](uint32_t part, GgufWriter& w) {
        if (part == c.part) c.tweak(w);
      };
    } else {
      opts.tweak = [](uint32_t, GgufWriter& w) { w.set("split.tensors.count", gguf_u64(9)); };   // every part
    }
    auto paths = write_gguf_split(dir.path(), "tiny", 3, split_model(), opts);
    ASSERT_EQ(paths.size(), 3u);
    auto model = open_model(paths[2]);
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(model.error().code, ErrorCode::shard_mismatch) << model.error().to_string();
    EXPECT_NE(model.error().message.find(c.message_part), std::string::npos) << model.error().to_string();
    if (c.part) {
      EXPECT_EQ(model.error().file, paths[c.part - 1]);
    }
  }
}

TEST(GgufSplit, DuplicateTensorAcrossPartsNamesTheOtherPart) {
  TempDir dir;
  GgufSplitOptions opts;
  opts.tweak = [](uint32_t part, GgufWriter& w) {
    if (part == 2) w.tensors()[0].name = "blk.0.w";
  };
  auto paths = write_gguf_split(dir.path(), "tiny", 3, split_model(), opts);
  auto model = open_model(paths[0]);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ErrorCode::duplicate_tensor);
  EXPECT_EQ(model.error().file, paths[1]);
  EXPECT_NE(model.error().message.find(paths[0]), std::string::npos) << model.error().to_string();
}

TEST(GgufDir, OneModelOpensSeveralAreListed) {
  TempDir dir;
  ASSERT_TRUE(small_model().write(dir.file("only.gguf")));
  auto single = open_model(dir.path());
  ASSERT_TRUE(single.ok()) << single.error().to_string();
  EXPECT_EQ(single->format, "gguf");
  EXPECT_EQ(single->tensors.size(), 3u);

  TempDir split_dir;
  ASSERT_EQ(write_gguf_split(split_dir.path(), "tiny", 3, split_model()).size(), 3u);
  auto set = open_model(split_dir.path());
  ASSERT_TRUE(set.ok()) << set.error().to_string();
  EXPECT_EQ(set->format, "gguf-split");
  EXPECT_EQ(set->files.size(), 3u);

  ASSERT_TRUE(small_model().write(split_dir.file("other.gguf")));
  auto several = open_model(split_dir.path());
  ASSERT_FALSE(several.ok());
  EXPECT_EQ(several.error().code, ErrorCode::usage);
  EXPECT_NE(several.error().message.find("other.gguf"), std::string::npos) << several.error().to_string();
  EXPECT_NE(several.error().message.find("tiny-"), std::string::npos);
  EXPECT_NE(several.error().message.find("holds 2 models"), std::string::npos);
}

}   // namespace
}   // namespace akview::testing
