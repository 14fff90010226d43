// A fresh temporary directory per test (mkdtemp under the GoogleTest temp dir), removed with its files
// when it goes out of scope, also when an assertion returns early. Header-only: tests/common has no .cpp,
// so it is no test binary of its own.
#pragma once

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace akview::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir();
    if (!tmpl.empty() && tmpl.back() != '/') tmpl += '/';
    tmpl += "akview_XXXXXX";
    if (char* p = ::mkdtemp(tmpl.data())) {
      path_ = p;
    } else {
      // Every later path would be relative to the working directory: fail the test, loudly.
      ADD_FAILURE() << "mkdtemp(" << tmpl << ") failed: " << std::strerror(errno);
      std::abort();
    }
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}   // namespace akview::testing
