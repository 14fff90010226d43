// Shared by the fuzz targets: parsers take paths, so each input is written to a file in a
// per-process temporary folder (on tmpfs where possible; removed at exit). AKVIEW_ORACLES_DIR names the oracles
// (tests/oracles), used only to give the Ollama and shard-index targets real blobs/shards to point at.
#pragma once

#include <fcntl.h>
#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "core/decode/decode.hpp"
#include "core/model.hpp"
#include "core/tensor_view.hpp"

namespace akview::fuzz {

inline const std::string& temp_dir() {
  // Never destroyed: the atexit cleanup runs after static destructors would have.
  static const std::string* dir = [] {
    // tmpfs when there is one: rewriting a file per input on ext4 waits for the disk (~4 ms each).
    const char* base = std::getenv("TMPDIR");
    if (access("/dev/shm", W_OK) == 0) base = "/dev/shm";
    auto* path = new std::string(std::string(base && *base ? base : "/tmp") + "/akview-fuzz-XXXXXX");
    if (!mkdtemp(path->data())) std::abort();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(temp_dir(), ec);
    });
    return path;
  }();
  return *dir;
}

// Writes the input to `name` (relative to temp_dir(), parent folders created); returns the path.
// Whatever was there is unlinked first and the file is created afresh (O_EXCL | O_NOFOLLOW), so
// an input never writes through a link, wherever it came from.
inline std::string write_input(const std::string& name, const uint8_t* data, size_t size) {
  std::string path = temp_dir() + "/" + name;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  for (size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return path;
}

// Copies every file of oracles/`from` into temp_dir()/`to` (nothing when the oracles are absent).
// Copies, never links: an input written over one of these names must not reach tests/oracles.
inline void copy_oracles(const std::string& from, const std::string& to) {
#ifdef AKVIEW_ORACLES_DIR
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(temp_dir() + "/" + to, ec);
  for (const auto& e : fs::directory_iterator(fs::path(AKVIEW_ORACLES_DIR) / from, ec))
    if (e.is_regular_file())
      fs::copy_file(e.path(), fs::path(temp_dir()) / to / e.path().filename(), fs::copy_options::overwrite_existing,
                    ec);
#else
  (void)from;
  (void)to;
#endif
}

// Views and decodes the first row of a few tensors of an opened model: whatever open accepted
// must be safe to decode (or be refused by validate_view).
inline void decode_first_rows(const Model& model) {
  std::vector<float> row;
  for (size_t i = 0; i < model.tensors.size() && i < 8; ++i) {
    auto view = make_tensor_view(model, model.tensors[i]);
    if (!view || view->n_rows <= 0 || view->n_cols <= 0 || view->n_cols > (1 << 16)) continue;
    row.resize(static_cast<size_t>(view->n_cols));
    (void)decode_rows(*view, 0, 1, row.data());
  }
}

}   // namespace akview::fuzz
