// Detection by content through the format table: unknown content, missing paths and empty
// directories get one precise error each; recognised-by-content formats are reported by name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/formats/format.hpp"
#include "tests/common/temp_dir.hpp"

namespace akview {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

TEST(FormatDetection, MissingPathIsAnIoError) {
  auto m = open_model("/nonexistent/akview/model.gguf");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, ErrorCode::io);
  EXPECT_NE(m.error().to_string().find("/nonexistent/akview/model.gguf"), std::string::npos);
}

TEST(FormatDetection, UnknownContentIsNotRecognisedWithItsFirstBytes) {
  const testing::TempDir tmp;   // removed even when an assertion returns early
  const fs::path dir = tmp.path();
  write_file(dir / "weights.bin", std::string("\x7f"
                                              "ELF\x02\x01\x01\x00junkjunk",
                                              16));
  auto m = open_model((dir / "weights.bin").string());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, ErrorCode::not_recognized);
  EXPECT_EQ(m.error().offset, 0u);
  EXPECT_NE(m.error().message.find("7f 45 4c 46"), std::string::npos) << m.error().message;
}

TEST(FormatDetection, EmptyDirectoryIsNotRecognised) {
  const testing::TempDir tmp;   // removed even when an assertion returns early
  const fs::path dir = tmp.path();
  auto m = open_model(dir.string());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, ErrorCode::not_recognized);
}

TEST(FormatDetection, ProbeListsDirectoryEntriesSorted) {
  const testing::TempDir tmp;   // removed even when an assertion returns early
  const fs::path dir = tmp.path();
  write_file(dir / "b.json", "{}");
  write_file(dir / "a.gguf", "GGUF");
  auto p = probe_path(dir.string());
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->is_dir);
  ASSERT_EQ(p->entries.size(), 2u);
  EXPECT_EQ(p->entries[0], "a.gguf");
  EXPECT_TRUE(p->has_entry("b.json"));
  EXPECT_FALSE(p->has_entry("c"));
}

TEST(FormatDetection, EveryFormatRowHasASnifferAndADescription) {
  for (const auto& f : format_table()) {
    EXPECT_FALSE(f.name.empty());
    EXPECT_FALSE(f.description.empty());
    EXPECT_NE(f.sniff, nullptr) << f.name;
  }
}

}   // namespace
}   // namespace akview
