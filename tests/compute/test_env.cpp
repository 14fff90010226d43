// Test-binary environment: PoCL's kernel cache goes under the build tree (POCL_CACHE_DIR), set
// before any test touches OpenCL, so runs after the first reuse the compiled kernels.
#include <cstdlib>
#include <filesystem>

namespace {

struct PoclCacheDir {
  PoclCacheDir() {
    const auto dir = std::filesystem::path(AKVIEW_BINARY).parent_path().parent_path() / "pocl_cache";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    setenv("POCL_CACHE_DIR", dir.c_str(), 0);
  }
} g_pocl_cache_dir;

}   // namespace

// LeakSanitizer (ASan builds): PoCL and its LLVM keep compiler state alive until exit, which LSan
// reports as leaks when a kernel is built cold. Only leaks whose stack passes through those two
// libraries are suppressed; leak detection stays on for akview's own code.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libpocl.so\nleak:libLLVM-15.so\nleak:libLLVM.so\n";
}
