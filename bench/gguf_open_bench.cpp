// Opening a 100,000-tensor GGUF: wall time (min and median of 3), MB/s of header parsed and peak
// RSS. The file is sparse (header written, data extended with ftruncate), so it costs no disk;
// each open runs in a forked child so ru_maxrss measures that open alone.
// Targets: >= 300 MB/s of header, peak RSS <= 2 x header + 64 MB.
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

#include "bench/fixtures.hpp"
#include "core/formats/format.hpp"

namespace {

constexpr int kRuns = 3;

struct Run {
  double seconds = 0;
  double cpu_seconds = 0;   // user + sys of the whole child: less sensitive to a busy host than wall time
  long max_rss_kb = 0;
  uint64_t header_bytes = 0;
  uint64_t tensors = 0;
};

// Opens and lists the model in a child; the child reports time and header size through a pipe.
Run open_in_child(const std::string& path) {
  int fds[2];
  if (pipe(fds) != 0) std::exit(1);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Run r;
    auto t0 = std::chrono::steady_clock::now();
    auto model = akview::open_model(path);
    if (!model) {
      std::fprintf(stderr, "%s\n", model.error().to_string().c_str());
      _exit(2);
    }
    uint64_t listed = 0;   // "list": visit every tensor's name, type, shape and size
    for (const auto& t : model->tensors)
      listed += t.name.size() + static_cast<uint64_t>(t.type) + model->n_elements(t) + t.nbytes;
    auto t1 = std::chrono::steady_clock::now();
    r.seconds = std::chrono::duration<double>(t1 - t0).count();
    r.header_bytes = model->files[0].header_bytes;
    r.tensors = model->tensors.size() + (listed == 0);
    if (write(fds[1], &r, sizeof r) != sizeof r) _exit(3);
    _exit(0);
  }
  close(fds[1]);
  Run r;
  if (read(fds[0], &r, sizeof r) != sizeof r) r.seconds = -1;
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || r.seconds < 0) {
    std::fprintf(stderr, "child failed (status %d)\n", status);
    std::exit(1);
  }
  r.max_rss_kb = usage.ru_maxrss;
  r.cpu_seconds =
      usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + 1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  return r;
}

}   // namespace

int main() {
  namespace fs = std::filesystem;
  std::string dir_template = (fs::temp_directory_path() / "akview_gguf_bench_XXXXXX").string();
  if (!mkdtemp(dir_template.data())) return 1;
  const std::string path = dir_template + "/bench-100k.gguf";

  if (!akview::bench::write_100k_gguf(path)) return 1;

  std::vector<Run> runs;
  for (int i = 0; i < kRuns; ++i) runs.push_back(open_in_child(path));
  std::vector<double> times, cpu;
  long max_rss_kb = 0;
  for (const auto& r : runs) {
    times.push_back(r.seconds);
    cpu.push_back(r.cpu_seconds);
    max_rss_kb = std::max(max_rss_kb, r.max_rss_kb);
  }
  std::sort(times.begin(), times.end());
  std::sort(cpu.begin(), cpu.end());
  const double median = times[times.size() / 2];
  const double header_mb = static_cast<double>(runs[0].header_bytes) / 1e6;
  const double rss_mb = static_cast<double>(max_rss_kb) / 1024.0;
  const double rss_limit_mb = 2 * header_mb + 64;
  const uint64_t file_bytes = fs::file_size(path);

  std::printf("gguf_open_bench: %llu tensors, %d-token vocabulary, header %.2f MB, file %.1f GB (sparse)\n",
              static_cast<unsigned long long>(runs[0].tensors), akview::bench::kGgufVocab, header_mb, file_bytes / 1e9);
  std::printf("open + list: min %.1f ms, median %.1f ms (%d runs)\n", times.front() * 1e3, median * 1e3, kRuns);
  std::printf("header throughput (median): %.0f MB/s (target >= 300); best %.0f MB/s\n", header_mb / median,
              header_mb / times.front());
  std::printf("child CPU time (median, whole process incl. exit): %.1f ms\n", cpu[cpu.size() / 2] * 1e3);
  std::printf("peak RSS: %.1f MB (target <= 2 x header + 64 = %.1f MB)\n", rss_mb, rss_limit_mb);
  fs::remove_all(dir_template);
  return 0;
}
