// One negative test per error the GGUF parser can produce (FORMATS.md §2.2-2.4), each built with
// the fixture writer from a valid model, plus the tolerated problems that become notes.
#include <gtest/gtest.h>

#include "core/formats/gguf.hpp"
#include "tests/gguf/gguf_test_util.hpp"

namespace akview::testing {
namespace {

constexpr uint64_t kHeaderBytes = 24;

uint64_t kv_bytes(const std::string& key, const GgufValue& v) { return 8 + key.size() + 4 + v.payload.size(); }

// Absolute offset of the first tensor info: after the header and every key.
uint64_t infos_start(const GgufWriter& w) {
  uint64_t at = kHeaderBytes;
  for (const auto& [k, v] : w.kvs()) at += kv_bytes(k, v);
  return at;
}

class GgufErrors : public ::testing::Test {
 protected:
  // Opens `w` and expects refusal with `code`; returns the error for further checks.
  Error expect_refused(const GgufWriter& w, ErrorCode code) {
    auto model = write_and_open(dir_, w);
    EXPECT_FALSE(model.ok()) << "accepted a broken file";
    if (model.ok()) return Error{};
    const Error e = model.error();
    EXPECT_EQ(error_info(e.code).slug, std::string(error_info(code).slug)) << e.to_string();
    EXPECT_EQ(e.file, dir_.file("m.gguf"));
    EXPECT_FALSE(e.message.empty());
    return e;
  }
  TempDir dir_;
};

TEST_F(GgufErrors, ValidControlOpens) {
  GgufWriter w = small_model();
  auto model = write_and_open(dir_, w);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  ASSERT_EQ(model->tensors.size(), 3u);
  EXPECT_TRUE(model->notes.empty());
  const auto offsets = w.data_offsets();
  const uint64_t data_start = w.header().size();
  EXPECT_EQ(model->files[0].data_offset, data_start);
  EXPECT_EQ(model->files[0].header_bytes, w.infos_end());
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(model->tensors[i].offset, data_start + offsets[i]);
  // ne [4,2,3] is numpy [3,2,4]; f16 = 48 bytes.
  auto shape = model->shape(model->tensors[2]);
  EXPECT_EQ(std::vector<int64_t>(shape.begin(), shape.end()), (std::vector<int64_t>{3, 2, 4}));
  EXPECT_EQ(model->tensors[2].nbytes, 48u);
  EXPECT_EQ(model->tensors[0].nbytes, 2u * 18 * 3);
}

TEST_F(GgufErrors, Version2IsAccepted) {
  GgufWriter w = small_model();
  w.options().version = 2;
  auto model = write_and_open(dir_, w);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  EXPECT_EQ(model->tensors.size(), 3u);
}

TEST_F(GgufErrors, Version1IsRefused) {
  GgufWriter w = small_model();
  w.options().version = 1;
  Error e = expect_refused(w, ErrorCode::bad_version);
  EXPECT_EQ(e.offset, 4u);
  EXPECT_NE(e.message.find("GGUF v1 is not supported"), std::string::npos) << e.message;
}

TEST_F(GgufErrors, UnknownVersionsAreRefused) {
  for (uint32_t version : {0u, 4u, 99u}) {
    GgufWriter w = small_model();
    w.options().version = version;
    Error e = expect_refused(w, ErrorCode::bad_version);
    EXPECT_NE(e.message.find(std::to_string(version)), std::string::npos) << e.message;
  }
}

TEST_F(GgufErrors, BigEndianIsDetectedAndRefused) {
  GgufWriter w = small_model();
  w.options().version = 0x03000000;   // v3 written big-endian, read little-endian
  Error e = expect_refused(w, ErrorCode::unsupported);
  EXPECT_EQ(e.offset, 4u);
  EXPECT_NE(e.message.find("big-endian"), std::string::npos) << e.message;
}

TEST_F(GgufErrors, BadMagic) {
  GgufWriter w = small_model();
  w.options().magic = {'G', 'G', 'U', 'X'};
  Error e = expect_refused(w, ErrorCode::bad_magic);
  EXPECT_EQ(e.offset, 0u);
  EXPECT_NE(e.message.find("GGUX"), std::string::npos);
}

TEST_F(GgufErrors, FileShorterThanTheHeader) {
  GgufWriter w = small_model();
  w.options().truncate_to = 10;
  expect_refused(w, ErrorCode::header_too_small);
}

TEST_F(GgufErrors, NegativeAndHugeCounts) {
  {
    GgufWriter w = small_model();
    w.options().n_tensors = -1;
    EXPECT_EQ(expect_refused(w, ErrorCode::count_too_large).offset, 8u);
  }
  {
    GgufWriter w = small_model();
    w.options().n_kv = -5;
    EXPECT_EQ(expect_refused(w, ErrorCode::count_too_large).offset, 16u);
  }
  {
    GgufWriter w = small_model();
    w.options().n_tensors = int64_t{1} << 60;   // 24 * 2^60 overflows: refused before any reserve
    EXPECT_EQ(expect_refused(w, ErrorCode::count_too_large).offset, 8u);
  }
  {
    GgufWriter w = small_model();
    w.options().n_kv = 1000;   // 12 000 bytes of keys cannot fit
    EXPECT_EQ(expect_refused(w, ErrorCode::count_too_large).offset, 16u);
  }
  {
    // Enough bytes for the keys, but the tensor count is checked again where the infos start.
    GgufWriter w = small_model();
    w.set("pad", gguf_string(std::string(3000, 'x')));
    w.options().n_tensors = 100;   // 2400 bytes: fits after the header, not after the keys
    expect_refused(w, ErrorCode::count_too_large);
  }
}

TEST_F(GgufErrors, StringLengthsPastTheEnd) {
  {
    GgufWriter w = small_model();
    w.set("general.name", gguf_string_raw(uint64_t{1} << 40, "abc"));
    Error e = expect_refused(w, ErrorCode::count_too_large);
    EXPECT_EQ(e.offset, infos_start(w) - kv_bytes("general.name", w.kvs().back().second) + 8 + 12 + 4);
  }
  {
    GgufWriter w = small_model();
    w.tensors()[1].name_len = uint64_t{1} << 50;
    expect_refused(w, ErrorCode::count_too_large);
  }
  {
    // A key whose length runs past the end (as in the oracle gguf_key_len_beyond_eof).
    GgufWriter w;
    w.set("k", gguf_u8(1));
    std::vector<uint8_t> bytes = w.bytes();
    bytes[24] = 0xff;   // low byte of the key length
    bytes[29] = 0x01;   // 2^40 + 0xff
    const std::string path = dir_.file("m.gguf");
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    auto model = open_model(path);
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(model.error().code, ErrorCode::count_too_large);
    EXPECT_EQ(model.error().offset, 24u);
  }
}

TEST_F(GgufErrors, ArrayCountsPastTheEnd) {
  struct Case {
    uint32_t elem_type;
    uint64_t count;
  };
  for (Case c : {Case{kGgufU8, uint64_t{1} << 62}, Case{kGgufU64, uint64_t{1} << 62} /* count*8 overflows */,
                 Case{kGgufString, 1000}, Case{kGgufArray, 1000}, Case{kGgufF32, 100}}) {
    GgufWriter w = small_model();
    w.set("test.arr", gguf_array_raw(c.elem_type, c.count, {1, 2, 3, 4}));
    Error e = expect_refused(w, ErrorCode::count_too_large);
    EXPECT_NE(e.message.find("test.arr"), std::string::npos) << e.message;
  }
  {
    // A string element inside an array whose length runs past the end.
    GgufWriter w = small_model();
    w.set("test.strs", gguf_array(kGgufString, {gguf_string("ok"), gguf_string_raw(uint64_t{1} << 33, "x")}));
    expect_refused(w, ErrorCode::count_too_large);
  }
}

TEST_F(GgufErrors, FileEndsInsideAValue) {
  GgufWriter w;
  w.set("k", gguf_u32(7));
  w.options().truncate_to = 24 + 8 + 1 + 4 + 2;   // two of the value's four bytes
  Error e = expect_refused(w, ErrorCode::truncated);
  EXPECT_EQ(e.offset, 24u + 8 + 1 + 4);
}

TEST_F(GgufErrors, UnknownValueTypes) {
  {
    GgufWriter w = small_model();
    w.set("test.bad", GgufValue{13, {0, 0, 0, 0}});
    Error e = expect_refused(w, ErrorCode::unknown_type);
    EXPECT_NE(e.message.find("13"), std::string::npos);
  }
  {
    GgufWriter w = small_model();
    w.set("test.arr", gguf_array_raw(42, 1, {0, 0, 0, 0}));
    expect_refused(w, ErrorCode::unknown_type);
  }
}

TEST_F(GgufErrors, EmptyKey) {
  GgufWriter w = small_model();
  w.add("", gguf_u8(1));
  Error e = expect_refused(w, ErrorCode::schema);
  EXPECT_NE(e.message.find("empty"), std::string::npos);
}

TEST_F(GgufErrors, DuplicateKeyNamesTheSecondOccurrence) {
  GgufWriter w = small_model();
  w.add("llama.block_count", gguf_u32(2));
  Error e = expect_refused(w, ErrorCode::duplicate_key);
  EXPECT_EQ(e.offset, infos_start(w) - kv_bytes("llama.block_count", gguf_u32(2)));
  EXPECT_NE(e.message.find("llama.block_count"), std::string::npos);
}

TEST_F(GgufErrors, Alignment) {
  for (uint32_t bad : {0u, 48u, 3u}) {
    GgufWriter w = small_model();
    w.set("general.alignment", gguf_u32(bad));
    Error e = expect_refused(w, ErrorCode::bad_alignment);
    EXPECT_NE(e.message.find(std::to_string(bad)), std::string::npos);
  }
  {
    GgufWriter w = small_model();
    w.set("general.alignment", gguf_u64(64));   // must be UINT32
    Error e = expect_refused(w, ErrorCode::bad_alignment);
    EXPECT_NE(e.message.find("UINT32"), std::string::npos);
  }
  {
    GgufWriter w = small_model();
    w.tensors()[1].offset = w.data_offsets()[1] + 4;
    Error e = expect_refused(w, ErrorCode::bad_alignment);
    EXPECT_NE(e.message.find("blk.0.attn_norm.weight"), std::string::npos);
  }
  {
    // A custom alignment is honoured for padding and offsets.
    GgufWriter w = small_model();
    w.set_alignment(256);
    auto model = write_and_open(dir_, w);
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    EXPECT_EQ(model->files[0].data_offset % 256, 0u);
    EXPECT_EQ(model->tensors[1].offset - model->files[0].data_offset, 256u);
  }
}

TEST_F(GgufErrors, TooManyDims) {
  GgufWriter w = small_model();
  w.tensors()[0].ne = {64, 1, 1, 1, 3};
  expect_refused(w, ErrorCode::too_many_dims);
}

TEST_F(GgufErrors, NegativeDimension) {
  GgufWriter w = small_model();
  w.tensors()[1].ne = {-5};
  w.tensors()[1].data.assign(20, 0);
  expect_refused(w, ErrorCode::bad_shape);
}

TEST_F(GgufErrors, RowNotAMultipleOfTheBlock) {
  GgufWriter w = small_model();
  w.tensors()[0].ne = {48, 3};   // q4_0 blocks hold 32
  w.tensors()[0].data.assign(18 * 3, 0);
  Error e = expect_refused(w, ErrorCode::bad_shape);
  EXPECT_NE(e.message.find("32"), std::string::npos);
}

TEST_F(GgufErrors, ElementCountAndByteSizeOverflow) {
  {
    GgufWriter w = small_model();
    w.tensors()[1].ne = {int64_t{1} << 62, int64_t{1} << 62};
    w.tensors()[1].data.assign(4, 0);
    expect_refused(w, ErrorCode::overflow);
  }
  {
    GgufWriter w = small_model();
    w.tensors()[1].ne = {int64_t{1} << 61, 2};   // 2^62 elements fit; 2^62 * 4 bytes do not
    w.tensors()[1].data.assign(4, 0);
    Error e = expect_refused(w, ErrorCode::overflow);
    EXPECT_NE(e.message.find("byte size"), std::string::npos) << e.message;
  }
}

TEST_F(GgufErrors, UnknownAndRemovedTensorTypes) {
  {
    GgufWriter w = small_model();
    w.tensors()[1].ggml_type = 200;
    w.tensors()[1].data.assign(20, 0);
    Error e = expect_refused(w, ErrorCode::unknown_type);
    EXPECT_NE(e.message.find("200"), std::string::npos);
  }
  {
    GgufWriter w = small_model();
    w.tensors()[1].ggml_type = 43;   // GGML_TYPE_COUNT
    w.tensors()[1].data.assign(20, 0);
    expect_refused(w, ErrorCode::unknown_type);
  }
  for (uint32_t removed : {4u, 33u, 38u}) {
    GgufWriter w = small_model();
    w.tensors()[1].ggml_type = removed;
    w.tensors()[1].data.assign(20, 0);
    Error e = expect_refused(w, ErrorCode::unknown_type);
    EXPECT_NE(e.message.find("removed"), std::string::npos) << e.message;
  }
}

TEST_F(GgufErrors, OffsetsMustFollowEachOther) {
  {
    GgufWriter w = small_model();   // tensor 2 placed over tensor 1
    w.tensors()[2].offset = w.data_offsets()[1];
    Error e = expect_refused(w, ErrorCode::bad_offset);
    EXPECT_NE(e.message.find("expected " + std::to_string(w.data_offsets()[2])), std::string::npos) << e.message;
  }
  {
    GgufWriter w = small_model();   // a gap
    w.tensors()[1].offset = w.data_offsets()[1] + 64;
    expect_refused(w, ErrorCode::bad_offset);
  }
  {
    GgufWriter w = small_model();   // reversed
    w.tensors()[0].offset = w.data_offsets()[1];
    expect_refused(w, ErrorCode::bad_offset);
  }
}

TEST_F(GgufErrors, DataPastTheEndOfTheFile) {
  GgufWriter w = small_model();
  w.options().truncate_to = w.file_size() - 1;
  Error e = expect_refused(w, ErrorCode::out_of_bounds);
  EXPECT_NE(e.message.find("output.weight"), std::string::npos);
  EXPECT_NE(e.message.find("past the end"), std::string::npos);
}

TEST_F(GgufErrors, DuplicateTensor) {
  GgufWriter w = small_model();
  w.add_tensor({"blk.0.attn_norm.weight", kGgmlF32, {5}});
  Error e = expect_refused(w, ErrorCode::duplicate_tensor);
  EXPECT_NE(e.message.find("blk.0.attn_norm.weight"), std::string::npos);
}

TEST_F(GgufErrors, ArraysNestedTooDeep) {
  GgufValue v = gguf_array(kGgufI32, {gguf_i32(1)});
  for (int i = 0; i < 12; ++i) v = gguf_array(kGgufArray, {v});
  GgufWriter w = small_model();
  w.set("test.deep", v);
  Error e = expect_refused(w, ErrorCode::unsupported);
  EXPECT_NE(e.message.find("nested"), std::string::npos);
}

TEST_F(GgufErrors, BrokenDotGgufGetsGgufsErrorOtherFilesAreUnrecognised) {
  const std::string junk = "definitely not a model";
  for (const std::string name : {"junk.gguf", "junk.bin"}) {
    FILE* f = std::fopen(dir_.file(name).c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(junk.data(), 1, junk.size(), f);
    std::fclose(f);
  }
  auto gguf = open_model(dir_.file("junk.gguf"));
  ASSERT_FALSE(gguf.ok());
  EXPECT_EQ(gguf.error().code, ErrorCode::bad_magic);
  auto other = open_model(dir_.file("junk.bin"));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ErrorCode::not_recognized);
}

// Problems akview tolerates: the model opens and a note says what is wrong.
TEST_F(GgufErrors, TolerableProblemsBecomeNotes) {
  GgufWriter w = small_model();
  w.set("general.name", gguf_string("bad \xff\xfe utf8"));
  w.set("test.flag", GgufValue{kGgufBool, {2}});
  w.add_tensor({std::string(64, 'n'), kGgmlF32, {2}});   // ggml allows 63 bytes
  auto model = write_and_open(dir_, w);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  ASSERT_EQ(model->notes.size(), 3u);
  EXPECT_EQ(model->notes[0].code, ErrorCode::bad_utf8);
  EXPECT_EQ(model->notes[1].code, ErrorCode::schema);
  EXPECT_NE(model->notes[2].message.find("63"), std::string::npos);
  for (const auto& n : model->notes) {
    EXPECT_TRUE(n.fails_check);
    EXPECT_NE(n.offset, kNoOffset);
  }
  EXPECT_EQ(model->find_meta("test.flag")->value.num.u, 1u);
  EXPECT_EQ(model->tensors.size(), 4u);
}

}   // namespace
}   // namespace akview::testing

namespace akview::testing {
namespace {

// 70 000 tensors: all listed and findable; a duplicate of an early name in the last info is found.
TEST(GgufManyTensors, SeventyThousandTensorsAndALateDuplicate) {
  TempDir dir;
  GgufWriter w;
  w.options().alignment = 4;
  w.set_alignment(4);
  for (int i = 0; i < 70000; ++i) w.add_tensor({std::string("t").append(std::to_string(i)), kGgmlF32, {1}});
  auto ok = write_and_open(dir, w);
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  EXPECT_EQ(ok->tensors.size(), 70000u);
  EXPECT_EQ(ok->find("t69999"), &ok->tensors.back());
  w.tensors().back().name = "t3";
  auto dup = write_and_open(dir, w, "dup.gguf");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, ErrorCode::duplicate_tensor);
  EXPECT_NE(dup.error().message.find("'t3'"), std::string::npos);
}

}   // namespace
}   // namespace akview::testing
