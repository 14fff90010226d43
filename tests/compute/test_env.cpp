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

}  // namespace
