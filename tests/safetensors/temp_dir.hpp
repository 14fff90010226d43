// A fresh temporary directory per test, removed with its files at the end.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace akview::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "akview_st_XXXXXX";
    if (char* p = ::mkdtemp(tmpl.data())) path_ = p;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace akview::testing
