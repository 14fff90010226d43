// What a user waits for when listing: the real akview binary run as a child on the open benchmarks'
// fixtures (bench/fixtures.hpp) for each command and output format, stdout to /dev/null. Reports the
// wall time (median of N runs), the peak RSS of the whole process (wait4's ru_maxrss, the largest of
// the N), header MB/s of that wall time, and beside them the in-process open time (open_model in a
// forked child, as st_open_bench and gguf_open_bench measure it).
// Targets: `tensors --json` >= 300 MB/s of header on the 1M-tensor file; peak RSS <=
// 2 x header + 64 MB for every fixture and format (diff reads two models: 2 x both headers + 64 MB).
// Figures before and after streaming: README.md, "Benchmarks".
// Usage: list_process_bench [--akview PATH] [--runs N] [--dir DIR] [--keep] [--only SUBSTRING]
#include <fcntl.h>
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
#include "bench/process_run.hpp"
#include "core/formats/format.hpp"

namespace {

using akview::bench::median;
using akview::bench::ProcessRun;
using akview::bench::run_process;

struct Fixture {
  std::string label;
  std::string path;
  uint64_t header_bytes = 0;
  double open_seconds = 0;   // in-process open_model, median
};

struct Command {
  std::vector<std::string> args;   // PATH stands for the fixture
  std::string label;
  int sides = 1;   // models read (diff: 2)
};

// Opens `path` in a child: seconds and header bytes through a pipe (0 header bytes: failed).
std::pair<double, uint64_t> open_in_child(const std::string& path) {
  int fds[2];
  if (pipe(fds) != 0) return {0, 0};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::pair<double, uint64_t> r{0, 0};
    const auto t0 = std::chrono::steady_clock::now();
    auto model = akview::open_model(path);
    r.first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (model)
      for (const auto& f : model->files) r.second += f.header_bytes;
    if (write(fds[1], &r, sizeof r) != sizeof r) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  std::pair<double, uint64_t> r{0, 0};
  if (read(fds[0], &r, sizeof r) != sizeof r) r = {0, 0};
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  return r;
}

}   // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::string binary = AKVIEW_BINARY, only;
  std::string root = (fs::temp_directory_path() / "akview_list_bench").string();
  int runs = 3;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--akview" && i + 1 < argc) binary = argv[++i];
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--dir" && i + 1 < argc) root = argv[++i];
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--keep") keep = true;
    else {
      std::fprintf(stderr,
                   "usage: list_process_bench [--akview PATH] [--runs N] [--dir DIR] [--keep] [--only SUBSTRING]\n");
      return 2;
    }
  }
  fs::create_directories(root);
  std::vector<Fixture> fixtures = {{"st 1M tensors", root + "/million.safetensors"},
                                   {"st 163 shards", root + "/sharded"},
                                   {"gguf 100k tensors", root + "/bench-100k.gguf"}};
  // Written once and kept between runs of the bench when --dir names the same folder.
  if (!fs::exists(fixtures[0].path) && !akview::bench::write_million_safetensors(fixtures[0].path)) return 1;
  if (!fs::exists(fixtures[1].path + "/model.safetensors.index.json")) {
    fs::create_directories(fixtures[1].path);
    if (!akview::bench::write_sharded_safetensors(fixtures[1].path)) return 1;
  }
  if (!fs::exists(fixtures[2].path) && !akview::bench::write_100k_gguf(fixtures[2].path)) return 1;

  const std::vector<Command> commands = {
      {{"tensors", "PATH"}, "tensors text"},
      {{"tensors", "PATH", "--csv"}, "tensors csv"},
      {{"tensors", "PATH", "--json"}, "tensors json"},
      {{"map", "PATH", "--json"}, "map json"},
      {{"diff", "PATH", "PATH", "--no-values", "--json"}, "diff json", 2},   // values would decode every byte
  };
  std::printf("akview listing, whole process (%s; median of %d runs, peak RSS the largest)\n", binary.c_str(), runs);
  std::printf("%-18s %-13s %9s %9s %10s %10s %10s %9s %6s\n", "fixture", "command", "header", "open ms", "wall ms",
              "cpu ms", "MB/s", "RSS MB", "budget");
  for (auto& f : fixtures) {
    std::vector<double> open_times;
    for (int i = 0; i < runs; ++i) {
      auto [seconds, header] = open_in_child(f.path);
      if (!header) {
        std::printf("%-18s cannot open %s\n", f.label.c_str(), f.path.c_str());
        return 1;
      }
      open_times.push_back(seconds);
      f.header_bytes = header;
    }
    f.open_seconds = median(open_times);
    for (const auto& c : commands) {
      if (!only.empty() && (f.label + " " + c.label).find(only) == std::string::npos) continue;
      std::vector<std::string> args;
      for (const auto& a : c.args) args.push_back(a == "PATH" ? f.path : a);
      std::vector<double> times, cpu;
      long rss_kb = 0;
      bool ok = true;
      for (int i = 0; i < runs; ++i) {
        ProcessRun r = run_process(binary, args);
        ok = ok && r.ok;
        times.push_back(r.seconds);
        cpu.push_back(r.cpu_seconds);
        rss_kb = std::max(rss_kb, r.max_rss_kb);
      }
      const double header_mb = f.header_bytes / 1e6, wall = median(times), rss_mb = rss_kb / 1024.0;
      const double budget_mb = 2 * header_mb * c.sides + 64;
      std::printf("%-18s %-13s %6.1f MB %9.1f %10.1f %10.1f %10.1f %9.1f %6.0f %s%s\n", f.label.c_str(),
                  c.label.c_str(), header_mb, f.open_seconds * 1e3, wall * 1e3, median(cpu) * 1e3,
                  header_mb * c.sides / wall, rss_mb, budget_mb, rss_mb <= budget_mb ? "ok" : "OVER",
                  ok ? "" : "  (FAILED: nonzero exit)");
      std::fflush(stdout);
    }
  }
  if (!keep) fs::remove_all(root);
  return 0;
}
