// Opening SafeTensors (FORMATS.md §1): header parse rate and peak memory on a 1M-tensor file with a
// ~100 MB header, a 163-shard indexed set, and one small model as a 1 MB and a 1 TB (sparse) file.
// Each open runs in a forked child (fresh heap, its own ru_maxrss); the figure is the median of 3.
// Targets: >= 300 MB/s of header, peak RSS <= 2 x header + 64 MB, 1 TB opens as fast as 1 MB.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/fixtures.hpp"
#include "core/formats/format.hpp"
#include "core/formats/safetensors.hpp"

namespace {

using akview::testing::StTensor;

struct Sample {
  double seconds = 0;
  uint64_t header_bytes = 0;
  uint64_t tensors = 0;
  uint64_t sum_nbytes = 0;
  long max_rss_kb = 0;
  bool ok = false;
};

// Opens `path` in a child and lists every tensor; the parent collects times and peak RSS.
Sample open_in_child(const std::string& path) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Sample s;
    const auto t0 = std::chrono::steady_clock::now();
    auto model = akview::open_model(path);
    if (model) {
      for (const auto& t : model->tensors) s.sum_nbytes += t.nbytes;   // list: touch every tensor
      s.tensors = model->tensors.size();
      for (const auto& f : model->files) s.header_bytes += f.header_bytes;
      s.ok = true;
    } else {
      std::fprintf(stderr, "%s\n", model.error().to_string().c_str());
    }
    const auto t1 = std::chrono::steady_clock::now();
    s.seconds = std::chrono::duration<double>(t1 - t0).count();
    if (write(fds[1], &s, sizeof s) != sizeof s) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  Sample s;
  const bool got = read(fds[0], &s, sizeof s) == sizeof s;
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  if (!got) return {};
  s.max_rss_kb = usage.ru_maxrss;
  return s;
}

void report(const char* label, const std::string& path) {
  std::vector<Sample> runs;
  for (int i = 0; i < 3; ++i) runs.push_back(open_in_child(path));
  if (!std::all_of(runs.begin(), runs.end(), [](const Sample& s) { return s.ok; })) {
    std::printf("%-28s FAILED\n", label);
    return;
  }
  std::sort(runs.begin(), runs.end(), [](const Sample& a, const Sample& b) { return a.seconds < b.seconds; });
  const Sample& m = runs[1];
  long rss = 0;
  for (const auto& r : runs) rss = std::max(rss, r.max_rss_kb);
  const double header_mb = m.header_bytes / 1e6;
  const double budget_mb = 2 * header_mb + 64;
  std::printf(
      "%-28s %9llu tensors  header %8.2f MB  open+list %8.2f ms (min %.2f)  %7.1f MB/s  "
      "peak RSS %7.1f MB (budget %.0f MB) %s\n",
      label, static_cast<unsigned long long>(m.tensors), header_mb, m.seconds * 1e3, runs[0].seconds * 1e3,
      header_mb / m.seconds, rss / 1024.0, budget_mb, rss / 1024.0 <= budget_mb ? "ok" : "OVER");
}

std::vector<StTensor> small_model(uint64_t bytes_each) {
  std::vector<StTensor> out;
  for (int i = 0; i < 16; ++i)
    out.emplace_back(fmt::format("model.layers.{}.weight", i), "BF16",
                     std::vector<int64_t>{static_cast<int64_t>(bytes_each / 2 / 1024), 1024}, std::vector<uint8_t>{},
                     bytes_each);
  return out;
}

}   // namespace

int main(int argc, char** argv) {
  std::string root = argc > 1 ? argv[1] : (std::filesystem::temp_directory_path() / "akview_st_bench").string();
  std::filesystem::create_directories(root);
  akview::testing::StWriteOptions sparse;
  sparse.sparse = true;

  const std::string million = root + "/million.safetensors";
  if (!akview::bench::write_million_safetensors(million)) return 1;
  const std::string sharded = root + "/sharded";
  std::filesystem::create_directories(sharded);
  if (!akview::bench::write_sharded_safetensors(sharded)) return 1;
  const std::string small = root + "/small_1mb.safetensors", huge = root + "/small_1tb.safetensors";
  if (!akview::testing::write_safetensors(small, small_model(uint64_t{1} << 16), sparse)) return 1;
  if (!akview::testing::write_safetensors(huge, small_model(uint64_t{1} << 36), sparse)) return 1;

  std::printf("SafeTensors open benchmark (median of 3 forked runs; files in %s)\n", root.c_str());
  report("1M tensors, 1 file", million);
  report("163 shards + index", sharded);
  report("small model, 1 MB", small);
  report("small model, 1 TB sparse", huge);
  if (!(argc > 2 && std::string(argv[2]) == "--keep")) std::filesystem::remove_all(root);
  return 0;
}
