// Resource caps: every malformed oracle and every input fuzzing found
// (tests/fuzz/corpus) goes through `akview check` and `akview info` in a child with its address
// space capped at 1 GiB (setrlimit RLIMIT_AS; not under AddressSanitizer, whose shadow memory needs
// terabytes of address space) and a 60 s alarm (kept across exec). Each must end with exit 0 or 1:
// never a signal (crash, abort, out of memory, hang).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/common/sanitizer.hpp"

namespace akview::testing {
namespace {

namespace fs = std::filesystem;

// No address-space cap under AddressSanitizer: its shadow reserves terabytes.
constexpr bool kCapMemory = !kAddressSanitizer;

constexpr rlim_t kAddressSpace = rlim_t{1} << 30;
constexpr unsigned kSeconds = 60;

std::vector<fs::path> inputs() {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(AKVIEW_ORACLES_DIR) / "malformed", ec))
    if (e.is_regular_file() && e.path().extension() != ".md" && e.path().extension() != ".json")
      out.push_back(e.path());
  for (const auto& e : fs::recursive_directory_iterator(fs::path(AKVIEW_SOURCE_DIR) / "tests/fuzz/corpus", ec))
    if (e.is_regular_file()) out.push_back(e.path());
  return out;
}

// Runs akview ARGS... under the caps, output discarded; returns the wait status.
int run_capped(const std::vector<std::string>& args) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (kCapMemory) {
      const rlimit as{kAddressSpace, kAddressSpace};
      setrlimit(RLIMIT_AS, &as);
    }
    alarm(kSeconds);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(AKVIEW_BINARY));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(AKVIEW_BINARY, argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(ResourceLimits, MalformedAndFuzzFoundInputsEndWithAVerdictUnderCaps) {
  const auto files = inputs();
  ASSERT_GE(files.size(), 20u) << "the malformed oracles are missing from " << AKVIEW_ORACLES_DIR;
  if (!kCapMemory) std::printf("address-space cap off under AddressSanitizer; the time cap still applies\n");
  for (const auto& f : files)
    for (const char* cmd : {"check", "info"}) {
      const int status = run_capped({cmd, f.string()});
      EXPECT_TRUE(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1))
          << "akview " << cmd << " " << f << ": "
          << (WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                  : "exit " + std::to_string(WEXITSTATUS(status)));
    }
}

// The cap itself bites: a child asking for more than the cap gets nothing (so the test above
// would see an out-of-memory death, not pass by accident).
TEST(ResourceLimits, TheAddressSpaceCapRefusesAHugeAllocation) {
  if (!kCapMemory) GTEST_SKIP() << "no address-space cap under AddressSanitizer";
  const pid_t pid = fork();
  if (pid == 0) {
    const rlimit as{kAddressSpace, kAddressSpace};
    setrlimit(RLIMIT_AS, &as);
    void* p = std::malloc(size_t{2} << 30);
    _exit(p == nullptr ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}   // namespace
}   // namespace akview::testing
