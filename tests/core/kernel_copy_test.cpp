// KernelCopy (core/kernel_copy.hpp): the bytes of a mapped file read by pread from the file the
// mapping shows, at the right offsets (a range inside the mapping, not at its start), without making
// the mapping resident; bytes on the heap by process_vm_readv; a range past the end of a file that
// shrank under its mapping is refused, not faulted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/kernel_copy.hpp"
#include "core/mapped_file.hpp"
#include "tests/common/temp_dir.hpp"

namespace akview::test {
namespace {

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i * 131 + (i >> 12));
  return b;
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// This process's resident pages of mapped files, in KiB (RssFile in /proc/self/status).
long rss_file_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("RssFile:", 0) == 0) return std::stol(line.substr(8));
  return -1;
}

TEST(KernelCopy, MappedFileReadByPreadAtItsOffsets) {
  testing::TempDir dir;
  const std::string path = dir.file("model.bin");
  const std::vector<uint8_t> bytes = pattern(3 << 20);
  write_file(path, bytes);
  auto map = MappedFile::open(path);
  ASSERT_TRUE(map.ok());
  const uint8_t* base = map->data();
  const long rss_before = rss_file_kb();
  const KernelCopy copy(base + 12345);
  EXPECT_TRUE(copy.reads_file());
  std::vector<uint8_t> out(1 << 20);
  for (size_t offset : {size_t{0}, size_t{4095}, size_t{1} << 20, bytes.size() - out.size()}) {
    ASSERT_TRUE(copy.read(base + offset, out.size(), out.data())) << offset;
    EXPECT_TRUE(std::equal(out.begin(), out.end(), bytes.begin() + static_cast<std::ptrdiff_t>(offset))) << offset;
  }
  // The file was read, not the mapping: none of the 3 MiB became resident in this process (a copy
  // through the mapping maps every page it reads).
  EXPECT_LT(rss_file_kb() - rss_before, 1024);
}

TEST(KernelCopy, HeapBytesAndShrunkFiles) {
  const std::vector<uint8_t> heap = pattern(100000);
  const KernelCopy from_heap(heap.data());
  EXPECT_FALSE(from_heap.reads_file());
  std::vector<uint8_t> out(5000);
  ASSERT_TRUE(from_heap.read(heap.data() + 777, out.size(), out.data()));
  EXPECT_TRUE(std::equal(out.begin(), out.end(), heap.begin() + 777));

  testing::TempDir dir;
  const std::string path = dir.file("shrinks.bin");
  const std::vector<uint8_t> bytes = pattern(1 << 20);
  write_file(path, bytes);
  auto map = MappedFile::open(path);
  ASSERT_TRUE(map.ok());
  const KernelCopy copy(map->data());
  ASSERT_EQ(truncate(path.c_str(), 1 << 16), 0);
  ASSERT_TRUE(copy.read(map->data() + 100, 1000, out.data()));   // still in the file
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + 1000, bytes.begin() + 100));
  EXPECT_FALSE(copy.read(map->data() + (1 << 18), 1000, out.data()));   // past its end now
}

}   // namespace
}   // namespace akview::test
