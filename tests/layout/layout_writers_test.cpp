// Layout of writer-built files with the awkward parts real files have: alignment padding after
// every tensor, trailing bytes no tensor claims (a gap), a header with leading whitespace, and a
// split set; plus the span sweep itself on gaps, overlaps and empty spans.
#include <filesystem>

#include <gtest/gtest.h>

#include "core/formats/format.hpp"
#include "core/layout/block_fields.hpp"
#include "core/layout/region_writer.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/layout/layout_check.hpp"
#include "tests/writers/gguf_writer.hpp"
#include "tests/writers/st_writer.hpp"

namespace akview {
namespace {

using testing::collect_regions;
using testing::coverage_problem;

std::vector<Region> at_depth(const std::vector<Region>& regions, RegionKind kind) {
  std::vector<Region> out;
  for (const Region& r : regions)
    if (r.kind == kind) out.push_back(r);
  return out;
}

testing::GgufWriter odd_sized_tensors(uint32_t alignment) {
  testing::GgufWriter w;
  w.set("general.architecture", testing::gguf_string("llama"));
  w.set_alignment(alignment);
  w.add_tensor({"a", 0, {3}});       // f32: 12 bytes
  w.add_tensor({"b", 24, {5}});      // i8: 5 bytes
  w.add_tensor({"c", 2, {32, 2}});   // q4_0: 36 bytes
  return w;
}

TEST(LayoutWriters, GgufPaddingAfterEachTensor) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/padded.gguf";
  ASSERT_TRUE(odd_sized_tensors(64).write(path));
  auto model = open_model(path);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  const auto regions = collect_regions(*model, 0);
  EXPECT_EQ(coverage_problem(regions, model->files[0].map.size()), "");
  // In the data section: a (12) pad (52) b (5) pad (59) c (36): the padding each tensor needs before
  // the next (the writer does not pad the file's end).
  std::vector<std::pair<RegionKind, uint64_t>> data;
  bool in_data = false;
  for (const Region& r : regions) {
    if (r.depth == 0) in_data = r.kind == RegionKind::data;
    else if (in_data && r.depth == 1) data.emplace_back(r.kind, r.size);
  }
  const std::vector<std::pair<RegionKind, uint64_t>> want = {{RegionKind::tensor, 12},
                                                             {RegionKind::padding, 52},
                                                             {RegionKind::tensor, 5},
                                                             {RegionKind::padding, 59},
                                                             {RegionKind::tensor, 36}};
  EXPECT_EQ(data, want);
  EXPECT_TRUE(at_depth(regions, RegionKind::gap).empty());
  // The alignment padding before the data section is its own region and ends on a multiple of 64.
  const auto pads = at_depth(regions, RegionKind::padding);
  ASSERT_FALSE(pads.empty());
  EXPECT_EQ(pads.front().depth, 0);
  EXPECT_EQ((pads.front().offset + pads.front().size) % 64, 0u);
  EXPECT_EQ(pads.front().offset + pads.front().size, model->files[0].data_offset);
}

TEST(LayoutWriters, GgufTrailingBytesAreAGap) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/trailing.gguf";
  auto bytes = odd_sized_tensors(32).bytes();
  const size_t clean_size = bytes.size();
  for (int i = 0; i < 100; ++i) bytes.push_back(0xAB);   // 100 bytes past the last tensor's padding
  ASSERT_TRUE(testing::write_text(path, std::string(bytes.begin(), bytes.end())));
  auto model = open_model(path);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  const auto regions = collect_regions(*model, 0);
  EXPECT_EQ(coverage_problem(regions, bytes.size()), "");
  const auto gaps = at_depth(regions, RegionKind::gap);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].offset, clean_size);
  EXPECT_EQ(gaps[0].size, 100u);
  EXPECT_EQ(gaps[0].depth, 1);
}

// Found by the layout fuzz target: a PyTorch zip whose central directory (as the end record sizes
// it) holds 56 bytes after its last entry. Those bytes are a gap region inside the directory, and
// every depth still tiles its parent.
TEST(LayoutWriters, BytesInTheZipDirectoryAfterItsEntriesAreAGap) {
  const std::string path = std::string(AKVIEW_SOURCE_DIR) + "/tests/fuzz/corpus/layout/zip_directory_gap.bin";
  auto model = open_model(path);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  const auto regions = collect_regions(*model, 0);
  EXPECT_EQ(coverage_problem(regions, model->files[0].map.size()), "");
  bool in_directory = false, gap = false;
  for (const Region& r : regions) {
    if (r.depth == 0) in_directory = r.kind == RegionKind::central_directory;
    if (in_directory && r.depth == 1 && r.kind == RegionKind::gap) gap = r.offset == 0x1b68 && r.size == 56;
  }
  EXPECT_TRUE(gap);
}

// Found by the layout fuzz target: PyTorch checkpoints whose stored storage records have a
// compressed size other than their size (the layout then had tensor regions past the record, or a
// record's tail outside its children). Such a record is refused at the open, naming it and its
// local header's offset.
TEST(LayoutWriters, StoredRecordsWhoseTwoSizesDifferAreRefused) {
  const struct {
    const char* file;
    const char* record;
    uint64_t offset;
  } cases[] = {{"zip_record_shorter_than_storage.bin", "conv_linear_zip/data/12", 0xc38},
               {"zip_record_longer_than_storage.bin", "conv_linear_zip/data/1", 0xac0}};
  for (const auto& c : cases) {
    auto model = open_model(std::string(AKVIEW_SOURCE_DIR) + "/tests/fuzz/corpus/layout/" + c.file);
    ASSERT_FALSE(model.ok()) << c.file;
    EXPECT_EQ(model.error().code, ErrorCode::size_mismatch) << model.error().to_string();
    EXPECT_EQ(model.error().offset, c.offset) << model.error().to_string();
    EXPECT_NE(model.error().to_string().find(c.record), std::string::npos) << model.error().to_string();
  }
}

TEST(LayoutWriters, GgufKeyValueChildrenSplitEachEntry) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/kv.gguf";
  testing::GgufWriter w = odd_sized_tensors(32);
  w.set("tokenizer.ggml.tokens",
        testing::gguf_array(testing::kGgufString, {testing::gguf_string("a"), testing::gguf_string("bc")}));
  ASSERT_TRUE(w.write(path));
  auto model = open_model(path);
  ASSERT_TRUE(model.ok());
  const auto regions = collect_regions(*model, 0);
  EXPECT_EQ(coverage_problem(regions, model->files[0].map.size()), "");
  // key length (8) + key + type (4) + element type (4) + count (8) + elements (8+1 + 8+2).
  for (size_t i = 0; i < regions.size(); ++i) {
    if (regions[i].kind != RegionKind::kv || regions[i].label != "tokenizer.ggml.tokens") continue;
    EXPECT_EQ(regions[i].size, 8 + 21 + 4 + 4 + 8 + 9 + 10);
    EXPECT_EQ(regions[i].value, "2 x STRING");
    ASSERT_LT(i + 7, regions.size());
    EXPECT_EQ(regions[i + 4].kind, RegionKind::array);
    EXPECT_EQ(regions[i + 6].kind, RegionKind::count);
    EXPECT_EQ(regions[i + 6].value, "2");
    EXPECT_EQ(regions[i + 7].kind, RegionKind::elements);
    EXPECT_EQ(regions[i + 7].size, 19u);
    return;
  }
  FAIL() << "no region for tokenizer.ggml.tokens";
}

TEST(LayoutWriters, SafeTensorsLeadingWhitespaceAndPadding) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/lead.safetensors";
  testing::StWriteOptions options;
  options.leading = "  ";
  options.metadata = {{"format", "pt"}};
  ASSERT_TRUE(testing::write_safetensors(path, {{"x", "F32", {3}, std::vector<uint8_t>(12, 7)}, {"y", "BF16", {0, 4}}},
                                         options));
  auto model = open_model(path);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  const auto regions = collect_regions(*model, 0);
  EXPECT_EQ(coverage_problem(regions, model->files[0].map.size()), "");
  ASSERT_GE(regions.size(), 4u);
  EXPECT_EQ(regions[0].kind, RegionKind::length);
  EXPECT_EQ(regions[1].kind, RegionKind::json);
  EXPECT_EQ(regions[2].kind, RegionKind::json_syntax);   // "  {"
  EXPECT_EQ(regions[2].size, 3u);
  EXPECT_EQ(at_depth(regions, RegionKind::metadata).size(), 1u);
  EXPECT_EQ(at_depth(regions, RegionKind::entry).size(), 2u);
  const auto tensors = at_depth(regions, RegionKind::tensor);
  ASSERT_EQ(tensors.size(), 2u);
  for (const Region& t : tensors) EXPECT_EQ(t.size, t.label == "x" ? 12u : 0u);   // the 0x4 tensor: a zero-size region
}

TEST(LayoutWriters, SplitGgufPartsEachTileThemselves) {
  testing::TempDir dir;
  auto paths = testing::write_gguf_split(dir.path(), "m", 2, odd_sized_tensors(32));
  ASSERT_EQ(paths.size(), 2u);
  auto model = open_model(paths[0]);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  ASSERT_EQ(model->files.size(), 2u);
  size_t tensors = 0;
  for (uint32_t f = 0; f < 2; ++f) {
    const auto regions = collect_regions(*model, f);
    EXPECT_EQ(coverage_problem(regions, model->files[f].map.size()), "");
    tensors += at_depth(regions, RegionKind::tensor).size();
  }
  EXPECT_EQ(tensors, 3u);
}

// A file cut short after it was opened is an error naming it (truncated), never a SIGBUS.
TEST(LayoutWriters, AFileThatShrankIsAnError) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/shrinks.gguf";
  ASSERT_TRUE(odd_sized_tensors(32).write(path));
  auto model = open_model(path);
  ASSERT_TRUE(model.ok());
  std::filesystem::resize_file(path, 40);
  Status s = walk_layout(*model, 0, [](const Region&) { return true; });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::truncated);
  EXPECT_EQ(s.error().file, path);
  auto block = describe_block(*model, 0, 0);
  ASSERT_FALSE(block.ok());
  EXPECT_EQ(block.error().code, ErrorCode::truncated);
}

// The sweep on its own: a gap, an overlap that cuts two spans, and an empty span.
TEST(LayoutWriters, SpanSweepShowsGapsAndOverlaps) {
  std::vector<Region> out;
  RegionSink sink = [&](const Region& r) {
    out.push_back(r);
    return true;
  };
  RegionWriter w(sink);
  SpanCallbacks cb;
  cb.describe = [](uint32_t id) { return Region{0, 0, 0, RegionKind::tensor, "t" + std::to_string(id), ""}; };
  std::vector<Span> spans = {{10, 10, 0}, {30, 10, 1}, {35, 10, 2}, {50, 0, 3}};
  ASSERT_TRUE(emit_spans(w, 1, 0, 60, spans, cb));
  std::vector<std::tuple<uint64_t, uint64_t, RegionKind>> got;
  for (const Region& r : out) got.emplace_back(r.offset, r.size, r.kind);
  const std::vector<std::tuple<uint64_t, uint64_t, RegionKind>> want = {
      {0, 10, RegionKind::gap},    {10, 10, RegionKind::tensor}, {20, 10, RegionKind::gap},
      {30, 5, RegionKind::tensor}, {35, 5, RegionKind::overlap}, {40, 5, RegionKind::tensor},
      {45, 5, RegionKind::gap},    {50, 0, RegionKind::tensor},  {50, 10, RegionKind::gap}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(out[4].label, "t1 + t2");
  EXPECT_EQ(out[3].label, "t1 (part)");
  // A sink that stops is obeyed.
  size_t seen = 0;
  RegionSink stop = [&](const Region&) { return ++seen < 2; };
  RegionWriter w2(stop);
  EXPECT_FALSE(emit_spans(w2, 0, 0, 60, spans, cb));
  EXPECT_EQ(seen, 2u);
}

}   // namespace
}   // namespace akview
