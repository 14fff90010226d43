// One negative test per ErrorCode the SafeTensors path can produce (FORMATS.md §1.2-1.3, §1.7),
// plus the tolerated variants (leading whitespace, unknown fields, null metadata, unsorted headers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "core/formats/format.hpp"
#include "core/formats/safetensors.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/writers/st_writer.hpp"

namespace akview {
namespace {

using testing::StTensor;
using testing::StWriteOptions;
using testing::TempDir;

std::vector<StTensor> two_tensors() {
  return {{"a", "F32", {2, 2}, std::vector<uint8_t>(16, 1)}, {"b", "BF16", {3}, std::vector<uint8_t>(6, 2)}};
}

Result<Model> open_written(const TempDir& dir, const std::vector<StTensor>& tensors, const StWriteOptions& options,
                           const std::string& name = "m.safetensors") {
  const std::string path = dir.file(name);
  EXPECT_TRUE(testing::write_safetensors(path, tensors, options));
  return open_model(path);
}

// A file whose header is `json` (data: `data_bytes` zero bytes).
Result<Model> open_header(const TempDir& dir, const std::string& json, uint64_t data_bytes,
                          StWriteOptions options = {}) {
  options.header = json;
  return open_written(dir, {{"raw", "U8", {static_cast<int64_t>(data_bytes)}, std::vector<uint8_t>(data_bytes, 0)}},
                      options);
}

void expect_error(const Result<Model>& r, ErrorCode code, const std::string& needle = "") {
  ASSERT_FALSE(r.ok()) << "accepted, expected " << error_info(code).slug;
  EXPECT_EQ(r.error().code, code) << r.error().to_string();
  EXPECT_NE(r.error().offset, kNoOffset) << r.error().to_string();
  EXPECT_FALSE(r.error().file.empty());
  if (!needle.empty()) {
    EXPECT_NE(r.error().to_string().find(needle), std::string::npos) << r.error().to_string();
  }
}

TEST(SafetensorsRules, ValidFileOpensWithAbsoluteOffsets) {
  TempDir dir;
  StWriteOptions o;
  o.metadata = {{"format", "pt"}};
  auto m = open_written(dir, two_tensors(), o);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->format, "safetensors");
  ASSERT_EQ(m->tensors.size(), 2u);
  const SourceFile& f = m->files[0];
  EXPECT_EQ(f.role, "model");
  EXPECT_EQ(f.data_offset % 8, 0u);
  EXPECT_EQ(f.header_bytes, f.data_offset);
  // Reference order: F32 (wider) before BF16.
  EXPECT_EQ(m->find("a")->offset, f.data_offset);
  EXPECT_EQ(m->find("b")->offset, f.data_offset + 16);
  EXPECT_EQ(m->find("b")->type, TypeId::bf16);
  const MetaEntry* fmt = m->find_meta("format");
  ASSERT_NE(fmt, nullptr);
  EXPECT_EQ(fmt->value.str, "pt");
  EXPECT_EQ(fmt->source, "safetensors");
  EXPECT_EQ(fmt->value.type, MetaType::string);
  EXPECT_TRUE(m->notes.empty());
}

TEST(SafetensorsRules, IoErrorForAMissingFile) {
  Model m;
  auto r = add_safetensors_file(m, "/nonexistent/x.safetensors", "model");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::io);
}

TEST(SafetensorsRules, HeaderTooSmall) {
  TempDir dir;
  ASSERT_TRUE(testing::write_text(dir.file("s.safetensors"), "abc"));
  expect_error(open_model(dir.file("s.safetensors")), ErrorCode::header_too_small, "8-byte");
}

TEST(SafetensorsRules, HeaderTooLargeAboveTheCapAndExactCapAccepted) {
  TempDir dir;
  StWriteOptions o;
  o.header_len = 100'000'001;
  expect_error(open_written(dir, two_tensors(), o), ErrorCode::header_too_large, "100,000,000");
  // N == 100,000,000 exactly is accepted: "{}" padded with spaces.
  StWriteOptions cap;
  cap.header = "{}" + std::string(100'000'000 - 2, ' ');
  cap.pad = false;
  auto m = open_written(dir, {}, cap, "cap.safetensors");
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->files[0].data_offset, 100'000'008u);
  EXPECT_TRUE(m->tensors.empty());
}

TEST(SafetensorsRules, HeaderLengthPastTheFile) {
  TempDir dir;
  StWriteOptions o;
  o.header_len = 4000;
  expect_error(open_written(dir, two_tensors(), o), ErrorCode::header_length, "4000");
}

TEST(SafetensorsRules, BadUtf8InTheHeader) {
  TempDir dir;
  auto r = open_header(dir, "{\"a\xff\":1}", 0);
  expect_error(r, ErrorCode::bad_utf8);
  EXPECT_EQ(r.error().offset, 8u + 3);
}

TEST(SafetensorsRules, BadJsonIncludingNulPaddingAndEmptyHeader) {
  TempDir dir;
  expect_error(open_header(dir, "{\"a\":", 0), ErrorCode::bad_json);
  StWriteOptions nul;
  nul.padding = std::string(3, '\0');
  expect_error(open_written(dir, two_tensors(), nul), ErrorCode::bad_json, "0x00");
  StWriteOptions empty;
  empty.header = "";
  empty.pad = false;
  expect_error(open_written(dir, {}, empty), ErrorCode::bad_json, "empty");
}

TEST(SafetensorsRules, SchemaViolations) {
  TempDir dir;
  expect_error(open_header(dir, "[]", 0), ErrorCode::schema, "object");
  expect_error(open_header(dir, R"({"t":[1]})", 0), ErrorCode::schema);
  expect_error(open_header(dir, R"({"t":{"dtype":"U8","shape":[0]}})", 0), ErrorCode::schema, "data_offsets");
  expect_error(open_header(dir, R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1,1]}})", 1), ErrorCode::schema,
               "exactly 2");
  expect_error(open_header(dir, R"({"__metadata__":{"n":1}})", 0), ErrorCode::schema, "must be a string");
  expect_error(open_header(dir, R"({"t":{"dtype":"U8","shape":["1"],"data_offsets":[0,1]}})", 1), ErrorCode::schema);
}

TEST(SafetensorsRules, DuplicateKeys) {
  TempDir dir;
  expect_error(open_header(dir, R"({"__metadata__":{},"__metadata__":{}})", 0), ErrorCode::duplicate_key);
  expect_error(open_header(dir, R"({"__metadata__":{"k":"1","k":"2"}})", 0), ErrorCode::duplicate_key);
  expect_error(open_header(dir, R"({"t":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1),
               ErrorCode::duplicate_key);
}

TEST(SafetensorsRules, DuplicateTensor) {
  TempDir dir;
  auto r = open_header(
      dir,
      R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"t":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
      2);
  expect_error(r, ErrorCode::duplicate_tensor, "'t'");
}

TEST(SafetensorsRules, UnknownDtypeIsCaseSensitive) {
  TempDir dir;
  for (const char* dtype : {"F17", "bf16", "F8_E4M3FN", "C128"}) {
    auto tensors = two_tensors();
    tensors[1].dtype = dtype;
    expect_error(open_written(dir, tensors, {}), ErrorCode::unknown_type, dtype);
  }
}

TEST(SafetensorsRules, TooManyDims) {
  TempDir dir;
  std::string shape;
  for (int i = 0; i < 256; ++i) shape += i ? ",1" : "1";
  expect_error(open_header(dir, R"({"t":{"dtype":"U8","shape":[)" + shape + R"(],"data_offsets":[0,1]}})", 1),
               ErrorCode::too_many_dims);
}

TEST(SafetensorsRules, BadShape) {
  TempDir dir;
  expect_error(open_header(dir, R"({"t":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}})", 0), ErrorCode::bad_shape);
  expect_error(open_header(dir, R"({"t":{"dtype":"U8","shape":[4.0],"data_offsets":[0,4]}})", 4), ErrorCode::bad_shape);
}

TEST(SafetensorsRules, OverflowOfElementsTimesBits) {
  TempDir dir;
  expect_error(open_header(dir, R"({"t":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", 0),
               ErrorCode::overflow);
  // Elements fit, bits do not: 2^62 elements x 32 bits.
  expect_error(open_header(dir, R"({"t":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})", 0),
               ErrorCode::overflow);
}

TEST(SafetensorsRules, SubByteDtypesMustFillWholeBytes) {
  TempDir dir;
  expect_error(open_header(dir, R"({"t":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}})", 1),
               ErrorCode::bad_alignment);
  expect_error(open_header(dir, R"({"t":{"dtype":"F6_E2M3","shape":[2],"data_offsets":[0,1]}})", 1),
               ErrorCode::bad_alignment);
  auto ok = open_header(
      dir,
      R"({"f4":{"dtype":"F4","shape":[2,3],"data_offsets":[0,3]},"f6":{"dtype":"F6_E3M2","shape":[4],"data_offsets":[3,6]}})",
      6);
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  EXPECT_EQ(ok->find("f4")->nbytes, 3u);
  EXPECT_EQ(ok->find("f6")->nbytes, 3u);
}

TEST(SafetensorsRules, SizeMismatch) {
  TempDir dir;
  auto tensors = two_tensors();
  tensors[0].bytes.resize(12);
  expect_error(open_written(dir, tensors, {}), ErrorCode::size_mismatch, "needs 16 bytes");
}

TEST(SafetensorsRules, BadOffsetGapOverlapReversedNegative) {
  TempDir dir;
  expect_error(
      open_header(
          dir,
          R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[3,5]}})",
          5),
      ErrorCode::bad_offset, "gap");
  auto overlap = open_header(
      dir,
      R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})",
      6);
  expect_error(overlap, ErrorCode::bad_offset, "'b'");
  expect_error(open_header(dir, R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[4,0]}})", 4), ErrorCode::bad_offset,
               "end before");
  expect_error(open_header(dir, R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[-4,0]}})", 4), ErrorCode::bad_offset);
  // Two tensors on the same bytes (test_json_attack).
  expect_error(
      open_header(
          dir,
          R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})",
          4),
      ErrorCode::bad_offset);
}

TEST(SafetensorsRules, TrailingBytesAndTruncatedData) {
  TempDir dir;
  StWriteOptions extra;
  extra.extra_data_bytes = 5;
  auto r = open_written(dir, two_tensors(), extra);
  expect_error(r, ErrorCode::trailing_bytes, "5 bytes");
  StWriteOptions cut;
  cut.missing_data_bytes = 1;
  expect_error(open_written(dir, two_tensors(), cut), ErrorCode::truncated);
}

TEST(SafetensorsRules, LeadingWhitespaceOpensWithAFailingNote) {
  TempDir dir;
  StWriteOptions o;
  o.leading = "\t\n ";
  auto m = open_written(dir, two_tensors(), o);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  ASSERT_EQ(m->notes.size(), 1u);
  EXPECT_TRUE(m->notes[0].fails_check);
  EXPECT_EQ(m->notes[0].offset, 8u);
}

TEST(SafetensorsRules, TolerantOfUnknownFieldsNullMetadataAndUnsortedOrder) {
  TempDir dir;
  auto m = open_header(
      dir,
      R"({"__metadata__":null,"z":{"dtype":"U8","shape":[2],"data_offsets":[2,4],"extra":{"x":[1]}},)"
      R"("a":{"shape":[2],"data_offsets":[0,2],"dtype":"U8"},"e":{"dtype":"F32","shape":[0,4],"data_offsets":[2,2]},)"
      R"("s":{"dtype":"F64","shape":[],"data_offsets":[4,12]}}   )",
      12);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  ASSERT_EQ(m->notes.size(), 1u);
  EXPECT_FALSE(m->notes[0].fails_check);
  EXPECT_NE(m->notes[0].message.find("extra"), std::string::npos);
  const uint64_t base = m->files[0].data_offset;
  EXPECT_EQ(m->find("a")->offset, base);
  EXPECT_EQ(m->find("z")->offset, base + 2);
  EXPECT_EQ(m->find("e")->nbytes, 0u);
  EXPECT_EQ(m->find("s")->rank, 0);
  EXPECT_EQ(m->n_elements(*m->find("s")), 1u);
  EXPECT_TRUE(m->meta.empty());
}

TEST(SafetensorsRules, EscapedNamesAreUnescaped) {
  TempDir dir;
  auto m = open_header(dir, R"({"caf\u00e9.\ud83d\ude42":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_NE(m->find("caf\xc3\xa9.\xf0\x9f\x99\x82"), nullptr);
}

TEST(SafetensorsRules, EmptyHeaderIsAValidEmptyFile) {
  TempDir dir;
  auto m = open_written(dir, {}, {});
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->files[0].map.size(), 16u);   // {} + 6 spaces, as the reference writer does
}

TEST(SafetensorsRules, SniffByContentAndByName) {
  TempDir dir;
  ASSERT_TRUE(testing::write_safetensors(dir.file("weights.bin"), two_tensors()));
  auto by_content = open_model(dir.file("weights.bin"));
  ASSERT_TRUE(by_content.ok()) << by_content.error().to_string();
  // A short file named .bin is not claimed; named .safetensors it gets SafeTensors' error.
  ASSERT_TRUE(testing::write_text(dir.file("short.bin"), "xy"));
  EXPECT_EQ(open_model(dir.file("short.bin")).error().code, ErrorCode::not_recognized);
  ASSERT_TRUE(testing::write_text(dir.file("short.safetensors"), "xy"));
  EXPECT_EQ(open_model(dir.file("short.safetensors")).error().code, ErrorCode::header_too_small);
}

TEST(SafetensorsRules, DirectoryWithOneFileOpensIt) {
  TempDir dir;
  ASSERT_TRUE(testing::write_safetensors(dir.file("weights.safetensors"), two_tensors()));
  auto m = open_model(dir.path());
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->tensors.size(), 2u);
}

}   // namespace
}   // namespace akview
