// The signal-served remote mapping (core/remote/signal_mapping.hpp), in this process, against the
// plain block of the test servers (hub_server.hpp) over HTTP: a file whose every 8-byte word holds
// its own offset, so a page served from the wrong place, or seen half filled, reads a wrong word.
// Pages read in any order, after release_pages, by threads faulting the same and different pages
// at once; a fetch that fails outside a FetchFailureScope (the guarded read's error, then the chunk
// fetchable again) and inside one (zeros, the scope's error); and AKVIEW_REMOTE_FAULTS=signals
// choosing this mechanism in map_remote_file. UffdFaults runs the same reads through userfaultfd's
// mapping (core/remote/fault_mapping.hpp), whose fetched bytes are the cache file's pages too.
// Skipped when nginx cannot start (and UffdFaults where userfaultfd is refused).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/fault_guard.hpp"
#include "core/remote/fault_mapping.hpp"
#include "core/remote/remote_file.hpp"
#include "core/remote/signal_mapping.hpp"
#include "tests/common/sanitizer.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/remote/hub_server.hpp"

namespace akview::testing {
namespace {

using remote::RemoteFile;

constexpr uint64_t kFileBytes = (24ull << 20) + 4000;   // 1536 chunks and a partial page at the end

// How a stray SIGSEGV ends this process: the default action, or ASan's report and abort.
const auto kSegvEnd = [](int status) {
  if (kAddressSanitizer) return WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
};

uint64_t word_at(uint64_t offset) { return offset * 0x9E3779B97F4A7C15ull + 1; }

// The word the mapping holds at `offset` (a multiple of 8).
uint64_t read_word(const MappedFile& m, uint64_t offset) {
  uint64_t w;
  std::memcpy(&w, m.data() + offset, 8);
  return w;
}

// Whether /proc/self/maps shows `path` mapped over `address` (both mechanisms map the cache file's
// pages over the fetched chunks).
bool maps_file_at(const void* address, const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto a = reinterpret_cast<uintptr_t>(address);
  while (std::getline(maps, line)) {
    uintptr_t b = 0, e = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &b, &e) != 2 || a < b || a >= e) continue;
    return line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0;
  }
  return false;
}

class SignalFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<uint64_t> words(kFileBytes / 8 + 1);
    for (uint64_t i = 0; i < words.size(); ++i) words[i] = word_at(i * 8);
    {
      std::ofstream out(data_.file("pattern.bin"), std::ios::binary);
      out.write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(kFileBytes));
    }
    server_.add_file("/files/pattern.bin", data_.file("pattern.bin"));
    if (!server_.start()) GTEST_SKIP() << "test servers unavailable: " << server_.reason();
  }

  std::shared_ptr<RemoteFile> open_file() {
    remote::RemoteIdentity id;
    id.url = server_.http_url("/files/pattern.bin");
    id.label = "pattern.bin";
    id.size = kFileBytes;
    auto f = RemoteFile::open(id, cache_.file("pattern.bin"));
    EXPECT_TRUE(f) << f.error().to_string();
    return f ? *f : nullptr;
  }

  MappedFile map(const std::shared_ptr<RemoteFile>& f) {
    auto m = uffd_ ? remote::map_remote_file(f, "pattern.bin") : remote::map_by_signals(f, "pattern.bin");
    EXPECT_TRUE(m) << m.error().to_string();
    return m ? std::move(*m) : MappedFile();
  }

  // The checks both mechanisms pass (the tests below name them).
  void every_page_reads_its_own_bytes_in_any_order();
  void threads_faulting_the_same_and_different_pages_read_their_own_bytes();
  void a_failed_fetch_outside_a_scope_is_the_guarded_reads_error_and_can_be_retried();
  void a_failed_fetch_inside_a_scope_reads_zeros_and_is_the_scopes_error();

  HubServer server_;
  TempDir data_, cache_;
  bool uffd_ = false;   // map through userfaultfd (map_remote_file with AKVIEW_REMOTE_FAULTS=userfaultfd)
};

// The same reads through userfaultfd's mapping; skipped where userfaultfd is refused.
class UffdFaults : public SignalFaults {
 protected:
  void SetUp() override {
    SignalFaults::SetUp();
    if (IsSkipped()) return;
    const char* before = std::getenv("AKVIEW_REMOTE_FAULTS");
    saved_ = before ? std::optional<std::string>(before) : std::nullopt;
    setenv("AKVIEW_REMOTE_FAULTS", "userfaultfd", 1);
    uffd_ = true;
    auto probe = remote::map_remote_file(open_file(), "pattern.bin");
    if (!probe) GTEST_SKIP() << probe.error().to_string();
  }
  void TearDown() override {
    if (saved_) setenv("AKVIEW_REMOTE_FAULTS", saved_->c_str(), 1);
    else unsetenv("AKVIEW_REMOTE_FAULTS");
  }
  std::optional<std::string> saved_;
};

void SignalFaults::every_page_reads_its_own_bytes_in_any_order() {
  auto file = open_file();
  MappedFile m = map(file);
  ASSERT_EQ(m.size(), kFileBytes);
  std::vector<uint64_t> pages;
  for (uint64_t p = 0; p < kFileBytes; p += 4096) pages.push_back(p);
  std::shuffle(pages.begin(), pages.end(), std::mt19937(7));
  for (uint64_t p : pages) {
    const uint64_t last = std::min(p + 4096, kFileBytes) / 8 * 8 - 8;
    ASSERT_EQ(read_word(m, p), word_at(p)) << "page at " << p;
    ASSERT_EQ(read_word(m, last), word_at(last)) << "page at " << p;
  }
  // The fetched bytes are the cache file's pages: dropped from memory, they read back from it.
  EXPECT_TRUE(maps_file_at(m.data() + (5 << 20), cache_.file("pattern.bin")));
  m.release_pages();
  for (uint64_t p : pages) ASSERT_EQ(read_word(m, p), word_at(p)) << "page at " << p << " after release_pages";
  EXPECT_EQ(file->fetched_bytes(), kFileBytes);
}

void SignalFaults::threads_faulting_the_same_and_different_pages_read_their_own_bytes() {
  for (int round = 0; round < 3; ++round) {
    TempDir cache;   // nothing fetched yet: every first read faults
    remote::RemoteIdentity id;
    id.url = server_.http_url("/files/pattern.bin");
    id.label = "pattern.bin";
    id.size = kFileBytes;
    auto file = RemoteFile::open(id, cache.file("pattern.bin"));
    ASSERT_TRUE(file);
    MappedFile m = map(*file);
    constexpr int kThreads = 8;
    std::vector<uint64_t> wrong(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        // Half the threads walk the same pages from the start, half start at pages of their own;
        // every word of each page is checked (a page seen half filled has zeros in it).
        std::vector<uint64_t> pages;
        for (uint64_t p = 0; p + 4096 <= kFileBytes; p += 4096) pages.push_back(p);
        if (t % 2) std::shuffle(pages.begin(), pages.end(), std::mt19937(static_cast<unsigned>(t + 10 * round)));
        for (uint64_t p : pages)
          for (uint64_t o = p; o < p + 4096; o += 8) wrong[t] += read_word(m, o) != word_at(o);
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[t], 0u) << "thread " << t << ", round " << round;
  }
}

void SignalFaults::a_failed_fetch_outside_a_scope_is_the_guarded_reads_error_and_can_be_retried() {
  auto file = open_file();
  MappedFile m = map(file);
  server_.status_once(Block::plain, "/files/pattern.bin", 404, 0, 1);
  const uint64_t at = 3 << 20;
  uint64_t w = 0;
  Status s = guard_reads([&] { std::memcpy(&w, m.data() + at, 8); });
  ASSERT_FALSE(s.ok()) << "read " << w;
  EXPECT_NE(s.error().to_string().find("404"), std::string::npos) << s.error().to_string();
  EXPECT_NE(s.error().to_string().find("pattern.bin"), std::string::npos) << s.error().to_string();
  // The chunk is fetchable again once the reader has its error.
  s = guard_reads([&] { std::memcpy(&w, m.data() + at, 8); });
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_EQ(w, word_at(at));
}

void SignalFaults::a_failed_fetch_inside_a_scope_reads_zeros_and_is_the_scopes_error() {
  auto file = open_file();
  MappedFile m = map(file);
  server_.status_once(Block::plain, "/files/pattern.bin", 404, 0, 1);
  const uint64_t at = 3 << 20;
  remote::FetchFailureScope scope;
  uint64_t w = ~uint64_t{0};
  std::memcpy(&w, m.data() + at, 8);   // unguarded: a SIGBUS here would end the test binary
  EXPECT_EQ(w, 0u);
  ASSERT_TRUE(scope.failure().has_value());
  EXPECT_NE(scope.failure()->to_string().find("404"), std::string::npos) << scope.failure()->to_string();
  // Later reads of the scope's thread read zeros without another try; other pages too.
  std::memcpy(&w, m.data() + (9 << 20), 8);
  EXPECT_EQ(w, 0u);
}

TEST_F(SignalFaults, EveryPageReadsItsOwnBytesInAnyOrder) { every_page_reads_its_own_bytes_in_any_order(); }
TEST_F(UffdFaults, EveryPageReadsItsOwnBytesInAnyOrder) { every_page_reads_its_own_bytes_in_any_order(); }
TEST_F(SignalFaults, ThreadsFaultingTheSameAndDifferentPagesReadTheirOwnBytes) {
  threads_faulting_the_same_and_different_pages_read_their_own_bytes();
}
TEST_F(UffdFaults, ThreadsFaultingTheSameAndDifferentPagesReadTheirOwnBytes) {
  threads_faulting_the_same_and_different_pages_read_their_own_bytes();
}
TEST_F(SignalFaults, AFailedFetchOutsideAScopeIsTheGuardedReadsErrorAndCanBeRetried) {
  a_failed_fetch_outside_a_scope_is_the_guarded_reads_error_and_can_be_retried();
}
TEST_F(UffdFaults, AFailedFetchOutsideAScopeIsTheGuardedReadsErrorAndCanBeRetried) {
  a_failed_fetch_outside_a_scope_is_the_guarded_reads_error_and_can_be_retried();
}
TEST_F(SignalFaults, AFailedFetchInsideAScopeReadsZerosAndIsTheScopesError) {
  a_failed_fetch_inside_a_scope_reads_zeros_and_is_the_scopes_error();
}
TEST_F(UffdFaults, AFailedFetchInsideAScopeReadsZerosAndIsTheScopesError) {
  a_failed_fetch_inside_a_scope_reads_zeros_and_is_the_scopes_error();
}

TEST_F(SignalFaults, MissingBytesAreThoseOfTheChunksNotFetched) {
  // Ranges fetched at odd offsets (each fetch takes the whole chunks it touches), then the bytes
  // still missing from many ranges, against a count chunk by chunk.
  auto f = open_file();
  ASSERT_TRUE(f);
  const std::vector<std::pair<uint64_t, uint64_t>> fetched = {
      {0, 1}, {100000, 5000}, {1u << 20, 3u << 20}, {(9u << 20) + 7, 70000}, {kFileBytes - 10, 10}};
  std::vector<bool> has((kFileBytes + remote::kChunkBytes - 1) / remote::kChunkBytes, false);
  for (const auto& [offset, length] : fetched) {
    ASSERT_TRUE(f->ensure(offset, length).ok());
    for (uint64_t c = offset / remote::kChunkBytes; c * remote::kChunkBytes < offset + length; ++c) has[c] = true;
  }
  auto expected = [&](uint64_t offset, uint64_t length) {
    const uint64_t end = std::min(kFileBytes, offset + length);
    uint64_t n = 0;
    for (uint64_t c = offset / remote::kChunkBytes; c * remote::kChunkBytes < end; ++c)
      if (!has[c]) n += std::min(end, (c + 1) * remote::kChunkBytes) - std::max(offset, c * remote::kChunkBytes);
    return n;
  };
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const uint64_t offset = rng() % kFileBytes, length = i % 3 == 0 ? rng() % 200000 : rng() % kFileBytes;
    ASSERT_EQ(f->missing_bytes(offset, length), offset >= kFileBytes ? 0 : expected(offset, length))
        << offset << " +" << length;
  }
  EXPECT_EQ(f->missing_bytes(0, kFileBytes), expected(0, kFileBytes));
  // fetched_bytes counts whole chunks (the file's short last one too), at most the file's size.
  const auto chunks = static_cast<uint64_t>(std::count(has.begin(), has.end(), true));
  EXPECT_EQ(f->fetched_bytes(), std::min(kFileBytes, chunks * remote::kChunkBytes));
}

TEST_F(SignalFaults, OtherFaultsEndTheProcessAsBefore) {
  // The handler hands every fault that is not a remote page's first read on: a null read, and a
  // write to the read-only mapping (which is not retried for ever), end the process as they would
  // have without it (SIGSEGV; under ASan, its report and abort). Re-executed children: a fork would
  // have no server thread.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto file = open_file();
  MappedFile m = map(file);
  ASSERT_EQ(read_word(m, 1 << 20), word_at(1 << 20));   // the handler is installed, the page present
  EXPECT_EXIT(
      {
        volatile uint64_t* null = nullptr;
        std::printf("%lu\n", static_cast<unsigned long>(*null));
      },
      kSegvEnd, "");
  EXPECT_EXIT(
      {
        (void)read_word(m, 1 << 20);
        *const_cast<volatile uint8_t*>(m.data() + (1 << 20)) = 1;
      },
      kSegvEnd, "");
}

TEST_F(SignalFaults, TheVariableChoosesSignals) {
  auto file = open_file();
  const char* before = std::getenv("AKVIEW_REMOTE_FAULTS");
  const std::string saved = before ? before : "";
  setenv("AKVIEW_REMOTE_FAULTS", "signals", 1);
  auto m = remote::map_remote_file(file, "pattern.bin");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(read_word(*m, 1 << 20), word_at(1 << 20));
  EXPECT_TRUE(maps_file_at(m->data() + (1 << 20), cache_.file("pattern.bin")));
  setenv("AKVIEW_REMOTE_FAULTS", "carrier-pigeons", 1);
  auto refused = remote::map_remote_file(file, "pattern.bin");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().to_string().find("AKVIEW_REMOTE_FAULTS"), std::string::npos);
  if (before) setenv("AKVIEW_REMOTE_FAULTS", saved.c_str(), 1);
  else unsetenv("AKVIEW_REMOTE_FAULTS");
}

}   // namespace
}   // namespace akview::testing
