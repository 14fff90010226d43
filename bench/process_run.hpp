// A child process timed as a user waits for it: wall time from fork to exit, user + sys CPU time and
// the peak RSS (wait4's rusage), stdout and stderr on /dev/null; and the median the benchmarks report.
// The child is started through bench/spawn_rss.cpp, a small process of its own: forked straight from
// a benchmark, its peak RSS would count the benchmark's resident pages too.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace akview::bench {

struct ProcessRun {
  double seconds = 0;
  double cpu_seconds = 0;   // user + sys: less sensitive than wall time to a busy host
  long max_rss_kb = 0;
  bool ok = false;   // exited with 0
};

// Runs `binary args...`; ok is false where it did not exit with 0 or could not be started.
inline ProcessRun run_process(const std::string& binary, const std::vector<std::string>& args) {
  int report[2];
  if (pipe(report) != 0) return {};
  const std::string fd = std::to_string(report[1]);
  std::vector<char*> argv{const_cast<char*>(AKVIEW_SPAWN_RSS), const_cast<char*>(fd.c_str()),
                          const_cast<char*>(binary.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(report[0]);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execv(AKVIEW_SPAWN_RSS, argv.data());
    _exit(127);
  }
  close(report[1]);
  std::string line;
  char buf[256];
  for (ssize_t n; (n = read(report[0], buf, sizeof buf)) > 0;) line.append(buf, static_cast<size_t>(n));
  close(report[0]);
  int starter = 0;
  waitpid(pid, &starter, 0);
  ProcessRun r;
  int status = -1;
  if (!WIFEXITED(starter) || WEXITSTATUS(starter) != 0 ||
      std::sscanf(line.c_str(), "%lf %lf %ld %d", &r.seconds, &r.cpu_seconds, &r.max_rss_kb, &status) != 4)
    return {};
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
