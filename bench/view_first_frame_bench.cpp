// The interactive view's first frame, whole process, against `akview info` on the same file: the
// real akview binary on a pty (forkpty, 120x40, TERM=xterm-256color) until the model's first frame
// (its tab bar, " 1 Tensors ") has been written, then q; and `akview info PATH` (stdout to
// /dev/null) until it exits. Runs alternate (info, view, info, view, ...) so a busy host weighs on
// both alike; medians. Fixture: the 1,000,000-tensor SafeTensors file of bench/fixtures.hpp.
// Target: the view's first frame within 150 ms of `info` (the view may only add drawing).
// Usage: view_first_frame_bench [--akview PATH] [--runs N] [--dir DIR] [--keep]
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/fixtures.hpp"
#include "bench/process_run.hpp"

namespace {

using akview::bench::median;
using akview::bench::ProcessRun;
using akview::bench::run_process;

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// `akview info PATH`: ms until it exited (-1: it failed).
double run_info(const std::string& binary, const std::string& path) {
  const ProcessRun r = run_process(binary, {"info", path});
  return r.ok ? r.seconds * 1e3 : -1;
}

struct ViewRun {
  double first_frame_ms = -1;   // fork to the model's first frame written
  double quit_ms = -1;          // q to the process gone
};

// `akview PATH` on a pty until the model's tab bar has been written, then q.
ViewRun run_view(const std::string& binary, const std::string& path) {
  ViewRun r;
  winsize ws{};
  ws.ws_row = 40;
  ws.ws_col = 120;
  int master = -1;
  const auto t0 = Clock::now();
  const pid_t pid = forkpty(&master, nullptr, nullptr, &ws);
  if (pid < 0) return r;
  if (pid == 0) {
    setenv("TERM", "xterm-256color", 1);
    setenv("LANG", "C.UTF-8", 1);
    setenv("LC_ALL", "C.UTF-8", 1);
    unsetenv("LINES");
    unsetenv("COLUMNS");
    unsetenv("AKVIEW_TEST_SYNC");
    execl(binary.c_str(), binary.c_str(), path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string out;
  const std::string needle = " 1 Tensors ";
  char buf[65536];
  while (ms_since(t0) < 60'000) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;
    // Only the tail can hold a needle cut between two reads.
    const size_t from = out.size() >= needle.size() ? out.size() - needle.size() : 0;
    out.append(buf, static_cast<size_t>(n));
    if (out.find(needle, from) != std::string::npos) {
      r.first_frame_ms = ms_since(t0);
      break;
    }
  }
  const auto t_quit = Clock::now();
  if (write(master, "q", 1) != 1) kill(pid, SIGKILL);
  for (;;) {   // drain until the child closes the pty
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 10'000) <= 0) {
      kill(pid, SIGKILL);
      break;
    }
    if (read(master, buf, sizeof buf) <= 0) break;
  }
  waitpid(pid, nullptr, 0);
  r.quit_ms = ms_since(t_quit);
  close(master);
  return r;
}

}   // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::string binary = AKVIEW_BINARY;
  std::string root = (fs::temp_directory_path() / "akview_view_first_frame_bench").string();
  int runs = 5;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--akview" && i + 1 < argc) binary = argv[++i];
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--dir" && i + 1 < argc) root = argv[++i];
    else if (a == "--keep") keep = true;
    else {
      std::fprintf(stderr, "usage: view_first_frame_bench [--akview PATH] [--runs N] [--dir DIR] [--keep]\n");
      return 2;
    }
  }
  fs::create_directories(root);
  const std::string path = root + "/million.safetensors";
  if (!fs::exists(path) && !akview::bench::write_million_safetensors(path)) return 1;
  // One of each first, not counted: the file's pages and the binary in the page cache for both.
  run_info(binary, path);
  run_view(binary, path);
  std::vector<double> info, frame, quit;
  for (int i = 0; i < runs; ++i) {
    const double ms = run_info(binary, path);
    const ViewRun v = run_view(binary, path);
    if (ms < 0 || v.first_frame_ms < 0) {
      std::printf("FAILED: info %.1f ms, view first frame %.1f ms\n", ms, v.first_frame_ms);
      return 1;
    }
    info.push_back(ms);
    frame.push_back(v.first_frame_ms);
    quit.push_back(v.quit_ms);
    std::printf("  run %d: info %8.1f ms   view first frame %8.1f ms   q to exit %7.1f ms\n", i + 1, ms,
                v.first_frame_ms, v.quit_ms);
    std::fflush(stdout);
  }
  const double d = median(frame) - median(info);
  std::printf("1,000,000-tensor SafeTensors, whole process, median of %d (%s)\n", runs, binary.c_str());
  std::printf("  akview info          %8.1f ms\n", median(info));
  std::printf("  view first frame     %8.1f ms   (+%.1f ms over info; target <= 150: %s)\n", median(frame), d,
              d <= 150 ? "ok" : "OVER");
  std::printf("  view q to exit       %8.1f ms\n", median(quit));
  if (!keep) fs::remove_all(root);
  return 0;
}
