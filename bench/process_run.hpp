// A child process timed as a user waits for it: wall time from fork to exit, user + sys CPU time and
// the peak RSS (wait4's rusage), stdout and stderr on /dev/null; and the median the benchmarks report.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace akview::bench {

struct ProcessRun {
  double seconds = 0;
  double cpu_seconds = 0;   // user + sys: less sensitive than wall time to a busy host
  long max_rss_kb = 0;
  bool ok = false;   // exited with 0
};

// Runs `binary args...`.
inline ProcessRun run_process(const std::string& binary, const std::vector<std::string>& args) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> argv{const_cast<char*>(binary.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  ProcessRun r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.max_rss_kb = usage.ru_maxrss;
  r.cpu_seconds =
      usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + 1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return r;
}

// The middle value (the upper one of an even count); 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}   // namespace akview::bench
